"""A publish killed right after its ConfigMap PUT: the next one records it and goes on.

The publisher is a real ``manage.py deviceconfig publish`` process, killed with
SIGKILL at the crash hook ``after_configmap_put`` (the write landed, nothing
was recorded). The next publish must see the live text as the portal's own
write (its pending-write row), record it as the published version it was
meant to be, and publish on top: no 409 drift, no adopt.
"""

from __future__ import annotations

import signal
import subprocess
import sys

import pytest

from apps.audit.models import AuditEvent
from apps.inventory.choices import DeviceConfigSource
from apps.inventory.models import (
    DeviceConfigPendingWrite,
    DeviceConfigVersion,
    Template,
)
from tests.guide import POD_310P
from tests.inventory.publishing.manage_subprocess import ROOT, child_env

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


def _publish_killed_after_put(
    reason: str, *extra: str
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "manage.py",
            "deviceconfig",
            "publish",
            "--cluster",
            "sim",
            "--reason",
            reason,
            *extra,
        ],
        cwd=ROOT,
        env=child_env(VNPU_PORTAL_CRASH_AT="after_configmap_put"),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _history(cluster) -> list[tuple[int, str, str]]:
    return list(
        DeviceConfigVersion.objects.filter(cluster=cluster)
        .order_by("number")
        .values_list("number", "source", "reason")
    )


def test_publish_killed_after_put_next_publish_succeeds_without_adopt(
    cluster, live_text, admin_client_api
):
    # given an edit the first publisher writes and then dies (of a template
    # no running pod holds: the publish breaks none)
    Template.objects.filter(chip_type__cluster=cluster, name="vir04").update(
        memory=9216
    )
    done = _publish_killed_after_put("first, killed")
    assert done.returncode == -signal.SIGKILL, done.stdout + done.stderr
    written = live_text()
    assert "memory: 9216" in written
    assert _history(cluster) == [
        (1, DeviceConfigSource.ADOPTED, _history(cluster)[0][2])
    ]
    assert DeviceConfigPendingWrite.objects.filter(cluster=cluster).count() == 1

    # when someone edits again and publishes
    Template.objects.filter(chip_type__cluster=cluster, name="vir02").update(
        memory=7168
    )
    answer = admin_client_api.post(
        f"/api/clusters/{cluster.pk}/publish/", {"reason": "second"}, format="json"
    )

    # then it went through, on top of the first publish, which the history shows
    assert answer.status_code == 201, answer.json()
    assert answer.json()["number"] == 3
    history = _history(cluster)
    assert history[1:] == [
        (2, DeviceConfigSource.PUBLISHED, "first, killed"),
        (3, DeviceConfigSource.PUBLISHED, "second"),
    ]
    assert DeviceConfigVersion.objects.get(cluster=cluster, number=2).text == written
    live = live_text()
    assert "memory: 9216" in live
    assert "memory: 7168" in live
    assert not DeviceConfigPendingWrite.objects.filter(cluster=cluster).exists()
    recovered = AuditEvent.objects.get(
        action="deviceconfig.publish", reason="first, killed"
    )
    assert recovered.after["recovered"] is True


def test_a_break_the_killed_publish_confirmed_is_not_asked_again(
    cluster, live_text, admin_client_api
):
    # given a killed publish that resized the template a running pod holds,
    # with that pod named as it must be
    Template.objects.filter(chip_type__cluster=cluster, name="vir01").update(
        memory=4096
    )
    done = _publish_killed_after_put("resize, killed", "--confirm-breaking", POD_310P)
    assert done.returncode == -signal.SIGKILL, done.stdout + done.stderr
    assert "memory: 4096" in live_text()

    # when the next publish changes something else, naming nobody
    Template.objects.filter(chip_type__cluster=cluster, name="vir02").update(
        memory=7168
    )
    answer = admin_client_api.post(
        f"/api/clusters/{cluster.pk}/publish/", {"reason": "next"}, format="json"
    )

    # then the killed write is its baseline: the live break is not blamed on it
    assert answer.status_code == 201, answer.json()
    assert answer.json()["number"] == 3


def test_sync_after_a_killed_publish_records_it_as_published(
    cluster, live_text, resync
):
    # given a publisher killed after its PUT
    Template.objects.filter(chip_type__cluster=cluster, name="vir04").update(
        memory=9216
    )
    assert _publish_killed_after_put("killed").returncode == -signal.SIGKILL

    # when sync sees the new text
    resync()

    # then it is the portal's publish, not a hand edit (no observed version, no drift)
    assert _history(cluster)[1:] == [(2, DeviceConfigSource.PUBLISHED, "killed")]
    from apps.inventory.deviceconfig.liveconfig import deviceconfig_drift

    assert deviceconfig_drift(cluster)["in_sync"]
    assert deviceconfig_drift(cluster, live=False)["in_sync"]
