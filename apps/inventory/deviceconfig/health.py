"""Configuration health from what sync mirrored (no API call).

``cluster_health`` runs every check in a fixed order: Volcano's scheduler
configuration, read as the running Volcano reads it
(``apps.inventory.deviceconfig.volcano_health``), the component versions, the
device config's ``vnpus`` shape against every running component's version,
the device-plugin DaemonSet, node registrations, a recorded hand edit of the
device config, and last whether Volcano Queues are mirrored (skipped, with
the reason, on a cluster that has no Volcano CRDs). The live reads are
elsewhere: the ConfigMap and its drift in
``apps.inventory.deviceconfig.liveconfig``, restart state in
``apps.inventory.deviceconfig.restarts``. The facts behind each check are in
docs/scheduler-behaviour.md ("Device config shape, by component version").
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db.models import Count

from apps.inventory import selectors
from apps.inventory.deviceconfig.checks import RANK as _RANK
from apps.inventory.deviceconfig.checks import CheckStatus
from apps.inventory.deviceconfig.checks import check as _check
from apps.inventory.deviceconfig.checks import mirrored_object as _object
from apps.inventory.deviceconfig.selectors import deviceconfig_drift_recorded
from apps.inventory.deviceconfig.specs import chip_type_specs
from apps.inventory.deviceconfig.versions import (
    Component,
    cluster_components,
    first_of,
    shape_readers,
)
from apps.inventory.deviceconfig.volcano_health import (
    deviceshare_checks,
    predicates_check,
    preempt_check,
    volcano_conf,
)
from apps.inventory.hami.deviceconfig import DeviceConfigError, parse_device_config
from apps.inventory.hami.validation import slots_per_chip
from apps.inventory.models import Chip, Cluster, ClusterObject, Node, SyncCursor
from apps.inventory.sync.targets import VOLCANO_QUEUES

#: Slices named in a check's message; the rest are counted.
MAX_NAMED = 5
#: What a hami-core chip's ``devcore`` should be: ``-core`` is a percent.
CORE_PERCENT = 100


def _versions_check(components: list[Component]) -> dict[str, Any]:
    if not components:
        return _check(
            "component_versions",
            "warn",
            "sync has seen no Volcano scheduler, HAMi scheduler or device plugin: "
            "the checks that depend on a version cannot be made",
            "name their workloads in WATCHED_DEPLOYMENTS and DEVICE_PLUGIN_DAEMONSET",
        )
    labels = "; ".join(
        c.label + ("" if c.running else " (scaled to zero)") for c in components
    )
    unknown = [c for c in components if c.version is None and not c.fork]
    if first_of(components, "volcano") is None:
        return _check(
            "component_versions",
            "warn",
            f"{labels}; no Volcano scheduler among the watched Deployments, so its "
            "version is unknown",
            "add volcano-scheduler's namespace/name to WATCHED_DEPLOYMENTS",
        )
    if unknown:
        return _check(
            "component_versions",
            "warn",
            f"{labels}: the checks that depend on their version say what they "
            "cannot tell",
            "run images with release tags (e.g. volcanosh/vc-scheduler:v1.15.1)",
        )
    return _check("component_versions", "ok", labels)


def _shape_check(cluster: Cluster) -> dict[str, Any]:
    """The live device config's ``vnpus`` shape against every running component."""
    ref = f"{cluster.device_config_namespace}/{cluster.device_config_name}"
    row = _object(cluster, "ConfigMap", ref)
    text = (
        ((row.data or {}).get("data") or {}).get("device-config.yaml") if row else None
    )
    if not isinstance(text, str):
        return _check(
            "device_config_shape",
            "warn",
            f"cannot check: sync has not seen device-config.yaml in {ref}",
        )
    try:
        document = parse_device_config(text)
    except DeviceConfigError as exc:
        return _check(
            "device_config_shape",
            "fail",
            f"{ref} device-config.yaml does not parse: {exc}",
            "adopt or publish a valid device config",
        )
    if not document.raw_configs:
        return _check(
            "device_config_shape", "ok", "the device config has no vnpus entries"
        )
    readers = shape_readers(cluster, document.shape)
    bad = [r for r in readers if r.effect in ("crash", "fallback")]
    unknown = [r for r in readers if r.effect == "unknown"]
    if not bad and not unknown:
        said = "; ".join(r.message for r in readers) or "no running component"
        return _check("device_config_shape", "ok", said)
    shown = bad + unknown
    fixes = list(dict.fromkeys(r.fix for r in shown if r.fix))
    return _check(
        "device_config_shape",
        "fail" if bad else "warn",
        "; ".join(r.message for r in shown),
        "; ".join(fixes),
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
    # Per type: each distinct (slots, memory) the chips advertise, with its
    # chip count, grouped in the database (a few rows, not one per chip).
    registered: dict[str, dict[tuple[int, int], int]] = {}
    for word, slots, memory, n in (
        Chip.objects.filter(cluster=cluster)
        .order_by()
        .values_list("common_word", "slots", "memory")
        .annotate(n=Count("id"))
    ):
        registered.setdefault(word, {})[(slots, memory)] = n
    return registrations_judged(cluster, registered, _core_not_percent(cluster))


def _core_not_percent(cluster: Cluster) -> dict[str, dict[int, int]]:
    """Per commonWord, the chips of hami-core nodes whose ``devcore`` is not
    100, by ``devcore``. In hami-core mode ``-core`` is a percent of 100, but
    the device plugin registers 100 only from v1.4.0 (``register.go``; v1.3.0
    registers the config's aiCore), so a larger ask never fits such a chip."""
    short: dict[str, dict[int, int]] = {}
    for word, devcore, n in (
        Chip.objects.filter(cluster=cluster, node__hami_vnpu_core=True)
        .exclude(aicore=CORE_PERCENT)
        .order_by()
        .values_list("common_word", "aicore")
        .annotate(n=Count("id"))
    ):
        short.setdefault(word, {})[devcore] = n
    return short


def registrations_judged(
    cluster: Cluster,
    registered: dict[str, dict[tuple[int, int], int]],
    core_not_percent: dict[str, dict[int, int]] | None = None,
) -> dict[str, Any]:
    """The registrations check from what the chips advertise: per commonWord,
    each distinct (slots, memory) with its chip count, and the chips of
    hami-core nodes that register a devcore other than 100."""
    specs = {s.common_word: s for s in chip_type_specs(cluster)}
    config_fix = "fix chipName/commonWord in the device config"
    restart_fix = "restart the device plugin"
    problems: list[tuple[CheckStatus, str, str]] = []
    for word in sorted(set(registered) - set(specs)):
        problems.append(
            (
                "fail",
                f"{sum(registered[word].values())} chips register as {word}, which "
                "the device config does not define",
                config_fix,
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
                    config_fix,
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
                    restart_fix,
                )
            )
    for word, by_devcore in sorted((core_not_percent or {}).items()):
        cores = ", ".join(
            f"{n} with devcore {core}" for core, n in sorted(by_devcore.items())
        )
        problems.append(
            (
                "warn",
                f"{word} chips on hami-core nodes register {cores}, not "
                f"{CORE_PERCENT}: a -core percent above that never fits (device "
                "plugin v1.3.0 registers the template aiCore; v1.4.0 registers "
                f"{CORE_PERCENT})",
                "upgrade the device plugin on hami-core nodes to v1.4.0",
            )
        )
    if not problems:
        return _check(
            "registrations", "ok", "node registrations agree with the device config"
        )
    worst = max((p[0] for p in problems), key=_RANK.__getitem__)
    fixes = list(dict.fromkeys(p[2] for p in problems))
    return _check(
        "registrations",
        worst,
        "; ".join(p[1] for p in problems),
        "; ".join(fixes),
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


def _unhealthy_chips_check(cluster: Cluster) -> dict[str, Any]:
    """Slices running on a chip reported unhealthy: the device plugin's
    Allocate hands out a sick chip (it checks no health), so what Volcano
    bound there runs there (docs/scheduler-behaviour.md)."""
    slices = list(selectors.slices_on_unhealthy_chips(cluster.pk)[: MAX_NAMED + 1])
    if not slices:
        return _check(
            "slices_on_unhealthy_chips", "ok", "no vNPU runs on an unhealthy chip"
        )
    total = selectors.slices_on_unhealthy_chips(cluster.pk).count()
    named = ", ".join(
        f"{s.namespace}/{s.pod_name} (node {s.node_name}, chip {s.chip.index})"
        for s in slices[:MAX_NAMED]
    )
    more = f" and {total - MAX_NAMED} more" if total > MAX_NAMED else ""
    return _check(
        "slices_on_unhealthy_chips",
        "warn",
        f"{total} vNPU(s) run on a chip its device plugin reports unhealthy: "
        f"{named}{more}",
        "move them: cancel their requests and submit them again (the portal "
        "books no unhealthy chip), or delete the pods; under Volcano a new pod "
        "sent to that node may be bound to the sick chip too",
    )


def cluster_health(cluster: Cluster) -> dict[str, Any]:
    """Configuration checks from what sync mirrored (no cluster API call).

    Returns:
        ``cluster``, ``check_status`` (the worst of all) and ``checks``: each
        with ``id``, ``check_status`` ("ok", "warn" or "fail"), ``message``
        and ``fix``, always in the same order and with the same ids.
    """
    conf, parsed = volcano_conf(cluster)
    components = cluster_components(cluster)
    volcano = first_of(components, "volcano")
    checks = [
        parsed,
        _versions_check(components),
        *deviceshare_checks(cluster, conf, volcano),
        predicates_check(conf),
        _shape_check(cluster),
        preempt_check(conf, volcano),
        _daemonset_check(cluster),
        _registration_checks(cluster),
        _unhealthy_chips_check(cluster),
        _drift_check(cluster),
        _volcano_queues_check(cluster),
    ]
    worst = max((c["check_status"] for c in checks), key=_RANK.__getitem__)
    return {"cluster": cluster.name, "check_status": worst, "checks": checks}
