"""``manage.py deviceconfig publish|drift|adopt|rollback``: the exit codes scripts rely on."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command

from apps.inventory.models import DeviceConfigVersion, Template
from tests.guide import POD_310P

pytestmark = pytest.mark.django_db


def _run(*args: str) -> tuple[int, str, str]:
    out, err = StringIO(), StringIO()
    try:
        call_command("deviceconfig", *args, stdout=out, stderr=err)
    except SystemExit as exc:
        return int(exc.code or 0), out.getvalue(), err.getvalue()
    return 0, out.getvalue(), err.getvalue()


def test_publish_drift_adopt_rollback(cluster, live_text, hand_edit):
    # given a cluster in sync: drift exits 0
    code, out, _ = _run("drift", "--cluster", "sim")
    assert code == 0
    assert "in sync with version 1" in out
    # nothing edited: publish is a no-op that does not fail a script
    code, out, _ = _run("publish", "--cluster", "sim", "--reason", "noop")
    assert code == 0
    assert "nothing to publish" in out
    # an edit publishes, with the diff
    Template.objects.filter(chip_type__cluster=cluster, name="vir01").update(
        memory=4096
    )
    # it resizes the template a running pod holds: refused until it is named
    code, _, err = _run("publish", "--cluster", "sim", "--reason", "ci")
    assert code == 1
    assert "breaks 1 running slice(s): default/npu-pod-310p" in err
    assert "--confirm-breaking-template COMMONWORD/TEMPLATE" in err
    # accepted by its template (whichever pods run it)
    code, out, _ = _run(
        "publish",
        "--cluster",
        "sim",
        "--reason",
        "ci",
        "--confirm-breaking-template",
        "Ascend310P/vir01",
    )
    assert code == 0
    assert "published version 2" in out
    assert "+    memory: 4096" in out
    assert "memory: 4096" in live_text()
    # a hand edit: drift exits 1 with the diff, publish exits 1 with both diffs
    hand = live_text().replace("memory: 12288", "memory: 12000")
    hand_edit(hand)
    code, out, _ = _run("drift", "--cluster", "sim")
    assert code == 1
    assert "+    memory: 12000" in out
    Template.objects.filter(chip_type__cluster=cluster, name="vir02").update(
        memory=7168
    )
    code, _, err = _run("publish", "--cluster", "sim", "--reason", "ci")
    assert code == 1
    assert "conflict" in err
    assert "+    memory: 12000" in err
    assert "+    memory: 7168" in err
    assert live_text() == hand
    # adopt takes the live content; drift is clean again
    code, out, _ = _run("adopt", "--cluster", "sim")
    assert code == 0
    assert "adopted the live device config as version 3" in out
    assert _run("drift", "--cluster", "sim")[0] == 0
    # rollback to v1 republishes its text
    v1 = DeviceConfigVersion.objects.get(cluster=cluster, number=1).text
    code, out, _ = _run(
        "rollback", "--cluster", "sim", "--version", "1", "--reason", "undo"
    )
    assert code == 0
    assert "published version 4" in out
    assert live_text() == v1


def test_publish_force_over_drift(cluster, live_text, hand_edit):
    hand_edit(live_text().replace("memory: 12288", "memory: 12000"))
    Template.objects.filter(chip_type__cluster=cluster, name="vir01").update(
        memory=4096
    )
    code, _, _ = _run(
        "publish",
        "--cluster",
        "sim",
        "--reason",
        "mine",
        "--force",
        "--confirm-breaking",
        POD_310P,
    )
    assert code == 0
    assert "memory: 12288" in live_text()
    assert "memory: 4096" in live_text()
