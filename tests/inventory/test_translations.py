"""The inventory's own prose (Health page, node config, device-config warnings) in Chinese.

The checks, verdicts and warnings are built in the server and shown as they
come; each is marked for translation and comes out in the language active
for the request, English when none is. Every message the modules below use
must have a translation in the portal's catalog
(``locale/zh_Hans/LC_MESSAGES/django.po``), not fuzzy, with the message's
placeholders.
"""

from __future__ import annotations

import copy
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from babel.messages.catalog import Catalog, Message
from babel.messages.extract import extract_python
from babel.messages.pofile import read_po
from django.utils.translation import override

from apps.inventory.deviceconfig import restarts
from apps.inventory.deviceconfig.health import registrations_judged
from apps.inventory.deviceconfig.services import deviceconfig_import
from apps.inventory.deviceconfig.volcano_health import predicates_check, preempt_check
from apps.inventory.hami.deviceconfig import parse_device_config
from apps.inventory.hami.nodeconfig import FilterDevices, NodeEntry
from apps.inventory.hami.validation import validate_configs
from apps.inventory.nodeconfig import whatif
from apps.inventory.nodeconfig.health import node_config_health
from apps.inventory.nodeconfig.health_nodes import node_row
from apps.inventory.room import ChipLoad
from simcluster import guide_data

REPO = Path(__file__).resolve().parents[2]
CATALOG = REPO / "locale" / "zh_Hans" / "LC_MESSAGES" / "django.po"
#: The modules whose prose the web UI shows, and whose messages the catalog holds.
SOURCES = (
    "apps/inventory/deviceconfig/health.py",
    "apps/inventory/deviceconfig/volcano_health.py",
    "apps/inventory/deviceconfig/restarts.py",
    "apps/inventory/nodeconfig/health.py",
    "apps/inventory/nodeconfig/health_nodes.py",
    "apps/inventory/nodeconfig/wiring.py",
    "apps/inventory/nodeconfig/whatif.py",
    "apps/inventory/hami/_advice.py",
)
KEYWORDS: dict[str, Any] = {
    "_": None,
    "gettext": None,
    "gettext_lazy": None,
    "ngettext": (1, 2),
    "pgettext": ((1, "c"), 2),
}
#: A named %-placeholder with its conversion: ``%(count)d``, ``%(name)s``.
PLACEHOLDER = re.compile(r"%\((\w+)\)[#0\- +]*\d*(?:\.\d+)?([diouxXeEfFgGcrs])")
#: Chinese text in a translation (the guard against an English copy).
HAN = re.compile(r"[\u4e00-\u9fff]")

pytestmark = pytest.mark.usefixtures("inventory_catalog")


def english() -> override:
    """The portal's source language, whatever an earlier test left active."""
    return override("en")


def _used() -> dict[str, tuple[tuple[str, ...], str]]:
    """msgid -> (all its forms, where it is used), from the sources."""
    found = {}
    for source in SOURCES:
        with (REPO / source).open("rb") as handle:
            for line, _func, message, _comments in extract_python(
                handle, KEYWORDS, [], {}
            ):
                forms = (
                    tuple(m for m in message if m is not None)
                    if isinstance(message, tuple)
                    else (message,)
                )
                found[forms[0]] = (forms, f"{source}:{line}")
    return found


def _catalog(path: Path) -> Catalog:
    with path.open("rb") as handle:
        return read_po(handle, locale="zh_Hans", domain="django")


def _placeholders(text: str) -> list[tuple[str, str]]:
    return sorted(set(PLACEHOLDER.findall(text)))


def _problems(message: Message, forms: tuple[str, ...]) -> list[str]:
    strings = message.string if isinstance(message.string, tuple) else (message.string,)
    problems = []
    if message.fuzzy:
        problems.append("fuzzy")
    if not all(strings):
        problems.append("untranslated")
    ids = message.id if isinstance(message.id, tuple) else (message.id,)
    if tuple(ids) != forms:
        problems.append(f"the catalog's forms {ids} are not the code's {forms}")
    # Every form of the message has the same placeholders (the count's
    # included), and so must every translation: none lost, none added.
    wanted = _placeholders(forms[-1])
    for string in strings:
        if string and _placeholders(string) != wanted:
            problems.append(
                f"placeholders {_placeholders(string)} in {string!r}, {wanted} wanted"
            )
        words = PLACEHOLDER.sub("", string or "")
        if any(c.isascii() and c.isalpha() for c in words) and not HAN.search(words):
            problems.append(f"{string!r} is not Chinese")
    return problems


