"""Each configuration check and its version boundaries, from the rows sync mirrors.

The rows are what sync stores (``ClusterObject``: the Volcano scheduler
ConfigMap, the watched Deployments, the device-plugin DaemonSet, the device
config); no cluster is needed. The facts are in docs/scheduler-behaviour.md.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from apps.inventory.deviceconfig.health import cluster_health
from apps.inventory.deviceconfig.services import deviceconfig_import
from apps.inventory.models import ClusterObject
from simcluster import guide_data
from tests.inventory.health_ids import ALL_CHECKS

pytestmark = pytest.mark.django_db

FORK = "swr.cn-east-3.myhuaweicloud.com/lomtom-common/vc-scheduler:v1.13.0-11-07"
UPSTREAM = guide_data.VOLCANO_SCHEDULER_CONF_UPSTREAM
GUIDE = guide_data.VOLCANO_SCHEDULER_CONF
WRAPPER = "vnpus:\n  hamiVnpuCore: false\n  configs:\n" + "".join(
    "  " + line + "\n" if line else "\n"
    for line in guide_data.DEVICE_CONFIG_YAML.split("vnpus:\n", 1)[1].splitlines()
)


@pytest.fixture(autouse=True)
def _names(settings):
    settings.VOLCANO_SCHEDULER_CONFIGMAP = "volcano-system/volcano-scheduler-configmap"
    settings.DEVICE_PLUGIN_DAEMONSET = "kube-system/hami-ascend-device-plugin"
    settings.WATCHED_DEPLOYMENTS = [
        "volcano-system/volcano-scheduler",
        "kube-system/hami-scheduler",
    ]


def _workload(kind: str, image: str, **spec: Any) -> dict[str, Any]:
    body = {"template": {"spec": {"containers": [{"name": "c", "image": image}]}}}
    return {"kind": kind, "spec": {**body, **spec}}


@pytest.fixture
def health() -> Callable[..., dict[str, dict[str, Any]]]:
    """``health(conf=..., volcano=..., hami=..., plugin=..., device_config=...)``: checks by id.

    Defaults: the corrected guide config on the real stack's images
    (Volcano v1.15.1, HAMi v2.5.0, device plugin v1.1.0, the list shape).
    A ``None`` workload is absent.
    """
    cluster = deviceconfig_import(
        cluster_name="unit",
        text=guide_data.DEVICE_CONFIG_YAML,
        actor=None,
        reason="the guide's device config",
    ).cluster

    def run(
        conf: str = UPSTREAM,
        volcano: str | None = "volcanosh/vc-scheduler:v1.15.1",
        hami: str | None = "projecthami/hami:v2.5.0",
        plugin: str | None = "projecthami/ascend-device-plugin:v1.1.0",
        device_config: str = guide_data.DEVICE_CONFIG_YAML,
        hami_replicas: int = 1,
    ) -> dict[str, dict[str, Any]]:
        ClusterObject.objects.filter(cluster=cluster).delete()
        rows: list[tuple[str, str, str, dict[str, Any]]] = [
            (
                "ConfigMap",
                "volcano-system",
                "volcano-scheduler-configmap",
                {"data": {"volcano-scheduler.conf": conf}},
            ),
            (
                "ConfigMap",
                "kube-system",
                "hami-scheduler-device",
                {"data": {"device-config.yaml": device_config}},
            ),
        ]
        if volcano is not None:
            rows.append(
                (
                    "Deployment",
                    "volcano-system",
                    "volcano-scheduler",
                    _workload("Deployment", volcano),
                )
            )
        if hami is not None:
            rows.append(
                (
                    "Deployment",
                    "kube-system",
                    "hami-scheduler",
                    _workload("Deployment", hami, replicas=hami_replicas),
                )
            )
        if plugin is not None:
            ds = _workload("DaemonSet", plugin)
            ds["status"] = {"desiredNumberScheduled": 1, "numberReady": 1}
            rows.append(("DaemonSet", "kube-system", "hami-ascend-device-plugin", ds))
        for kind, namespace, name, data in rows:
            ClusterObject.objects.create(
                cluster=cluster, kind=kind, namespace=namespace, name=name, data=data
            )
        body = cluster_health(cluster)
        return {c["id"]: c for c in body["checks"]} | {"_overall": body}

    return run


def _args(*lines: str) -> str:
    """UPSTREAM with its deviceshare arguments replaced by ``lines``."""
    head, rest = UPSTREAM.split("    arguments:\n", 1)
    tail = rest[rest.index("  - name: predicates") :]
    kept = (
        "      deviceshare.KnownGeometriesCMName: hami-scheduler-device\n"
        "      deviceshare.KnownGeometriesCMNamespace: kube-system\n"
    )
    body = "".join(f"      {line}\n" for line in lines)
    return head + "    arguments:\n" + body + kept + tail


ENABLE = "deviceshare.AscendHAMiVNPUEnable: true"
LOCK = "deviceshare.NodeLockEnable: true"


def test_the_corrected_guide_on_the_real_stacks_images_is_healthy(health):
    checks = health()
    statuses = {k: v["check_status"] for k, v in checks.items() if k != "_overall"}
    # no nodes and no sync here: registrations warn that no chip registers,
    # and Volcano Queues that sync has not listed them yet
    assert statuses["volcano_queues"] == "warn"
    assert "has not listed" in checks["volcano_queues"]["message"]
    unsynced = ("registrations", "volcano_queues")
    assert {k: s for k, s in statuses.items() if k not in unsynced} == dict.fromkeys(
        [c for c in ALL_CHECKS if c not in unsynced],
        "ok",
    )
    assert checks["component_versions"]["message"] == (
        "Volcano scheduler v1.15.1; HAMi scheduler v2.5.0; "
        "HAMi Ascend device plugin v1.1.0"
    )


# --- the guide's enable names --------------------------------------------------


@pytest.mark.parametrize(
    "volcano",
    [
        "volcanosh/vc-scheduler:v1.14.0",
        "volcanosh/vc-scheduler:v1.14.4",
        "volcanosh/vc-scheduler:v1.15.1",
        "volcanosh/vc-scheduler:latest",
        None,
    ],
)
def test_the_guides_names_disable_vnpus_on_every_release(health, volcano):
    check = health(conf=GUIDE, volcano=volcano)["deviceshare_enabled"]
    assert check["check_status"] == "fail"
    assert "which no Volcano release reads" in check["message"]
    assert "deviceshare.AscendHAMiVNPUEnable: true" in check["fix"]
    assert "deviceshare.AscendVNPUEnable" in check["fix"]


def test_the_guides_names_work_on_the_guides_fork(health):
    checks = health(conf=GUIDE, volcano=FORK)
    assert checks["deviceshare_enabled"]["check_status"] == "ok"
    assert "fork" in checks["component_versions"]["message"]
    assert checks["component_versions"]["check_status"] == "ok"
    # and the upstream name alone does nothing there
    check = health(conf=UPSTREAM, volcano=FORK)["deviceshare_enabled"]
    assert check["check_status"] == "fail"
    assert "volcanosh/vc-scheduler:v1.15.1" in check["fix"]


def test_volcano_before_1_14_has_no_ascend_support(health):
    check = health(volcano="volcanosh/vc-scheduler:v1.13.2")["deviceshare_enabled"]
    assert check["check_status"] == "fail"
    assert "arrived in v1.14.0" in check["message"]


def test_upstream_name_with_the_guides_leftovers_is_ok_and_says_so(health):
    conf = _args(ENABLE, LOCK, "deviceshare.AscendVNPUEnable: true")
    check = health(conf=conf)["deviceshare_enabled"]
    assert check["check_status"] == "ok"
    assert "remove it" in check["message"]


# --- a quoted "true" ------------------------------------------------------------


@pytest.mark.parametrize(
    ("volcano", "status"),
    [
        ("volcanosh/vc-scheduler:v1.14.0", "fail"),
        ("volcanosh/vc-scheduler:v1.14.4", "fail"),
        ("volcanosh/vc-scheduler:v1.15.0", "ok"),
        ("volcanosh/vc-scheduler:v1.15.1", "ok"),
        ("volcanosh/vc-scheduler:latest", "warn"),
    ],
)
def test_a_quoted_true_is_ignored_by_1_14(health, volcano, status):
    conf = _args('deviceshare.AscendHAMiVNPUEnable: "true"', LOCK)
    check = health(conf=conf, volcano=volcano)["deviceshare_enabled"]
    assert check["check_status"] == status, check
    if status != "ok":
        assert "quoted" in check["message"]
        assert check["fix"] == (
            "write deviceshare.AscendHAMiVNPUEnable: true without quotes"
        )


@pytest.mark.parametrize(
    ("written", "status"),
    [
        # gopkg.in/yaml.v2 (YAML 1.1): y and on are booleans; PyYAML reads y
        # as a string
        ("y", "ok"),
        ("Y", "ok"),
        ("on", "ok"),
        ("n", "fail"),
        # quoted: framework/arguments.go GetBool, strconv.ParseBool (v1.15.0+)
        ('"1"', "ok"),
        ('"t"', "ok"),
        ('"True"', "ok"),
        ('"0"', "fail"),
        ('"yes"', "fail"),  # ParseBool refuses it: the default (false) stays
        ('" true"', "fail"),
    ],
)
def test_the_enable_switch_is_read_as_volcano_reads_it(health, written, status):
    """volcano-sh/volcano v1.15.1: the conf is unmarshalled by gopkg.in/yaml.v2
    (``pkg/scheduler/util``), the argument read by ``framework/arguments.go``
    ``GetBool`` (a Go bool, or a string ``strconv.ParseBool`` takes)."""
    conf = _args(f"deviceshare.AscendHAMiVNPUEnable: {written}", LOCK)
    check = health(conf=conf)["deviceshare_enabled"]
    assert check["check_status"] == status, check


def test_a_quoted_weight_is_ignored_by_volcano(health):
    """framework/arguments.go ``GetInt`` keeps only a Go int: a quoted "10"
    leaves ScheduleWeight 0, so the policy has no effect (any fitting chip)."""
    conf = _args(
        ENABLE,
        LOCK,
        "deviceshare.SchedulePolicy: binpack",
        'deviceshare.ScheduleWeight: "10"',
    )
    check = health(conf=conf)["chip_policy"]
    assert check["check_status"] == "warn", check
    assert "the weight stays 0" in check["message"]
    assert check["fix"].startswith(
        "write deviceshare.ScheduleWeight: 10 without quotes"
    )
    unquoted = _args(
        ENABLE,
        LOCK,
        "deviceshare.SchedulePolicy: binpack",
        "deviceshare.ScheduleWeight: 10",
    )
    assert health(conf=unquoted)["chip_policy"]["check_status"] == "ok"


def test_a_quoted_node_lock_on_1_14_is_no_lock(health):
    conf = _args(ENABLE, 'deviceshare.NodeLockEnable: "true"')
    check = health(conf=conf, volcano="volcanosh/vc-scheduler:v1.14.4")["node_lock"]
    assert check["check_status"] == "warn"
    assert "quoted" in check["message"]
    assert health(conf=conf)["node_lock"]["check_status"] == "ok"  # v1.15.1


def test_the_fix_for_a_disabled_enable_is_spelled_out(health):
    check = health(conf=_args("deviceshare.AscendHAMiVNPUEnable: false", LOCK))[
        "deviceshare_enabled"
    ]
    assert check["check_status"] == "fail"
    assert check["fix"] == "set deviceshare.AscendHAMiVNPUEnable: true"


# --- predicates, chip policy, node lock ------------------------------------------


def test_predicates_is_required(health):
    check = health(conf=UPSTREAM.replace("  - name: predicates\n", ""))[
        "predicates_plugin"
    ]
    assert check["check_status"] == "fail"
    assert "pods bind with no device" in check["message"]
    assert "- name: predicates" in check["fix"]


@pytest.mark.parametrize(
    ("lines", "volcano", "status", "words"),
    [
        ((), "v1.15.1", "ok", "at random"),
        (("deviceshare.SchedulePolicy: binpack",), "v1.15.1", "warn", "weight 0"),
        (
            ("deviceshare.SchedulePolicy: binpack", "deviceshare.ScheduleWeight: 0"),
            "v1.15.1",
            "warn",
            "ScheduleWeight is 0",
        ),
        (
            ("deviceshare.SchedulePolicy: binpack", "deviceshare.ScheduleWeight: 10"),
            "v1.15.1",
            "ok",
            "by binpack",
        ),
        (("deviceshare.ScheduleWeight: 10",), "v1.15.1", "warn", "every chip"),
        (
            ("deviceshare.SchedulePolicy: pack", "deviceshare.ScheduleWeight: 10"),
            "v1.15.1",
            "warn",
            "neither binpack nor spread",
        ),
        (
            ("deviceshare.SchedulePolicy: spread", "deviceshare.ScheduleWeight: 10"),
            "v1.15.1",
            "warn",
            "exactly one vNPU",
        ),
        (
            ("deviceshare.SchedulePolicy: spread", "deviceshare.ScheduleWeight: 10"),
            "v1.16.0",
            "ok",
            "by spread",
        ),
        (
            ("deviceshare.SchedulePolicy: spread", "deviceshare.ScheduleWeight: 10"),
            "latest",
            "warn",
            "version here is unknown",
        ),
        (
            ("deviceshare.SchedulePolicy: binpack", 'deviceshare.ScheduleWeight: "x"'),
            "v1.15.1",
            "warn",
            "not a whole number",
        ),
    ],
)
def test_chip_policy(health, lines, volcano, status, words):
    conf = _args(ENABLE, LOCK, *lines)
    check = health(conf=conf, volcano=f"volcanosh/vc-scheduler:{volcano}")[
        "chip_policy"
    ]
    assert check["check_status"] == status, check
    assert words in check["message"]
    assert bool(check["fix"]) is (status != "ok")


def test_no_node_lock_is_a_warning(health):
    check = health(conf=_args(ENABLE))["node_lock"]
    assert check["check_status"] == "warn"
    assert "each other's allocation" in check["message"]
    assert check["fix"] == "set deviceshare.NodeLockEnable: true"


# --- preempt ---------------------------------------------------------------------


PREEMPT = UPSTREAM.replace(
    'actions: "enqueue, allocate, backfill"',
    'actions: "enqueue, allocate, preempt, backfill"',
)


@pytest.mark.parametrize(
    ("volcano", "status"),
    [
        ("volcanosh/vc-scheduler:v1.14.0", "ok"),
        ("volcanosh/vc-scheduler:v1.15.1", "ok"),
        ("volcanosh/vc-scheduler:v1.16.0", "warn"),
        ("volcanosh/vc-scheduler:latest", "warn"),
    ],
)
def test_preempt_warns_where_volcano_evicts_vnpu_pods_unasked(health, volcano, status):
    check = health(conf=PREEMPT, volcano=volcano)["preempt_action"]
    assert check["check_status"] == status, check
    if status == "warn":
        assert "without the portal's approval" in check["message"]
        assert "remove preempt" in check["fix"]


def test_no_preempt_is_ok(health):
    check = health()["preempt_action"]
    assert check["check_status"] == "ok"
    assert "have no preempt" in check["message"]


# --- versions and the device-config shape -----------------------------------------


def test_unknown_versions_are_said_not_guessed(health):
    checks = health(
        volcano="volcanosh/vc-scheduler:latest",
        plugin="example.com/our-npu-plugin:2024",  # not a known image name
    )
    versions = checks["component_versions"]
    assert versions["check_status"] == "warn"
    assert (
        "Volcano scheduler (version unknown: image volcanosh/vc-scheduler:latest)"
        in (versions["message"])
    )
    assert "HAMi Ascend device plugin (version unknown" in versions["message"]
    shape = checks["device_config_shape"]
    assert shape["check_status"] == "warn"
    assert "cannot tell whether it reads the list shape" in shape["message"]


def test_no_volcano_deployment_seen(health):
    check = health(volcano=None)["component_versions"]
    assert check["check_status"] == "warn"
    assert "WATCHED_DEPLOYMENTS" in check["fix"]


@pytest.mark.parametrize(
    ("device_config", "volcano", "hami", "plugin", "status", "words"),
    [
        # the list shape: plugin v1.3+ and HAMi v2.9+ crash
        (
            "list",
            "v1.15.1",
            "v2.5.0",
            "v1.3.0",
            "fail",
            "device plugin v1.3.0 cannot parse",
        ),
        (
            "list",
            "v1.15.1",
            "v2.9.0",
            "v1.1.0",
            "fail",
            "HAMi scheduler v2.9.0 cannot parse",
        ),
        ("list", "v1.14.0", "v2.8.3", "v1.2.0", "ok", "reads the list shape"),
        # the wrapper: Volcano 1.14.0-1.14.3 and 1.15.0 fall back silently
        ("wrapper", "v1.14.3", "v2.10.0", "v1.4.0", "fail", "310P3"),
        ("wrapper", "v1.15.0", "v2.10.0", "v1.4.0", "fail", "silently falls back"),
        ("wrapper", "v1.14.4", "v2.10.0", "v1.4.0", "ok", "reads the wrapper shape"),
        ("wrapper", "v1.15.1", "v2.9.0", "v1.3.0", "ok", "reads the wrapper shape"),
        ("wrapper", "v1.15.1", "v2.8.3", "v1.3.0", "fail", "HAMi scheduler v2.8.3"),
        ("wrapper", "v1.15.1", "v2.10.0", "v1.2.0", "fail", "device plugin v1.2.0"),
    ],
)
def test_device_config_shape_against_each_version(
    health, device_config, volcano, hami, plugin, status, words
):
    check = health(
        device_config=WRAPPER
        if device_config == "wrapper"
        else guide_data.DEVICE_CONFIG_YAML,
        volcano=f"volcanosh/vc-scheduler:{volcano}",
        hami=f"projecthami/hami:{hami}",
        plugin=f"projecthami/ascend-device-plugin:{plugin}",
    )["device_config_shape"]
    assert check["check_status"] == status, check
    assert words in check["message"]
    assert bool(check["fix"]) is (status != "ok")


def test_a_scaled_down_hami_scheduler_reads_nothing(health):
    check = health(hami="projecthami/hami:v2.10.0", hami_replicas=0)[
        "device_config_shape"
    ]
    assert check["check_status"] == "ok"
    assert "HAMi scheduler" not in check["message"]
