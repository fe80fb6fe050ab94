"""kubectl against the simulator: discovery, apply, patch, watch, rollout, errors."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

CONFIGMAP = """\
apiVersion: v1
kind: ConfigMap
metadata:
  name: demo
  namespace: default
data:
  a: "{value}"
"""


def _ok(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 0, result.stderr
    return result.stdout


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("get", "nodes"), ["npu-node-310p-01", "npu-node-910b-01"]),
        (
            ("get", "pods", "-A"),
            ["npu-pod-310p", "npu-pod-910b", "hami-ascend-device-plugin-"],
        ),
        (("get", "cm", "-A"), ["hami-scheduler-device", "volcano-scheduler-configmap"]),
        (("get", "ds", "-n", "kube-system"), ["hami-ascend-device-plugin"]),
        (("get", "deploy", "-A"), ["volcano-scheduler", "hami-scheduler"]),
        (
            ("get", "priorityclasses"),
            ["inference-high", "batch-low", "system-node-critical"],
        ),
        (("get", "queues.scheduling.volcano.sh"), ["default", "root"]),
        (("get", "pdb,podgroups", "-A"), []),
    ],
)
def test_kubectl_get(kubectl, args: tuple[str, ...], expected: list[str]) -> None:
    out = _ok(kubectl(*args))
    for name in expected:
        assert name in out


def test_kubectl_get_json_has_fixture_annotations(kubectl) -> None:
    pod = json.loads(_ok(kubectl("get", "pod", "npu-pod-910b", "-o", "json")))
    annotations = pod["metadata"]["annotations"]
    assert annotations["hami.io/Ascend910B4-devices-allocated"] == (
        "8F6D0558-D0EDA82F-AE97BA94-2E44158B-1A61DBE2,Ascend910B4,8192,0:;"
    )
    assert pod["spec"]["priority"] == 100000


def test_kubectl_label_selector_and_field_selector(kubectl) -> None:
    out = _ok(kubectl("get", "pods", "-A", "-l", "app in (npu-pod-310p)", "-o", "name"))
    assert out.split() == ["pod/npu-pod-310p"]
    out = _ok(
        kubectl(
            "get",
            "pods",
            "-A",
            "--field-selector",
            "spec.nodeName=npu-node-910b-01",
            "-o",
            "name",
        )
    )
    assert "pod/npu-pod-910b" in out.split()
    assert "pod/npu-pod-310p" not in out.split()


def test_kubectl_apply_twice_then_patch_label_annotate(kubectl, tmp_path: Path) -> None:
    manifest = tmp_path / "cm.yaml"
    manifest.write_text(CONFIGMAP.format(value="1"))
    assert "created" in _ok(kubectl("apply", "-f", str(manifest)))
    manifest.write_text(CONFIGMAP.format(value="2"))
    assert "configured" in _ok(kubectl("apply", "-f", str(manifest)))
    _ok(kubectl("patch", "cm", "demo", "-p", '{"data":{"b":"strategic"}}'))
    _ok(
        kubectl(
            "patch", "cm", "demo", "--type", "merge", "-p", '{"data":{"c":"merge"}}'
        )
    )
    _ok(
        kubectl(
            "patch",
            "cm",
            "demo",
            "--type",
            "json",
            "-p",
            '[{"op":"replace","path":"/data/a","value":"json"}]',
        )
    )
    _ok(kubectl("label", "cm", "demo", "tier=gold"))
    _ok(kubectl("annotate", "cm", "demo", "owner=ops"))
    cm = json.loads(_ok(kubectl("get", "cm", "demo", "-o", "json")))
    assert cm["data"] == {"a": "json", "b": "strategic", "c": "merge"}
    assert cm["metadata"]["labels"] == {"tier": "gold"}
    assert cm["metadata"]["annotations"]["owner"] == "ops"
    applied = json.loads(
        cm["metadata"]["annotations"][
            "kubectl.kubernetes.io/last-applied-configuration"
        ]
    )
    assert applied["data"] == {"a": "2"}
    assert _ok(kubectl("get", "cm", "-l", "tier=gold", "-o", "name")).split() == [
        "configmap/demo"
    ]


def test_kubectl_strict_validation_rejects_unknown_field(
    kubectl, tmp_path: Path
) -> None:
    manifest = tmp_path / "bad.yaml"
    manifest.write_text(CONFIGMAP.format(value="1") + "bogus: 1\n")
    result = kubectl("apply", "-f", str(manifest))
    assert result.returncode != 0
    assert 'unknown field "bogus"' in result.stderr


def test_kubectl_strategic_patch_merges_containers_by_name(kubectl) -> None:
    patch = (
        '{"spec":{"template":{"spec":{"containers":'
        '[{"name":"volcano-scheduler","image":"volcanosh/vc-scheduler:v1.15.1"}]}}}}'
    )
    _ok(
        kubectl(
            "patch",
            "deployment",
            "volcano-scheduler",
            "-n",
            "volcano-system",
            "-p",
            patch,
        )
    )
    deploy = json.loads(
        _ok(
            kubectl(
                "get",
                "deploy",
                "volcano-scheduler",
                "-n",
                "volcano-system",
                "-o",
                "json",
            )
        )
    )
    containers = deploy["spec"]["template"]["spec"]["containers"]
    assert len(containers) == 1
    assert containers[0]["image"] == "volcanosh/vc-scheduler:v1.15.1"
    assert containers[0]["args"]  # kept from the stored container, not replaced


def test_kubectl_stale_replace_is_conflict(kubectl, tmp_path: Path) -> None:
    old = tmp_path / "old.json"
    old.write_text(
        _ok(
            kubectl(
                "get", "cm", "hami-scheduler-device", "-n", "kube-system", "-o", "json"
            )
        )
    )
    _ok(
        kubectl(
            "label", "cm", "hami-scheduler-device", "-n", "kube-system", "touched=yes"
        )
    )
    result = kubectl("replace", "-f", str(old))
    assert result.returncode != 0
    assert "Conflict" in result.stderr
    assert "the object has been modified" in result.stderr


GONE = (
    '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"gone"},"data":{"x":"1"}}'
)
LATE = GONE.replace("gone", "late")


def test_kubectl_delete_then_not_found(kubectl) -> None:
    _ok(kubectl("create", "-f", "-", stdin=GONE))
    _ok(kubectl("delete", "cm", "gone"))
    result = kubectl("get", "cm", "gone")
    assert result.returncode != 0
    assert "NotFound" in result.stderr
    _ok(
        kubectl("delete", "pod", "npu-pod-310p")
    )  # graceful; kubectl waits until it is gone
    assert "NotFound" in kubectl("get", "pod", "npu-pod-310p").stderr


def _watching_configmaps(sim) -> bool:
    return any(e.verb == "watch" and e.resource == "configmaps" for e in sim.audit)


def test_kubectl_get_watch_sees_change(
    kubectl, kubeconfig: Path, sim, wait_for
) -> None:
    watcher = subprocess.Popen(
        [
            "kubectl",
            "--kubeconfig",
            str(kubeconfig),
            "get",
            "cm",
            "-w",
            "--request-timeout=4s",
            "-o",
            "name",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    wait_for(lambda: _watching_configmaps(sim), timeout=10)  # kubectl's watch is open
    _ok(kubectl("create", "-f", "-", stdin=LATE))
    try:
        out, _ = watcher.communicate(timeout=10)
    finally:
        watcher.kill()
    assert "configmap/late" in out


def test_kubectl_rollout_restart(kubectl, wait_for) -> None:
    before = set(
        _ok(kubectl("get", "pods", "-n", "volcano-system", "-o", "name")).split()
    )
    _ok(
        kubectl(
            "rollout", "restart", "deployment/volcano-scheduler", "-n", "volcano-system"
        )
    )
    deploy = json.loads(
        _ok(
            kubectl(
                "get",
                "deploy",
                "volcano-scheduler",
                "-n",
                "volcano-system",
                "-o",
                "json",
            )
        )
    )
    assert (
        "kubectl.kubernetes.io/restartedAt"
        in deploy["spec"]["template"]["metadata"]["annotations"]
    )
    _ok(
        kubectl(
            "rollout",
            "status",
            "deployment/volcano-scheduler",
            "-n",
            "volcano-system",
            "--timeout=15s",
        )
    )

    def replaced() -> set[str] | None:
        now = set(
            _ok(kubectl("get", "pods", "-n", "volcano-system", "-o", "name")).split()
        )
        return now if now and not now & before else None

    after = wait_for(replaced, timeout=10)
    assert len(after) == 1
    status = json.loads(
        _ok(
            kubectl(
                "get",
                "deploy",
                "volcano-scheduler",
                "-n",
                "volcano-system",
                "-o",
                "json",
            )
        )
    )["status"]
    assert status["observedGeneration"] == 2
    assert status["updatedReplicas"] == 1
    assert status["readyReplicas"] == 1


def test_kubectl_bad_token_and_readonly_context(kubectl) -> None:
    result = kubectl("--token", "not-a-token", "get", "nodes")
    assert result.returncode != 0
    assert "provide credentials" in result.stderr or "Unauthorized" in result.stderr
    assert "npu-node-310p-01" in _ok(kubectl("--context", "readonly", "get", "nodes"))
    result = kubectl(
        "--context", "readonly", "label", "node", "npu-node-310p-01", "x=y"
    )
    assert result.returncode != 0
    assert "Forbidden" in result.stderr
