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
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

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
from apps.inventory.hami.deviceconfig import (
    ChipTypeSpec,
    DeviceConfigError,
    parse_device_config,
)
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
            _(
                "sync has seen no Volcano scheduler, HAMi scheduler or device "
                "plugin: the checks that depend on a version cannot be made"
            ),
            _("name their workloads in %(deployments)s and %(daemonset)s")
            % {
                "deployments": "WATCHED_DEPLOYMENTS",
                "daemonset": "DEVICE_PLUGIN_DAEMONSET",
            },
        )
    labels = "; ".join(
        c.label
        if c.running
        else _("%(component)s (scaled to zero)") % {"component": c.label}
        for c in components
    )
    unknown = [c for c in components if c.version is None and not c.fork]
    if first_of(components, "volcano") is None:
        return _check(
            "component_versions",
            "warn",
            _(
                "%(components)s; no Volcano scheduler among the watched "
                "Deployments, so its version is unknown"
            )
            % {"components": labels},
            _("add volcano-scheduler's namespace/name to %(setting)s")
            % {"setting": "WATCHED_DEPLOYMENTS"},
        )
    if unknown:
        return _check(
            "component_versions",
            "warn",
            _(
                "%(components)s: the checks that depend on their version say what "
                "they cannot tell"
            )
            % {"components": labels},
            _("run images with release tags (e.g. %(image)s)")
            % {"image": "volcanosh/vc-scheduler:v1.15.1"},
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
            _("cannot check: sync has not seen %(key)s in %(ref)s")
            % {"key": "device-config.yaml", "ref": ref},
        )
    try:
        document = parse_device_config(text)
    except DeviceConfigError as exc:
        return _check(
            "device_config_shape",
            "fail",
            _("%(ref)s %(key)s does not parse: %(error)s")
            % {"ref": ref, "key": "device-config.yaml", "error": exc},
            _("adopt or publish a valid device config"),
        )
    if not document.raw_configs:
        return _check(
            "device_config_shape",
            "ok",
            _("the device config has no %(key)s entries") % {"key": "vnpus"},
        )
    readers = shape_readers(cluster, document.shape)
    bad = [r for r in readers if r.effect in ("crash", "fallback")]
    unknown = [r for r in readers if r.effect == "unknown"]
    if not bad and not unknown:
        said = "; ".join(r.message for r in readers) or _("no running component")
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
            _("DaemonSet %(ref)s has not been seen by sync") % {"ref": ref},
            _("deploy the HAMi Ascend device plugin (%(manifest)s)")
            % {"manifest": "ascend-device-plugin.yaml"},
        )
    status = (row.data or {}).get("status") or {}
    desired = int(status.get("desiredNumberScheduled") or 0)
    ready = int(status.get("numberReady") or 0)
    ascend_nodes = Node.objects.filter(cluster=cluster, ascend_enabled=True).count()
    if desired < ascend_nodes:
        return _check(
            "device_plugin",
            "fail",
            _(
                "%(ref)s is scheduled on %(desired)d nodes but %(labelled)d are "
                "labelled %(label)s"
            )
            % {
                "ref": ref,
                "desired": desired,
                "labelled": ascend_nodes,
                "label": "ascend=on",
            },
            _("check the DaemonSet's nodeSelector and tolerations"),
        )
    if ready < desired:
        return _check(
            "device_plugin",
            "fail",
            _("%(ref)s: %(ready)d of %(desired)d pods are ready")
            % {"ref": ref, "ready": ready, "desired": desired},
            _("%(command)s of the DaemonSet")
            % {"command": f"kubectl -n {ref.split('/')[0]} describe pods"},
        )
    return _check(
        "device_plugin",
        "ok",
        _("%(ref)s: %(ready)d of %(desired)d pods ready on %(nodes)d %(label)s nodes")
        % {
            "ref": ref,
            "ready": ready,
            "desired": desired,
            "nodes": ascend_nodes,
            "label": "ascend=on",
        },
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


_Problem = tuple[CheckStatus, str, str]


def registrations_judged(
    cluster: Cluster,
    registered: dict[str, dict[tuple[int, int], int]],
    core_not_percent: dict[str, dict[int, int]] | None = None,
) -> dict[str, Any]:
    """The registrations check from what the chips advertise: per commonWord,
    each distinct (slots, memory) with its chip count, and the chips of
    hami-core nodes that register a devcore other than 100."""
    specs = {s.common_word: s for s in chip_type_specs(cluster)}
    problems = _registered_against_config(registered, specs)
    problems += _core_not_percent_problems(core_not_percent or {})
    if not problems:
        return _check(
            "registrations",
            "ok",
            _("node registrations agree with the device config"),
        )
    worst = max((p[0] for p in problems), key=_RANK.__getitem__)
    fixes = list(dict.fromkeys(p[2] for p in problems))
    return _check(
        "registrations",
        worst,
        "; ".join(p[1] for p in problems),
        "; ".join(fixes),
    )


def _registered_against_config(
    registered: dict[str, dict[tuple[int, int], int]], specs: dict[str, ChipTypeSpec]
) -> list[_Problem]:
    """Chips registering a type the config lacks, types without chips, and
    chips advertising another geometry than the config's."""
    config_fix = _("fix %(fields)s in the device config") % {
        "fields": "chipName/commonWord"
    }
    problems: list[_Problem] = []
    for word in sorted(set(registered) - set(specs)):
        count = sum(registered[word].values())
        problems.append(
            (
                "fail",
                ngettext(
                    "%(count)d chip registers as %(chip_type)s, which the device "
                    "config does not define",
                    "%(count)d chips register as %(chip_type)s, which the device "
                    "config does not define",
                    count,
                )
                % {"count": count, "chip_type": word},
                config_fix,
            )
        )
    for word, spec in specs.items():
        chips = registered.get(word)
        if not chips:
            problems.append(
                (
                    "warn",
                    _(
                        "%(chip_type)s (chipName %(chip_name)s) has no registered "
                        "chips: chipName must equal the name the driver reports"
                    )
                    % {"chip_type": word, "chip_name": spec.chip_name},
                    config_fix,
                )
            )
            continue
        slots = slots_per_chip(spec.memory_allocatable, spec.templates)
        if any(c != (slots, spec.memory_allocatable) for c in chips):
            problems.append(
                (
                    "warn",
                    _(
                        "%(chip_type)s chips advertise other slots or memory than "
                        "the config (%(slots)d slots, %(memory)d MB): the device "
                        "plugin has not restarted since the change"
                    )
                    % {
                        "chip_type": word,
                        "slots": slots,
                        "memory": spec.memory_allocatable,
                    },
                    _("restart the device plugin"),
                )
            )
    return problems


def _core_not_percent_problems(
    core_not_percent: dict[str, dict[int, int]],
) -> list[_Problem]:
    problems: list[_Problem] = []
    for word, by_devcore in sorted(core_not_percent.items()):
        cores = ", ".join(
            _("%(count)d with devcore %(devcore)d") % {"count": n, "devcore": core}
            for core, n in sorted(by_devcore.items())
        )
        problems.append(
            (
                "warn",
                _(
                    "%(chip_type)s chips on hami-core nodes register %(cores)s, not "
                    "%(percent)d: a -core percent above that never fits (device "
                    "plugin v1.3.0 registers the template aiCore; v1.4.0 registers "
                    "%(percent)d)"
                )
                % {"chip_type": word, "cores": cores, "percent": CORE_PERCENT},
                _("upgrade the device plugin on hami-core nodes to v1.4.0"),
            )
        )
    return problems


def _drift_check(cluster: Cluster) -> dict[str, Any]:
    drift = deviceconfig_drift_recorded(cluster)
    if drift["in_sync"]:
        return _check("device_config_drift", "ok", _("no hand edit recorded"))
    return _check(
        "device_config_drift",
        "warn",
        _("the ConfigMap was edited outside the portal (v%(version)s)")
        % {"version": drift["live_version"]},
        _("adopt the live content, or publish over it deliberately"),
    )


def _volcano_queues_check(cluster: Cluster) -> dict[str, Any]:
    """Whether sync mirrors Volcano Queues (a cluster without Volcano's CRDs is skipped)."""
    cursor = SyncCursor.objects.filter(cluster=cluster, resource=VOLCANO_QUEUES).first()
    if cursor is not None and not cursor.served:
        return _check(
            "volcano_queues",
            "ok",
            _(
                "skipped: the cluster serves no Volcano Queue API (no Volcano CRDs, "
                "as with HAMi's own scheduler); portal queues are not created as "
                "Volcano Queues and requests never wait for one"
            ),
        )
    if cursor is None or cursor.last_list_at is None:
        return _check(
            "volcano_queues",
            "warn",
            _(
                "sync has not listed the Volcano Queues yet; requests do not wait "
                "for their queue until it has"
            ),
            _("check the sync status of %(resource)s") % {"resource": VOLCANO_QUEUES},
        )
    states = {
        row.name: ((row.data or {}).get("status") or {}).get("state") or _("no state")
        for row in ClusterObject.objects.filter(cluster=cluster, kind="Queue")
    }
    not_open = sorted(
        f"{name} ({state})" for name, state in states.items() if state != "Open"
    )
    return _check("volcano_queues", "ok", _queues_mirrored(len(states), not_open))


def _queues_mirrored(count: int, not_open: list[str]) -> str:
    if not_open:
        return ngettext(
            "%(count)d Volcano Queue mirrored; not Open: %(queues)s",
            "%(count)d Volcano Queues mirrored; not Open: %(queues)s",
            count,
        ) % {"count": count, "queues": ", ".join(not_open)}
    return ngettext(
        "%(count)d Volcano Queue mirrored, all Open",
        "%(count)d Volcano Queues mirrored, all Open",
        count,
    ) % {"count": count}


def _unhealthy_chips_check(cluster: Cluster) -> dict[str, Any]:
    """Slices running on a chip reported unhealthy: the device plugin's
    Allocate hands out a sick chip (it checks no health), so what Volcano
    bound there runs there (docs/scheduler-behaviour.md)."""
    slices = list(selectors.slices_on_unhealthy_chips(cluster.pk)[: MAX_NAMED + 1])
    if not slices:
        return _check(
            "slices_on_unhealthy_chips", "ok", _("no vNPU runs on an unhealthy chip")
        )
    total = selectors.slices_on_unhealthy_chips(cluster.pk).count()
    named = ", ".join(
        _("%(pod)s (node %(node)s, chip %(chip)d)")
        % {
            "pod": f"{s.namespace}/{s.pod_name}",
            "node": s.node_name,
            "chip": s.chip.index,
        }
        for s in slices[:MAX_NAMED]
    )
    if total > MAX_NAMED:
        named += _(" and %(count)d more") % {"count": total - MAX_NAMED}
    return _check(
        "slices_on_unhealthy_chips",
        "warn",
        ngettext(
            "%(count)d vNPU runs on a chip its device plugin reports unhealthy: "
            "%(pods)s",
            "%(count)d vNPUs run on a chip its device plugin reports unhealthy: "
            "%(pods)s",
            total,
        )
        % {"count": total, "pods": named},
        _(
            "move them: cancel their requests and submit them again (the portal "
            "books no unhealthy chip), or delete the pods; under Volcano a new pod "
            "sent to that node may be bound to the sick chip too"
        ),
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
