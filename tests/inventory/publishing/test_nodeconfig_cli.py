"""``manage.py nodeconfig import|publish|export|drift|adopt|rollback`` on the
simulated ``nodeconfig`` cluster, and a publish killed right after its PUT
(a real ``manage.py`` process, SIGKILLed at the crash hook
``after_configmap_put``): settled as the portal's own write, never drift."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from apps.audit.models import AuditEvent
from apps.inventory.models import NodeConfigPendingWrite, NodeConfigVersion
from simcluster import guide_data
from tests.inventory.publishing.manage_subprocess import ROOT, child_env

pytestmark = pytest.mark.django_db(transaction=True)

CM, NS, KEY = "hami-device-node-config", "kube-system", "node-config.yaml"
NODE_310P = guide_data.NODE_310P


@pytest.fixture
def sim_options() -> dict[str, Any]:
    return {"scenario": "nodeconfig"}


@pytest.fixture
def node_text(kubectl: Callable[..., str]) -> Callable[[], str]:
    def read() -> str:
        cm = json.loads(kubectl("get", "cm", CM, "-n", NS, "-o", "json"))
        return str(cm["data"][KEY])

    return read


def _run(capsys, *args: str) -> tuple[int, str, str]:
    try:
        call_command("nodeconfig", *args)
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    except CommandError as exc:
        out = capsys.readouterr()
        return 1, out.out, out.err + str(exc)
    out = capsys.readouterr()
    return code, out.out, out.err


def _with_310p_entry(text: str) -> str:
    return text + f"  - name: {NODE_310P}\n    hami-vnpu-core: false\n"


def _history(cluster) -> list[tuple[int, str, str]]:
    return list(
        NodeConfigVersion.objects.filter(cluster=cluster)
        .order_by("number")
        .values_list("number", "source", "reason")
    )


def test_import_records_a_draft_and_writes_nothing(
    cluster, node_text, tmp_path, capsys
):
    live = node_text()
    path = tmp_path / "node-config.yaml"
    path.write_text(_with_310p_entry(live))
    code, out, err = _run(
        capsys, "import", str(path), "--cluster", "sim", "--reason", "draft"
    )
    assert code == 0, err
    assert "as version 2 of cluster sim (nothing was written" in out
    assert _history(cluster)[-1] == (2, "imported", "draft")
    assert node_text() == live
    # an invalid file is refused with its path, nothing stored
    path.write_text("nodes:\n- name: npu-node-310p-01\n  vDeviceCount: '8'\n")
    code, _, err = _run(capsys, "import", str(path), "--cluster", "sim")
    assert code == 1
    assert "error: nodes[0].vDeviceCount: must be an integer" in err
    assert len(_history(cluster)) == 2


def test_publish_export_drift_adopt_and_exit_codes(
    cluster, node_text, kubectl, tmp_path, capsys, resync
):
    live = node_text()
    path = tmp_path / "node-config.yaml"
    path.write_text(_with_310p_entry(live))
    # without --yes, the live file's old warnings refuse it (exit 1)
    code, _, err = _run(
        capsys, "publish", str(path), "--cluster", "sim", "--reason", "310p mode"
    )
    assert code == 1
    assert "add --yes" in err
    assert node_text() == live
    # with --yes it is written and recorded
    code, out, err = _run(
        capsys,
        "publish",
        str(path),
        "--cluster",
        "sim",
        "--reason",
        "310p mode",
        "--yes",
    )
    assert code == 0, err
    assert "published version 2" in out
    assert node_text() == path.read_text()
    assert AuditEvent.objects.get(action="nodeconfig.publish").actor_name == "manage.py"
    # the same again changes nothing: exit 0
    code, out, _ = _run(
        capsys, "publish", str(path), "--cluster", "sim", "--reason", "again", "--yes"
    )
    assert code == 0
    assert "nothing to publish" in out
    # export prints what sync mirrored
    resync()
    code, out, _ = _run(capsys, "export", "--cluster", "sim")
    assert out == path.read_text()
    # a hand edit: drift exits 1 with the diff, a publish over it exits 1, adopt settles it
    kubectl(
        "patch", "cm", CM, "-n", NS, "--type", "merge",
        "-p", json.dumps({"data": {KEY: live}}),
    )  # fmt: skip
    code, out, _ = _run(capsys, "drift", "--cluster", "sim")
    assert code == 1
    assert f"-  - name: {NODE_310P}" in out
    code, _, err = _run(
        capsys, "publish", str(path), "--cluster", "sim", "--reason", "x", "--yes"
    )
    assert code == 1
    assert "conflict:" in err
    code, out, _ = _run(capsys, "adopt", "--cluster", "sim", "--reason", "by hand")
    assert code == 0
    assert "adopted the live node config as version 3" in out
    code, out, _ = _run(capsys, "drift", "--cluster", "sim")
    assert code == 0
    assert "in sync with version 3" in out
    # rollback publishes version 2 again
    code, out, err = _run(
        capsys,
        "rollback",
        "--cluster",
        "sim",
        "--version",
        "2",
        "--reason",
        "r",
        "--yes",
    )
    assert code == 0, err
    assert node_text() == path.read_text()
    # a stale expected version exits 1, nothing written
    other = tmp_path / "other.yaml"
    other.write_text(live)
    code, _, err = _run(
        capsys, "publish", str(other), "--cluster", "sim", "--reason", "s",
        "--yes", "--expected-version", "1",
    )  # fmt: skip
    assert code == 1
    assert "conflict:" in err
    assert "not v1" in err
    assert node_text() == path.read_text()


def _publish_killed_after_put(
    path: str, reason: str
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable, "manage.py", "nodeconfig", "publish", path,
            "--cluster", "sim", "--reason", reason, "--yes",
        ],
        cwd=ROOT,
        env=child_env(VNPU_PORTAL_CRASH_AT="after_configmap_put"),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )  # fmt: skip


@pytest.mark.slow
def test_a_publish_killed_after_its_put_is_settled_not_drift(
    cluster, node_text, tmp_path, operator_client, resync
):
    # given a publisher that wrote the ConfigMap and died before recording it
    path = tmp_path / "node-config.yaml"
    path.write_text(_with_310p_entry(node_text()))
    done = _publish_killed_after_put(str(path), "killed")
    assert done.returncode == -signal.SIGKILL, done.stdout + done.stderr
    assert node_text() == path.read_text()
    assert [n for n, _, _ in _history(cluster)] == [1]
    assert NodeConfigPendingWrite.objects.filter(cluster=cluster).count() == 1

    # when the next publish comes, based on the version it saw (v1)
    stale = operator_client.post(
        f"/api/clusters/{cluster.pk}/node-config/publish/",
        {"reason": "next", "expected_version": 1, "confirm_warnings": True,
         "nodes": [{"name": NODE_310P, "hami_vnpu_core": True}]},
        format="json",
    )  # fmt: skip
    # then the killed write is settled as the portal's own v2 (no drift, no
    # adopt), and that publish is stale against it
    assert stale.status_code == 409
    assert stale.json()["code"] == "stale_version"
    assert _history(cluster)[1] == (2, "published", "killed")
    assert not NodeConfigPendingWrite.objects.filter(cluster=cluster).exists()
    assert AuditEvent.objects.get(action="nodeconfig.publish", reason="killed").after[
        "recovered"
    ]
    resync()  # sync sees the settled text: nothing new
    assert len(_history(cluster)) == 2
    again = operator_client.post(
        f"/api/clusters/{cluster.pk}/node-config/publish/",
        {"reason": "next", "expected_version": 2, "confirm_warnings": True,
         "nodes": [{"name": NODE_310P, "hami_vnpu_core": True}]},
        format="json",
    )  # fmt: skip
    assert again.status_code == 201, again.json()
    assert again.json()["number"] == 3


@pytest.mark.slow
def test_sync_after_a_killed_publish_records_it_as_published(
    cluster, node_text, tmp_path, operator_client, resync
):
    path = tmp_path / "node-config.yaml"
    path.write_text(_with_310p_entry(node_text()))
    assert _publish_killed_after_put(str(path), "killed").returncode == -signal.SIGKILL
    resync()
    assert _history(cluster) == [
        (1, "adopted", _history(cluster)[0][2]),
        (2, "published", "killed"),
    ]
    state = operator_client.get(f"/api/clusters/{cluster.pk}/node-config/").json()
    assert state["drift"]["in_sync"]
    assert state["baseline_version"] == 2
