"""Configuration health from what sync mirrored (no API call).

Volcano's deviceshare arguments, the preempt action, the device-plugin
DaemonSet, node registrations, a recorded hand edit of the device config, and
whether Volcano Queues are mirrored (skipped, with the reason, on a cluster
that has no Volcano CRDs).
The live reads are elsewhere: the ConfigMap and its drift in
``apps.inventory.liveconfig``, restart state in ``apps.inventory.restarts``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

import yaml
from django.conf import settings

from apps.inventory.hami.validation import slots_per_chip
from apps.inventory.models import Chip, Cluster, ClusterObject, Node, SyncCursor
from apps.inventory.selectors import chip_type_specs, deviceconfig_drift_recorded
from apps.inventory.sync.targets import VOLCANO_QUEUES

VOLCANO_CONFIG_KEY = "volcano-scheduler.conf"

CheckStatus = Literal["ok", "warn", "fail"]
_RANK = {"ok": 0, "warn": 1, "fail": 2}
UPSTREAM_ENABLE = "deviceshare.AscendHAMiVNPUEnable"
# Names from the reference guide; no Volcano release reads them (facts, section 5).
GUIDE_ENABLE = ("deviceshare.AscendVNPUEnable", "deviceshare.ASCEND310PVNPUEnable")
GEOMETRIES_NAME = "deviceshare.KnownGeometriesCMName"
GEOMETRIES_NAMESPACE = "deviceshare.KnownGeometriesCMNamespace"
# Volcano's defaults when the arguments are absent (deviceshare.go).
GEOMETRIES_DEFAULTS = ("volcano-vgpu-device-config", "kube-system")


def _check(
    id_: str, status: CheckStatus, message: str, fix: str = ""
) -> dict[str, Any]:
    return {"id": id_, "check_status": status, "message": message, "fix": fix}


def _object(cluster: Cluster, kind: str, ref: str) -> ClusterObject | None:
    namespace, name = ref.split("/", 1)
    return ClusterObject.objects.filter(
        cluster=cluster, kind=kind, namespace=namespace, name=name
    ).first()


def _volcano_conf(cluster: Cluster) -> tuple[dict[str, Any] | None, dict[str, Any]]:
    ref = settings.VOLCANO_SCHEDULER_CONFIGMAP
    row = _object(cluster, "ConfigMap", ref)
    if row is None:
        return None, _check(
            "volcano_config",
            "fail",
            f"ConfigMap {ref} has not been seen by sync",
            "install Volcano, or set VOLCANO_SCHEDULER_CONFIGMAP to its ConfigMap",
        )
    text = ((row.data or {}).get("data") or {}).get(VOLCANO_CONFIG_KEY)
    try:
        conf = yaml.safe_load(text) if isinstance(text, str) else None
    except yaml.YAMLError as exc:
        return None, _check(
            "volcano_config",
            "fail",
            f"{ref} {VOLCANO_CONFIG_KEY} is not valid YAML: {exc}",
            "fix the YAML; volcano-scheduler keeps its last good configuration",
        )
    if not isinstance(conf, dict):
        return None, _check(
            "volcano_config",
            "fail",
            f"{ref} has no {VOLCANO_CONFIG_KEY} mapping",
            f"put the scheduler configuration under the key {VOLCANO_CONFIG_KEY}",
        )
    return conf, _check("volcano_config", "ok", f"{ref} {VOLCANO_CONFIG_KEY} parsed")


def _deviceshare_arguments(conf: Mapping[str, Any]) -> dict[str, Any] | None:
    for tier in conf.get("tiers") or []:
        plugins = tier.get("plugins") if isinstance(tier, dict) else None
        for plugin in plugins or []:
            if isinstance(plugin, dict) and plugin.get("name") == "deviceshare":
                arguments = plugin.get("arguments")
                return dict(arguments) if isinstance(arguments, dict) else {}
    return None


def _truthy(value: Any) -> bool:
    return value is True or (isinstance(value, str) and value.lower() == "true")


def _deviceshare_checks(
    cluster: Cluster, conf: dict[str, Any] | None
) -> list[dict[str, Any]]:
    if conf is None:
        why = "cannot check: the Volcano scheduler configuration is unreadable"
        return [
            _check("deviceshare_enabled", "fail", why),
            _check("known_geometries", "fail", why),
        ]
    args = _deviceshare_arguments(conf)
    if args is None:
        fix = f"add the deviceshare plugin with {UPSTREAM_ENABLE}: true to a tier"
        return [
            _check("deviceshare_enabled", "fail", "no deviceshare plugin", fix),
            _check("known_geometries", "fail", "no deviceshare plugin", fix),
        ]
    guide = [name for name in GUIDE_ENABLE if _truthy(args.get(name))]
    if _truthy(args.get(UPSTREAM_ENABLE)):
        enabled = _check(
            "deviceshare_enabled", "ok", f"deviceshare has {UPSTREAM_ENABLE}: true"
        )
    elif guide:
        # Either naming counts as enabled, but say which Volcano reads which.
        enabled = _check(
            "deviceshare_enabled",
            "warn",
            f"deviceshare is enabled with the guide's {', '.join(guide)}; "
            f"upstream Volcano >= v1.14 reads only {UPSTREAM_ENABLE}",
            f"also set {UPSTREAM_ENABLE}: true unless your Volcano build uses the guide's names",
        )
    else:
        enabled = _check(
            "deviceshare_enabled",
            "fail",
            "deviceshare does not enable Ascend vNPUs",
            f"set {UPSTREAM_ENABLE}: true (or the guide's {GUIDE_ENABLE[0]})",
        )
    name = args.get(GEOMETRIES_NAME, GEOMETRIES_DEFAULTS[0])
    namespace = args.get(GEOMETRIES_NAMESPACE, GEOMETRIES_DEFAULTS[1])
    wanted = (cluster.device_config_name, cluster.device_config_namespace)
    if (name, namespace) == wanted:
        geometries = _check(
            "known_geometries",
            "ok",
            f"deviceshare reads the device config {namespace}/{name}",
        )
    else:
        geometries = _check(
            "known_geometries",
            "fail",
            f"deviceshare reads {namespace}/{name}, not the device config "
            f"{wanted[1]}/{wanted[0]}; Volcano then falls back to a built-in "
            "310P3-only default",
            f"set {GEOMETRIES_NAME}: {wanted[0]} and {GEOMETRIES_NAMESPACE}: {wanted[1]}",
        )
    return [enabled, geometries]


def _preempt_check(conf: dict[str, Any] | None) -> dict[str, Any]:
    if not getattr(settings, "PREEMPTION_ENABLED", True):
        return _check("preempt_action", "ok", "the portal's preemption is disabled")
    if conf is None:
        return _check(
            "preempt_action",
            "fail",
            "cannot check: the Volcano scheduler configuration is unreadable",
        )
    actions = [a.strip() for a in str(conf.get("actions") or "").split(",")]
    if "preempt" in actions:
        return _check("preempt_action", "ok", "the preempt action is configured")
    return _check(
        "preempt_action",
        "fail",
        f"actions are {', '.join(a for a in actions if a) or 'empty'}: without "
        "preempt, Volcano never evicts lower-priority pods for the portal",
        'add preempt, e.g. actions: "enqueue, allocate, preempt, backfill"',
    )


def _daemonset_check(cluster: Cluster) -> dict[str, Any]:
    ref = settings.DEVICE_PLUGIN_DAEMONSET
    row = _object(cluster, "DaemonSet", ref)
    if row is None:
        return _check(
            "device_plugin",
            "fail",
            f"DaemonSet {ref} has not been seen by sync",
            "deploy the HAMi Ascend device plugin (ascend-device-plugin.yaml)",
        )
    status = (row.data or {}).get("status") or {}
    desired = int(status.get("desiredNumberScheduled") or 0)
    ready = int(status.get("numberReady") or 0)
    ascend_nodes = Node.objects.filter(cluster=cluster, ascend_enabled=True).count()
    if desired < ascend_nodes:
        return _check(
            "device_plugin",
            "fail",
            f"{ref} is scheduled on {desired} nodes but {ascend_nodes} are labelled "
            "ascend=on",
            "check the DaemonSet's nodeSelector and tolerations",
        )
    if ready < desired:
        return _check(
            "device_plugin",
            "fail",
            f"{ref}: {ready} of {desired} pods are ready",
            f"kubectl -n {ref.split('/')[0]} describe pods of the DaemonSet",
        )
    return _check(
        "device_plugin",
        "ok",
        f"{ref}: {ready} of {desired} pods ready on {ascend_nodes} ascend=on nodes",
    )


def _registration_checks(cluster: Cluster) -> dict[str, Any]:
    specs = {s.common_word: s for s in chip_type_specs(cluster)}
    registered: dict[str, list[tuple[int, int]]] = {}
    for word, slots, memory in Chip.objects.filter(cluster=cluster).values_list(
        "common_word", "slots", "memory"
    ):
        registered.setdefault(word, []).append((slots, memory))
    problems: list[tuple[CheckStatus, str]] = []
    for word in sorted(set(registered) - set(specs)):
        problems.append(
            (
                "fail",
                f"{len(registered[word])} chips register as {word}, which the device "
                "config does not define",
            )
        )
    for word, spec in specs.items():
        chips = registered.get(word)
        if not chips:
            problems.append(
                (
                    "warn",
                    f"{word} (chipName {spec.chip_name}) has no registered chips: "
                    "chipName must equal the name the driver reports",
                )
            )
            continue
        slots = slots_per_chip(spec.memory_allocatable, spec.templates)
        if any(c != (slots, spec.memory_allocatable) for c in chips):
            problems.append(
                (
                    "warn",
                    f"{word} chips advertise other slots or memory than the config "
                    f"({slots} slots, {spec.memory_allocatable} MB): the device "
                    "plugin has not restarted since the change",
                )
            )
    if not problems:
        return _check(
            "registrations", "ok", "node registrations agree with the device config"
        )
    worst = max((p[0] for p in problems), key=_RANK.__getitem__)
    return _check(
        "registrations",
        worst,
        "; ".join(p[1] for p in problems),
        "fix chipName/commonWord in the device config, or restart the device plugin",
    )


def _drift_check(cluster: Cluster) -> dict[str, Any]:
    drift = deviceconfig_drift_recorded(cluster)
    if drift["in_sync"]:
        return _check("device_config_drift", "ok", "no hand edit recorded")
    return _check(
        "device_config_drift",
        "warn",
        f"the ConfigMap was edited outside the portal (v{drift['live_version']})",
        "adopt the live content, or publish over it deliberately",
    )


def _volcano_queues_check(cluster: Cluster) -> dict[str, Any]:
    """Whether sync mirrors Volcano Queues (a cluster without Volcano's CRDs is skipped)."""
    cursor = SyncCursor.objects.filter(cluster=cluster, resource=VOLCANO_QUEUES).first()
    if cursor is not None and not cursor.served:
        return _check(
            "volcano_queues",
            "ok",
            "skipped: the cluster serves no Volcano Queue API (no Volcano CRDs, as "
            "with HAMi's own scheduler); portal queues are not created as Volcano "
            "Queues and requests never wait for one",
        )
    if cursor is None or cursor.last_list_at is None:
        return _check(
            "volcano_queues",
            "warn",
            "sync has not listed the Volcano Queues yet; requests do not wait for "
            "their queue until it has",
            "check the sync status of volcano-queues",
        )
    states = {
        row.name: ((row.data or {}).get("status") or {}).get("state") or "no state"
        for row in ClusterObject.objects.filter(cluster=cluster, kind="Queue")
    }
    not_open = sorted(
        f"{name} ({state})" for name, state in states.items() if state != "Open"
    )
    return _check(
        "volcano_queues",
        "ok",
        f"{len(states)} Volcano Queue(s) mirrored"
        + (f"; not Open: {', '.join(not_open)}" if not_open else ", all Open"),
    )


def cluster_health(cluster: Cluster) -> dict[str, Any]:
    """Configuration checks from what sync mirrored (no cluster API call).

    Returns:
        ``cluster``, ``check_status`` (the worst of all) and ``checks``: each
        with ``id``, ``check_status`` ("ok", "warn" or "fail"), ``message``
        and ``fix``, always in the same order and with the same ids.
    """
    conf, parsed = _volcano_conf(cluster)
    checks = [
        parsed,
        *_deviceshare_checks(cluster, conf),
        _preempt_check(conf),
        _daemonset_check(cluster),
        _registration_checks(cluster),
        _drift_check(cluster),
        _volcano_queues_check(cluster),
    ]
    worst = max((c["check_status"] for c in checks), key=_RANK.__getitem__)
    return {"cluster": cluster.name, "check_status": worst, "checks": checks}