def test_every_message_has_a_chinese_translation_with_its_placeholders():
    used = _used()
    ours = _catalog(CATALOG)
    problems = []
    for msgid, (forms, where) in used.items():
        message = ours.get(msgid)
        if message is None:
            problems.append(f"{where}: {msgid!r} is not in {CATALOG.name}")
            continue
        problems += [f"{where}: {msgid!r}: {p}" for p in _problems(message, forms)]
    # (an entry no code uses is found by ``compile_locale --check``, over every source)
    problems += [
        f"{CATALOG.name}:{m.lineno}: {error}"
        for m, errors in ours.check()
        for error in errors
    ]
    assert len(used) > 150  # the extraction found the modules' prose
    assert problems == []


def _key(message: Message) -> str:
    return str(message.id[0] if isinstance(message.id, tuple) else message.id)


def test_the_check_finds_a_lost_placeholder_and_a_fuzzy_entry():
    forms = ("%(count)d chip filtered", "%(count)d chips filtered")
    good = Message(forms, ("过滤 %(count)d 个芯片",))
    lost = Message(forms, ("过滤了芯片",))
    renamed = Message(forms, ("过滤 %(n)d 个芯片",))
    fuzzy = Message(forms, ("过滤 %(count)d 个芯片",), flags=["fuzzy"])
    assert _problems(good, forms) == []
    assert _problems(lost, forms) == [
        "placeholders [] in '过滤了芯片', [('count', 'd')] wanted"
    ]
    assert _problems(renamed, forms)[0].startswith("placeholders [('n', 'd')]")
    assert _problems(fuzzy, forms) == ["fuzzy"]
    assert _problems(Message("no pods", "no pods"), ("no pods",)) == [
        "'no pods' is not Chinese"
    ]


# --- each module speaks the request's language --------------------------------


def test_device_config_warnings_in_chinese_and_english():
    configs = parse_device_config(guide_data.DEVICE_CONFIG_YAML).raw_configs
    p310 = copy.deepcopy(next(c for c in configs if c["commonWord"] == "Ascend310P"))
    with english():
        in_english = [w.message for w in validate_configs([p310]).warnings]
    with override("zh-hans"):
        chinese = [w.message for w in validate_configs([p310]).warnings]
    assert in_english == ["Ascend310P: 7 slices per chip (21527 // 3072, set by vir01)"]
    assert chinese == ["Ascend310P：每个芯片 7 个切片（21527 // 3072，由 vir01 决定）"]


def test_a_renamed_chip_type_is_explained_in_chinese():
    configs = parse_device_config(guide_data.DEVICE_CONFIG_YAML).raw_configs
    renamed = copy.deepcopy(list(configs))
    renamed[1]["commonWord"] = "Ascend310PX"
    with override("zh-hans"):
        messages = [
            w.message for w in validate_configs(renamed, previous=configs).warnings
        ]
    (said,) = [m for m in messages if "Ascend310PX" in m and "重命名" in m]
    assert said.startswith("Ascend310P 已重命名为 Ascend310PX（chipName 310P3）：")
    assert "将成为孤立注解" in said


def test_volcano_checks_in_chinese_and_english():
    conf = {"tiers": [{"plugins": [{"name": "predicates"}]}], "actions": "allocate"}
    with english():
        configured = predicates_check(conf)["message"]
    assert configured == "the predicates plugin is configured"
    with override("zh-hans"):
        assert predicates_check(conf)["message"] == "已配置 predicates 插件"
        preempt = preempt_check(conf, None)
        missing = predicates_check({"tiers": []})
    assert preempt["message"] == (
        "Volcano 的 actions 中没有 preempt：它不会自行驱逐 vNPU Pod；"
        "门户只驱逐管理员批准的 Pod"
    )
    # identifiers stay as they are: the annotation, the YAML to add
    assert "hami.io/*" in missing["message"]
    assert missing["fix"] == "在包含 deviceshare 的 tier 中添加 `- name: predicates`"
    assert missing["id"] == "predicates_plugin"


def test_restart_states_in_chinese_and_english():
    pod = {
        "name": "p",
        "started_at": datetime(2026, 1, 1, tzinfo=UTC),
        "ready": True,
        "terminating": False,
        "stale": False,
    }
    with english():
        assert restarts._state([pod], None, None) == (
            "in_effect",
            "every pod started after the change and is Ready",
        )
    with override("zh-hans"):
        assert restarts._state([pod], None, None) == (
            "in_effect",
            "每个 Pod 都在修改之后启动，并且已 Ready",
        )
        assert restarts._state([], None, None) == ("unknown", "没有 Pod")


@pytest.fixture
def guide_cluster(db):
    return deviceconfig_import(
        cluster_name="zh",
        text=guide_data.DEVICE_CONFIG_YAML,
        actor=None,
        reason="the guide's device config",
    ).cluster


