"""Checks of Volcano's scheduler configuration, read as the running Volcano reads it.

The deviceshare arguments (which switch enables vNPUs, the geometries
ConfigMap, the chip policy and its weight, the node lock), the predicates
plugin and the actions (its own preemption). Volcano's version comes from
the volcano-scheduler image (``apps.inventory.deviceconfig.versions``); an
unknown version is said, not guessed. The facts behind each check are in
docs/scheduler-behaviour.md ("Volcano scheduler configuration, by version",
"Volcano's own preemption", "Choosing the chip").
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.conf import settings

from apps.inventory.deviceconfig.checks import check as _check
from apps.inventory.deviceconfig.checks import mirrored_object as _object
from apps.inventory.deviceconfig.versions import Component, format_version
from apps.inventory.hami.goconf import (
    YamlSyntaxError,
    get_int,
    load_go_yaml,
    parse_bool,
)
from apps.inventory.models import Cluster

VOLCANO_CONFIG_KEY = "volcano-scheduler.conf"

UPSTREAM_ENABLE = "deviceshare.AscendHAMiVNPUEnable"
# Names from the guide; no Volcano release reads them (docs/scheduler-behaviour.md,
# "Volcano scheduler configuration, by version").
GUIDE_ENABLE = ("deviceshare.AscendVNPUEnable", "deviceshare.ASCEND310PVNPUEnable")
GEOMETRIES_NAME = "deviceshare.KnownGeometriesCMName"
GEOMETRIES_NAMESPACE = "deviceshare.KnownGeometriesCMNamespace"
# Volcano's defaults when the arguments are absent (deviceshare.go).
GEOMETRIES_DEFAULTS = ("volcano-vgpu-device-config", "kube-system")
SCHEDULE_POLICY = "deviceshare.SchedulePolicy"
SCHEDULE_WEIGHT = "deviceshare.ScheduleWeight"
NODE_LOCK = "deviceshare.NodeLockEnable"
# Releases up to here score spread wrongly (a chip with one vNPU first) and do
# not recheck the device predicate when preempting (docs/scheduler-behaviour.md).
SPREAD_BUG_UNTIL = NO_DEVICE_EVICTION_UNTIL = (1, 15, 1)


def volcano_conf(cluster: Cluster) -> tuple[dict[str, Any] | None, dict[str, Any]]:
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
        # gopkg.in/yaml.v2, as Volcano reads it: ``y``/``n``/``on`` are booleans
        conf = load_go_yaml(text) if isinstance(text, str) else None
    except YamlSyntaxError as exc:
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
    for plugin in _plugins(conf):
        if plugin.get("name") == "deviceshare":
            arguments = plugin.get("arguments")
            return dict(arguments) if isinstance(arguments, dict) else {}
    return None


def _plugins(conf: Mapping[str, Any]) -> list[dict[str, Any]]:
    tiers = conf.get("tiers")
    found = []
    for tier in tiers if isinstance(tiers, list) else []:
        plugins = tier.get("plugins") if isinstance(tier, dict) else None
        found += [p for p in plugins or [] if isinstance(p, dict)]
    return found


def _quoted_true(value: Any) -> bool:
    """A string Go's ``strconv.ParseBool`` reads as true (``"1"``, ``"t"``, ...)."""
    return isinstance(value, str) and parse_bool(value) is True


def _flag(
    args: Mapping[str, Any], name: str, volcano: Component | None
) -> tuple[bool | None, str]:
    """Whether Volcano reads ``name`` as true: True, False, or None (cannot tell).

    ``Arguments.GetBool``: a YAML bool (yaml.v2's, ``y`` and ``on`` too) always
    counts; a string that ``strconv.ParseBool`` reads as true (``"true"``,
    ``"1"``, ``"t"``, ...) is ignored by v1.14 and accepted from v1.15.0 on.
    The second value explains a quoted one.
    """
    value = args.get(name)
    if value is True:
        return True, ""
    if not _quoted_true(value):
        return False, ""
    version = volcano.version if volcano is not None else None
    if version is not None and version >= (1, 15, 0):
        return True, ""
    if version is not None and (1, 14, 0) <= version < (1, 15, 0):
        return False, (
            f"{name}: {value!r} is quoted; Volcano {format_version(version)} ignores "
            "it (only a YAML bool counts before v1.15.0)"
        )
    return None, (
        f"{name}: {value!r} is quoted: Volcano v1.14 ignores it, v1.15.0 and later "
        "accept it, and the version here is unknown"
    )


