"""``manage.py nodeconfig check|export``: exit codes and what is printed."""

from __future__ import annotations

import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from apps.inventory.models import ClusterObject
from apps.inventory.sync.writer import ClusterWriter

pytestmark = pytest.mark.django_db

UUID_310P_1 = "0C5C7FD0-128B2F33-D23F0824-892F902B-1818E811"


@pytest.fixture
def cluster(guide_cluster, fixtures_dir):
    """The guide's cluster with its two nodes synced (310P3 and 910B4)."""
    nodes = [
        json.loads((fixtures_dir / name).read_text())
        for name in ("node-310p3.json", "node-910b4.json")
    ]
    ClusterWriter(guide_cluster).replace_nodes(nodes)
    return guide_cluster


def _plugin(cluster, image: str) -> None:
    ClusterObject.objects.create(
        cluster=cluster,
        kind="DaemonSet",
        namespace="kube-system",
        name="hami-ascend-device-plugin",
        data={"spec": {"template": {"spec": {"containers": [{"image": image}]}}}},
    )


def _run(capsys, *args: str) -> tuple[int, str, str]:
    try:
        call_command("nodeconfig", *args)
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    out = capsys.readouterr()
    return code, out.out, out.err


def _file(tmp_path, text: str) -> str:
    path = tmp_path / "node-config.yaml"
    path.write_text(text)
    return str(path)


GOOD = (
    "nodes:\n"
    "- name: npu-node-310p-01\n"
    "  hami-vnpu-core: false\n"
    "  vDeviceCount: 6\n"
    f"  filterDevices: {{uuid: [{UUID_310P_1}]}}\n"
)


def test_a_good_file_exits_0(cluster, tmp_path, capsys):
    # given a plugin v1.4.0 and a file for the 310P3 node
    _plugin(cluster, "projecthami/ascend-device-plugin:v1.4.0")
    code, out, err = _run(capsys, "check", _file(tmp_path, GOOD), "--cluster", "guide")
    # then it is clean
    assert code == 0, err
    assert "ok: 1 nodes, checked against cluster guide" in out
    assert err == ""


def test_errors_exit_1_with_their_paths(cluster, tmp_path, capsys):
    # given a misspelt key, an unknown node and a slot count the templates cannot fill
    _plugin(cluster, "projecthami/ascend-device-plugin:v1.4.0")
    text = (
        "nodes:\n"
        "- {name: npu-node-310p-01, hami-vnpu-core: false, vDeviceCount: 9,"
        " filterDevice: {uuid: [x]}}\n"
        "- {name: npu-node-999, hami-vnpu-core: false}\n"
    )
    code, _, err = _run(capsys, "check", _file(tmp_path, text), "--cluster", "guide")
    # then exit 1, one line per error, each with its path
    assert code == 1
    lines = err.splitlines()
    assert any(
        line.startswith("error: nodes[0].filterDevice: unknown key") for line in lines
    )
    assert any(
        line.startswith("error: nodes[0].vDeviceCount: 9 slots") for line in lines
    )
    assert any(
        line.startswith("error: nodes[1].name: no node npu-node-999") for line in lines
    )


def test_warnings_exit_0_unless_strict(cluster, tmp_path, capsys):
    # given no device-plugin DaemonSet seen: its version is unknown
    path = _file(tmp_path, GOOD)
    code, out, _ = _run(capsys, "check", path, "--cluster", "guide")
    assert code == 0
    assert (
        "warning: nodes[0]: the device plugin version on npu-node-310p-01 is unknown"
        in out
    )
    # when --strict, then the warning fails the check
    code, _, _ = _run(capsys, "check", path, "--cluster", "guide", "--strict")
    assert code == 1


def test_an_old_plugin_is_an_error(cluster, tmp_path, capsys):
    _plugin(cluster, "projecthami/ascend-device-plugin:v1.3.0")
    code, _, err = _run(capsys, "check", _file(tmp_path, GOOD), "--cluster", "guide")
    assert code == 1
    assert (
        "error: nodes[0].filterDevices: the device plugin on npu-node-310p-01 is v1.3.0"
        in err
    )


def test_without_a_cluster_only_the_format(db, tmp_path, capsys):
    code, out, _ = _run(capsys, "check", _file(tmp_path, GOOD))
    assert code == 0
    assert "format only" in out


@pytest.mark.parametrize(
    "content", [b"nodes: [\n  - {name: x\n", b"nodes:\n- name: \xff\n"]
)
def test_unreadable_files_fail_with_a_message(db, tmp_path, content):
    path = tmp_path / "node-config.yaml"
    path.write_bytes(content)
    with pytest.raises(CommandError, match=r"invalid YAML|not UTF-8"):
        call_command("nodeconfig", "check", str(path))
    with pytest.raises(CommandError, match="cannot read"):
        call_command("nodeconfig", "check", str(tmp_path / "missing.yaml"))


def test_an_unknown_cluster_fails(db, tmp_path):
    with pytest.raises(CommandError, match="does not exist"):
        call_command("nodeconfig", "check", _file(tmp_path, GOOD), "--cluster", "nope")


def test_export_starts_from_the_inventory_and_checks_clean(cluster, tmp_path, capsys):
    # given the guide's nodes and a known plugin
    _plugin(cluster, "projecthami/ascend-device-plugin:v1.4.0")
    # when exported
    code, out, err = _run(capsys, "export", "--cluster", "guide")
    # then every Ascend node has an entry in its current mode, and nothing else
    assert code == 0
    assert "built from the inventory" in err
    assert json.loads(out) == {
        "nodes": [
            {"name": "npu-node-310p-01", "hami-vnpu-core": False},
            {"name": "npu-node-910b-01", "hami-vnpu-core": False},
        ]
    }
    # and the file checks clean against the same cluster
    code, _, err = _run(
        capsys, "check", _file(tmp_path, out), "--cluster", "guide", "--strict"
    )
    assert code == 0, err


def test_a_chinese_shell_reads_the_problems_in_chinese(
    db, tmp_path, capsys, monkeypatch
):
    monkeypatch.setenv("LANGUAGE", "")
    monkeypatch.setenv("LANG", "zh_CN.UTF-8")
    text = "nodes:\n- name: Node_1\n  hami-vnpu-core: false\n  vDeviceCount: 0\n"
    code, out, err = _run(capsys, "check", _file(tmp_path, text))
    # the tags and paths a script reads stay; the words are Chinese
    assert code == 1
    assert "warning: nodes[0].vDeviceCount: 0 表示保留默认槽位数：请省略该键" in out
    assert err.startswith(
        "error: nodes[0].name: 'Node_1' 不是有效的 Kubernetes 节点名称"
    )
    with pytest.raises(CommandError, match="YAML 无效（第 2 行）"):
        call_command("nodeconfig", "check", _file(tmp_path, "nodes: [\n  - {name: x\n"))