def test_registrations_in_chinese_with_counts(guide_cluster):
    registered = {"Ascend910X": {(4, 32768): 8}, "Ascend910B4": {(4, 32768): 1}}
    with english():
        in_english = registrations_judged(guide_cluster, registered)
    with override("zh-hans"):
        chinese = registrations_judged(guide_cluster, registered)
    assert "8 chips register as Ascend910X" in in_english["message"]
    assert "8 个芯片注册为 Ascend910X，但设备配置中没有定义它" in chinese["message"]
    assert "Ascend310P（chipName 310P3）没有已注册的芯片" in chinese["message"]
    assert chinese["fix"].startswith("修正设备配置中的 chipName/commonWord")
    assert (chinese["id"], chinese["check_status"]) == ("registrations", "fail")


def test_the_health_page_answers_in_the_requests_language(guide_cluster, viewer_client):
    url = f"/api/clusters/{guide_cluster.pk}/health/"
    with english():
        in_english = viewer_client.get(url).json()
    # Accept-Language for LocaleMiddleware; override where the settings have
    # none, so the test runs the same either way.
    with override("zh-hans"):
        chinese = viewer_client.get(url, HTTP_ACCEPT_LANGUAGE="zh-CN").json()
    by_id = {c["id"]: c for c in chinese["checks"]}
    assert [c["id"] for c in chinese["checks"]] == [
        c["id"] for c in in_english["checks"]
    ]
    assert [c["check_status"] for c in chinese["checks"]] == [
        c["check_status"] for c in in_english["checks"]
    ]
    assert by_id["volcano_config"]["message"].startswith("同步尚未看到 ConfigMap ")
    assert by_id["device_config_drift"]["message"] == "未记录到手动编辑"
    english_drift = {c["id"]: c for c in in_english["checks"]}["device_config_drift"]
    assert english_drift["message"] == "no hand edit recorded"


def test_node_config_health_in_chinese(guide_cluster, settings):
    settings.DEVICE_PLUGIN_DAEMONSET = "kube-system/hami-ascend-device-plugin"
    with english():
        in_english = {c["id"]: c for c in node_config_health(guide_cluster)["checks"]}
    with override("zh-hans"):
        chinese = {c["id"]: c for c in node_config_health(guide_cluster)["checks"]}
    assert in_english["node_config_map"]["message"].startswith(
        "sync has not seen ConfigMap hami-device-node-config:"
    )
    assert chinese["node_config_map"]["message"].startswith(
        "同步尚未看到 ConfigMap hami-device-node-config："
    )
    assert chinese["node_config_map"]["fix"] == (
        "挂载前先创建 hami-device-node-config（nodes: []）"
    )
    assert chinese["device_plugin_daemonset"]["message"] == (
        "同步尚未看到 DaemonSet kube-system/hami-ascend-device-plugin："
        "没有组件读取节点配置"
    )
    assert chinese["device_plugin_daemonset"]["fix"].endswith(
        "DEVICE_PLUGIN_DAEMONSET 中写明其 DaemonSet"
    )


def test_a_nodes_verdict_in_chinese():
    with english():
        assert node_row("n1", None, None)["message"] == (
            "the node config is not read on n1"
        )
    with override("zh-hans"):
        row = node_row("n1", None, None)
    assert (row["message"], row["fix"]) == ("n1 上不读取节点配置", "参见上方的检查")
    assert row["check_status"] == "fail"


def _what_if_filtering_a_busy_chip() -> dict[str, Any]:
    load = ChipLoad(
        common_word="Ascend910B4",
        memory=32768,
        memory_used=8192,
        slots=4,
        slots_used=1,
        aicore=20,
        aicore_used=5,
        aicpu=7,
        aicpu_used=1,
        eligible=True,
    )
    chip = whatif.ChipFact(uuid="b-0", index=0, node="b", load=load)
    data = whatif.WhatIfInput(
        nodes=(whatif.NodeFact("b", hami_vnpu_core=False, plugin_version=(1, 4, 0)),),
        chips=(chip,),
        slices=(whatif.SliceFact("team", "pod-0", "b-0", "vir05_1c_8g", 8192),),
        demands=(),
        chip_types={
            s.common_word: s
            for s in parse_device_config(guide_data.DEVICE_CONFIG_YAML).chip_types()
        },
    )
    entry = NodeEntry("b", filter_devices=FilterDevices(uuids=("b-0",)))
    (row,) = whatif.node_config_what_if(data, [entry])["nodes"]
    return row


def test_the_what_if_in_chinese_and_english():
    with english():
        in_english = _what_if_filtering_a_busy_chip()
    with override("zh-hans"):
        chinese = _what_if_filtering_a_busy_chip()
    assert in_english["changes"] == ["1 chip filtered"]
    assert chinese["changes"] == ["过滤 1 个芯片"]
    assert chinese["stranded_slices"][0]["reasons"] == [
        "filterDevices.uuid 指定了 b-0：切片仍在运行时，该芯片就会退出注册"
    ]