def _unquote_fix(name: str) -> str:
    return f"write {name}: true without quotes"


def _unreadable(ids: tuple[str, ...], why: str, fix: str = "") -> list[dict[str, Any]]:
    return [_check(id_, "fail", why, fix) for id_ in ids]


DEVICESHARE_CHECKS = (
    "deviceshare_enabled",
    "known_geometries",
    "chip_policy",
    "node_lock",
)


def deviceshare_checks(
    cluster: Cluster, conf: dict[str, Any] | None, volcano: Component | None
) -> list[dict[str, Any]]:
    if conf is None:
        why = "cannot check: the Volcano scheduler configuration is unreadable"
        return _unreadable(DEVICESHARE_CHECKS, why)
    args = _deviceshare_arguments(conf)
    if args is None:
        fix = f"add the deviceshare plugin with {UPSTREAM_ENABLE}: true to a tier"
        return _unreadable(DEVICESHARE_CHECKS, "no deviceshare plugin", fix)
    return [
        _enabled_check(args, volcano),
        _geometries_check(cluster, args),
        _chip_policy_check(args, volcano),
        _node_lock_check(args, volcano),
    ]


def _enabled_check(
    args: Mapping[str, Any], volcano: Component | None
) -> dict[str, Any]:
    """AscendHAMiVNPUEnable as this Volcano reads it; the guide's names only on its fork."""
    guide = [
        name
        for name in GUIDE_ENABLE
        if args.get(name) is True or _quoted_true(args.get(name))
    ]
    upstream, quoted = _flag(args, UPSTREAM_ENABLE, volcano)
    version = volcano.version if volcano is not None else None
    if volcano is not None and volcano.fork:
        if guide:
            return _check(
                "deviceshare_enabled",
                "ok",
                f"deviceshare is enabled with {', '.join(guide)}, which the guide's "
                "pre-release fork reads",
            )
        return _check(
            "deviceshare_enabled",
            "fail",
            f"{volcano.label} predates {UPSTREAM_ENABLE} and reads only the guide's "
            f"{GUIDE_ENABLE[0]}: Ascend vNPU scheduling is disabled",
            f"run upstream Volcano (volcanosh/vc-scheduler:v1.15.1) with "
            f"{UPSTREAM_ENABLE}: true",
        )
    if version is not None and version < (1, 14, 0):
        return _check(
            "deviceshare_enabled",
            "fail",
            f"{volcano.label if volcano else 'Volcano'} has no Ascend vNPU support "
            "in deviceshare (it arrived in v1.14.0)",
            f"upgrade volcano-scheduler to v1.15.1 (or v1.14.4) and set "
            f"{UPSTREAM_ENABLE}: true",
        )
    leftover = (
        f"; the guide's {', '.join(guide)} is read by no Volcano release (remove it)"
        if guide
        else ""
    )
    if upstream is True:
        return _check(
            "deviceshare_enabled",
            "ok",
            f"deviceshare has {UPSTREAM_ENABLE}: true{leftover}",
        )
    if upstream is None:
        return _check(
            "deviceshare_enabled", "warn", quoted, _unquote_fix(UPSTREAM_ENABLE)
        )
    if guide:
        # The names of the guide's fork: on any release they are unknown keys,
        # so deviceshare runs with Ascend vNPUs off and no error anywhere.
        return _check(
            "deviceshare_enabled",
            "fail",
            f"deviceshare sets only the guide's {', '.join(guide)}, which no Volcano "
            "release reads: Ascend vNPU scheduling is disabled (the names exist "
            "only in the guide's pre-release fork image)",
            f"replace {', '.join(guide)} with {UPSTREAM_ENABLE}: true (Volcano "
            "v1.14.4 or v1.15.1+)",
        )
    if quoted:
        return _check(
            "deviceshare_enabled",
            "fail",
            f"{quoted}: Ascend vNPU scheduling is disabled",
            _unquote_fix(UPSTREAM_ENABLE),
        )
    return _check(
        "deviceshare_enabled",
        "fail",
        "deviceshare does not enable Ascend vNPUs",
        f"set {UPSTREAM_ENABLE}: true",
    )


