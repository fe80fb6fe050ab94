"""A refused node-config edit and the warnings before a publish answer in the
language ``Accept-Language`` asks for: the HAMi validators' messages
translated, the status, code and field paths as in English (docs/languages.md).
On the simulated ``nodeconfig`` cluster, through the API."""

from __future__ import annotations

import re
from typing import Any

import pytest

from simcluster import guide_data

pytestmark = pytest.mark.django_db

CJK = re.compile(r"[\u4e00-\u9fff]")
NODE_910B, NODE_310P = guide_data.NODE_910B, guide_data.NODE_310P
HEALTHY_910B = guide_data.CHIPS_910B[0][0]
SICK_910B = next(u for u, healthy in guide_data.CHIPS_910B if not healthy)


@pytest.fixture
def sim_options() -> dict[str, Any]:
    return {"scenario": "nodeconfig", "plugin_interval": 0.2}


def _publish(client_api, cluster, language: str, **body: Any):
    return client_api.post(
        f"/api/clusters/{cluster.pk}/node-config/publish/",
        body,
        format="json",
        HTTP_ACCEPT_LANGUAGE=language,
    )


def _both(client_api, cluster, **body: Any) -> tuple[Any, Any]:
    return (
        _publish(client_api, cluster, "en", **body),
        _publish(client_api, cluster, "zh-CN", **body),
    )


def test_a_refused_node_config_edit_answers_in_chinese(cluster, operator_client):
    # a chip of another node, and a misspelt key: each refused on its path
    wrong_chip, typo = (
        _both(
            operator_client,
            cluster,
            reason="wrong node",
            expected_version=1,
            nodes=[{"name": NODE_310P, "filter_uuids": [HEALTHY_910B]}],
            confirm_warnings=True,
        ),
        _both(
            operator_client,
            cluster,
            reason="typo",
            expected_version=1,
            text=f"nodes:\n- name: {NODE_310P}\n  hami-vnpu-core: false\n"
            f"  filterDevice:\n    uuid: [{HEALTHY_910B}]\n",
            confirm_warnings=True,
        ),
    )
    for en, zh in (wrong_chip, typo):
        assert (en.status_code, zh.status_code) == (400, 400)
        assert en.json()["code"] == zh.json()["code"] == "invalid"
        assert en.json()["errors"].keys() == zh.json()["errors"].keys()
        assert not CJK.search(en.json()["message"])
        assert CJK.search(zh.json()["message"])
    (path,) = [k for k in wrong_chip[1].json()["errors"] if "uuid" in k]
    assert path.endswith(".filterDevices.uuid[0]")
    assert wrong_chip[0].json()["errors"][path] == [
        f"{HEALTHY_910B} is not a chip of {NODE_310P}: it is a chip of {NODE_910B}"
    ]
    assert wrong_chip[1].json()["errors"][path] == [
        f"{HEALTHY_910B} 不是 {NODE_310P} 的芯片：它是 {NODE_910B} 的芯片"
    ]
    assert wrong_chip[1].json()["message"] == (
        f"{path}：{HEALTHY_910B} 不是 {NODE_310P} 的芯片：它是 {NODE_910B} 的芯片"
    )
    assert typo[1].json()["errors"]["nodes[0].filterDevice"] == [
        "未知的键 'filterDevice'（是否想写 filterDevices？）：插件会忽略它；"
        "可用的键为 name, hami-vnpu-core, vDeviceCount, filterDevices"
    ]


def test_the_warnings_before_a_publish_come_in_chinese(cluster, operator_client):
    # ignoring one more chip: the live file's old problems are warnings to confirm
    body = {
        "reason": "chip 0 keeps failing",
        "expected_version": 1,
        "nodes": [{"name": NODE_910B, "filter_uuids": [SICK_910B, HEALTHY_910B]}],
    }
    en, zh = _both(operator_client, cluster, **body)
    assert (en.status_code, zh.status_code) == (400, 400)
    assert en.json()["code"] == zh.json()["code"] == "unconfirmed_warnings"
    en_said = en.json()["errors"]["confirm_warnings"]
    zh_said = zh.json()["errors"]["confirm_warnings"]
    assert len(en_said) == len(zh_said) >= 2
    assert all(not CJK.search(line) for line in en_said)
    assert all(CJK.search(line) for line in zh_said)
    # each warning keeps its path, then its message in Chinese
    for en_line, zh_line in zip(en_said[:-1], zh_said[:-1], strict=True):
        assert zh_line.split("：", 1)[0] == en_line.split(": ", 1)[0]
    assert any("index 1 是卡 ID" in line for line in zh_said), zh_said
    assert CJK.search(zh.json()["message"])

    # and the check a UI makes before publishing lists them in Chinese too
    checked = operator_client.post(
        f"/api/clusters/{cluster.pk}/node-config/validate/",
        {"nodes": body["nodes"]},
        format="json",
        HTTP_ACCEPT_LANGUAGE="zh-CN",
    )
    assert checked.status_code == 200, checked.json()
    warnings = checked.json()["warnings"]
    assert warnings
    assert all(CJK.search(w["message"]) for w in warnings), warnings