def _geometries_check(cluster: Cluster, args: Mapping[str, Any]) -> dict[str, Any]:
    name = args.get(GEOMETRIES_NAME, GEOMETRIES_DEFAULTS[0])
    namespace = args.get(GEOMETRIES_NAMESPACE, GEOMETRIES_DEFAULTS[1])
    wanted = (cluster.device_config_name, cluster.device_config_namespace)
    if (name, namespace) == wanted:
        return _check(
            "known_geometries",
            "ok",
            f"deviceshare reads the device config {namespace}/{name}",
        )
    return _check(
        "known_geometries",
        "fail",
        f"deviceshare reads {namespace}/{name}, not the device config "
        f"{wanted[1]}/{wanted[0]}; Volcano then falls back to a built-in "
        "310P3-only default",
        f"set {GEOMETRIES_NAME}: {wanted[0]} and {GEOMETRIES_NAMESPACE}: {wanted[1]}",
    )


def _chip_policy_check(
    args: Mapping[str, Any], volcano: Component | None
) -> dict[str, Any]:
    """SchedulePolicy scores chips only with ScheduleWeight > 0; else a random chip."""
    policy = args.get(SCHEDULE_POLICY)
    written = args.get(SCHEDULE_WEIGHT)
    weight = get_int(args, SCHEDULE_WEIGHT)
    random_chip = (
        "Volcano takes any fitting chip of the chosen node at random (Go map order)"
    )
    if written is not None and weight is None:
        # arguments.go GetInt keeps only a Go int: "10" or 10.0 leave it 0.
        return _check(
            "chip_policy",
            "warn",
            f"{SCHEDULE_WEIGHT}: {written!r} is not a whole number as Volcano reads "
            f"it (only an unquoted integer): the weight stays 0, so {random_chip}",
            f"write {SCHEDULE_WEIGHT}: 10 without quotes (any whole number above 0)",
        )
    weight = weight or 0
    if not policy:
        if weight > 0:
            return _check(
                "chip_policy",
                "warn",
                f"{SCHEDULE_WEIGHT}: {weight} without {SCHEDULE_POLICY}: every chip "
                f"scores 0, so {random_chip}",
                f"set {SCHEDULE_POLICY}: binpack",
            )
        return _check(
            "chip_policy",
            "ok",
            f"no {SCHEDULE_POLICY} (as in the guide): {random_chip}; the portal "
            "chooses the node and reports the chip once the pod is bound",
        )
    if policy not in ("binpack", "spread"):
        return _check(
            "chip_policy",
            "warn",
            f"{SCHEDULE_POLICY}: {policy!r} is neither binpack nor spread: every "
            f"chip scores 0, so {random_chip}",
            f"set {SCHEDULE_POLICY}: binpack (or spread)",
        )
    if weight <= 0:
        return _check(
            "chip_policy",
            "warn",
            f"{SCHEDULE_POLICY}: {policy} has no effect: {SCHEDULE_WEIGHT} is 0, "
            f"and with weight 0 {random_chip}",
            f"set {SCHEDULE_WEIGHT}: 10 (any whole number above 0)",
        )
    version = volcano.version if volcano is not None and not volcano.fork else None
    if policy == "spread" and (version is None or version <= SPREAD_BUG_UNTIL):
        which = (
            f"Volcano {format_version(version)}"
            if version is not None
            else "Volcano up to v1.15.1 (the version here is unknown)"
        )
        return _check(
            "chip_policy",
            "warn",
            f"{SCHEDULE_POLICY}: spread on {which} scores a chip holding exactly "
            "one vNPU highest, not an unused one (fixed after v1.15.1)",
            f"set {SCHEDULE_POLICY}: binpack, or run a Volcano release after v1.15.1",
        )
    return _check(
        "chip_policy",
        "ok",
        f"Volcano scores nodes by {policy} ({SCHEDULE_WEIGHT}: {weight}); inside "
        "a node v1.15.1 still takes any fitting chip (seen on the real scheduler)",
    )


def _node_lock_check(
    args: Mapping[str, Any], volcano: Component | None
) -> dict[str, Any]:
    enabled, quoted = _flag(args, NODE_LOCK, volcano)
    if enabled is True:
        return _check(
            "node_lock",
            "ok",
            f"{NODE_LOCK}: true: Volcano locks a node (hami.io/mutex.lock) while it "
            "assigns its devices",
        )
    if enabled is None:
        return _check("node_lock", "warn", quoted, _unquote_fix(NODE_LOCK))
    return _check(
        "node_lock",
        "warn",
        (f"{quoted}; " if quoted else f"no {NODE_LOCK}: ")
        + "without the node lock two pods admitted to one node in one pass can "
        "receive each other's allocation (inferred from Volcano's code)",
        f"set {NODE_LOCK}: true",
    )


def predicates_check(conf: dict[str, Any] | None) -> dict[str, Any]:
    if conf is None:
        return _check(
            "predicates_plugin",
            "fail",
            "cannot check: the Volcano scheduler configuration is unreadable",
        )
    if any(p.get("name") == "predicates" for p in _plugins(conf)):
        return _check("predicates_plugin", "ok", "the predicates plugin is configured")
    return _check(
        "predicates_plugin",
        "fail",
        "no predicates plugin: Volcano assigns a pod's vNPU (the hami.io/* "
        "annotations) in predicates, so without it pods bind with no device",
        "add `- name: predicates` to the tier that has deviceshare",
    )


def preempt_check(
    conf: dict[str, Any] | None, volcano: Component | None
) -> dict[str, Any]:
    """Volcano's own ``preempt`` is not needed; warn where it evicts vNPU pods unasked."""
    if conf is None:
        return _check(
            "preempt_action",
            "fail",
            "cannot check: the Volcano scheduler configuration is unreadable",
        )
    actions = [a.strip() for a in str(conf.get("actions") or "").split(",")]
    if "preempt" not in actions:
        return _check(
            "preempt_action",
            "ok",
            "Volcano's actions have no preempt: it evicts no vNPU pod on its own; "
            "the portal evicts only what an admin approved",
        )
    version = volcano.version if volcano is not None else None
    if volcano is not None and (
        volcano.fork or (version and version <= NO_DEVICE_EVICTION_UNTIL)
    ):
        return _check(
            "preempt_action",
            "ok",
            f"preempt is in the actions; {volcano.label} does not evict for vNPU "
            "memory (its idle check sees only slots, cpu and memory)",
        )
    who = (
        volcano.label
        if version is not None and volcano is not None
        else "Volcano (version unknown)"
    )
    return _check(
        "preempt_action",
        "warn",
        f"preempt is in the actions: {who} may evict lower-priority vNPU pods of "
        "the same queue without the portal's approval (Volcano after v1.15.1 "
        "rechecks the device predicate when preempting)",
        'remove preempt, e.g. actions: "enqueue, allocate, backfill" (the portal '
        "proposes preemptions for approval), or label pods that must stay "
        'volcano.sh/preemptable: "false"',
    )
