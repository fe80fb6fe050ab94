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
from django.utils.translation import gettext as _

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
            _("ConfigMap %(ref)s has not been seen by sync") % {"ref": ref},
            _("install Volcano, or set %(setting)s to its ConfigMap")
            % {"setting": "VOLCANO_SCHEDULER_CONFIGMAP"},
        )
    text = ((row.data or {}).get("data") or {}).get(VOLCANO_CONFIG_KEY)
    try:
        # gopkg.in/yaml.v2, as Volcano reads it: ``y``/``n``/``on`` are booleans
        conf = load_go_yaml(text) if isinstance(text, str) else None
    except YamlSyntaxError as exc:
        return None, _check(
            "volcano_config",
            "fail",
            _("%(ref)s %(key)s is not valid YAML: %(error)s")
            % {"ref": ref, "key": VOLCANO_CONFIG_KEY, "error": exc},
            _("fix the YAML; volcano-scheduler keeps its last good configuration"),
        )
    if not isinstance(conf, dict):
        return None, _check(
            "volcano_config",
            "fail",
            _("%(ref)s has no %(key)s mapping")
            % {"ref": ref, "key": VOLCANO_CONFIG_KEY},
            _("put the scheduler configuration under the key %(key)s")
            % {"key": VOLCANO_CONFIG_KEY},
        )
    return conf, _check(
        "volcano_config",
        "ok",
        _("%(ref)s %(key)s parsed") % {"ref": ref, "key": VOLCANO_CONFIG_KEY},
    )


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
        return False, _(
            "%(name)s: %(value)s is quoted; Volcano %(version)s ignores it (only a "
            "YAML bool counts before v1.15.0)"
        ) % {"name": name, "value": repr(value), "version": format_version(version)}
    return None, _(
        "%(name)s: %(value)s is quoted: Volcano v1.14 ignores it, v1.15.0 and later "
        "accept it, and the version here is unknown"
    ) % {"name": name, "value": repr(value)}


def _unquote_fix(name: str) -> str:
    return _("write %(name)s: true without quotes") % {"name": name}


def _unreadable_conf() -> str:
    return _("cannot check: the Volcano scheduler configuration is unreadable")


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
        return _unreadable(DEVICESHARE_CHECKS, _unreadable_conf())
    args = _deviceshare_arguments(conf)
    if args is None:
        fix = _("add the deviceshare plugin with %(flag)s: true to a tier") % {
            "flag": UPSTREAM_ENABLE
        }
        return _unreadable(DEVICESHARE_CHECKS, _("no deviceshare plugin"), fix)
    return [
        _enabled_check(args, volcano),
        _geometries_check(cluster, args),
        _chip_policy_check(args, volcano),
        _node_lock_check(args, volcano),
    ]


def _enabled_where_unsupported(
    volcano: Component | None, guide: list[str]
) -> dict[str, Any] | None:
    """The verdict on the guide's fork, or on a Volcano before Ascend vNPUs; None elsewhere."""
    version = volcano.version if volcano is not None else None
    if volcano is not None and volcano.fork:
        if guide:
            return _check(
                "deviceshare_enabled",
                "ok",
                _(
                    "deviceshare is enabled with %(names)s, which the guide's "
                    "pre-release fork reads"
                )
                % {"names": ", ".join(guide)},
            )
        return _check(
            "deviceshare_enabled",
            "fail",
            _(
                "%(volcano)s predates %(flag)s and reads only the guide's "
                "%(guide)s: Ascend vNPU scheduling is disabled"
            )
            % {
                "volcano": volcano.label,
                "flag": UPSTREAM_ENABLE,
                "guide": GUIDE_ENABLE[0],
            },
            _("run upstream Volcano (%(image)s) with %(flag)s: true")
            % {"image": "volcanosh/vc-scheduler:v1.15.1", "flag": UPSTREAM_ENABLE},
        )
    if version is not None and version < (1, 14, 0):
        return _check(
            "deviceshare_enabled",
            "fail",
            _(
                "%(volcano)s has no Ascend vNPU support in deviceshare (it arrived "
                "in v1.14.0)"
            )
            % {"volcano": volcano.label if volcano else "Volcano"},
            _(
                "upgrade volcano-scheduler to v1.15.1 (or v1.14.4) and set %(flag)s: true"
            )
            % {"flag": UPSTREAM_ENABLE},
        )
    return None


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
    unsupported = _enabled_where_unsupported(volcano, guide)
    if unsupported is not None:
        return unsupported
    leftover = (
        _("; the guide's %(names)s is read by no Volcano release (remove it)")
        % {"names": ", ".join(guide)}
        if guide
        else ""
    )
    if upstream is True:
        return _check(
            "deviceshare_enabled",
            "ok",
            _("deviceshare has %(flag)s: true") % {"flag": UPSTREAM_ENABLE} + leftover,
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
            _(
                "deviceshare sets only the guide's %(names)s, which no Volcano "
                "release reads: Ascend vNPU scheduling is disabled (the names exist "
                "only in the guide's pre-release fork image)"
            )
            % {"names": ", ".join(guide)},
            _("replace %(names)s with %(flag)s: true (Volcano v1.14.4 or v1.15.1+)")
            % {"names": ", ".join(guide), "flag": UPSTREAM_ENABLE},
        )
    if quoted:
        return _check(
            "deviceshare_enabled",
            "fail",
            _("%(problem)s: Ascend vNPU scheduling is disabled") % {"problem": quoted},
            _unquote_fix(UPSTREAM_ENABLE),
        )
    return _check(
        "deviceshare_enabled",
        "fail",
        _("deviceshare does not enable Ascend vNPUs"),
        _set(UPSTREAM_ENABLE, "true"),
    )


def _set(name: str, value: str) -> str:
    return _("set %(setting)s") % {"setting": f"{name}: {value}"}


def _geometries_check(cluster: Cluster, args: Mapping[str, Any]) -> dict[str, Any]:
    name = args.get(GEOMETRIES_NAME, GEOMETRIES_DEFAULTS[0])
    namespace = args.get(GEOMETRIES_NAMESPACE, GEOMETRIES_DEFAULTS[1])
    wanted = (cluster.device_config_name, cluster.device_config_namespace)
    if (name, namespace) == wanted:
        return _check(
            "known_geometries",
            "ok",
            _("deviceshare reads the device config %(ref)s")
            % {"ref": f"{namespace}/{name}"},
        )
    return _check(
        "known_geometries",
        "fail",
        _(
            "deviceshare reads %(ref)s, not the device config %(wanted)s; Volcano "
            "then falls back to a built-in 310P3-only default"
        )
        % {"ref": f"{namespace}/{name}", "wanted": f"{wanted[1]}/{wanted[0]}"},
        _("set %(name)s and %(namespace)s")
        % {
            "name": f"{GEOMETRIES_NAME}: {wanted[0]}",
            "namespace": f"{GEOMETRIES_NAMESPACE}: {wanted[1]}",
        },
    )


def _weight_unreadable(written: Any, random_chip: str) -> dict[str, Any]:
    # arguments.go GetInt keeps only a Go int: "10" or 10.0 leave it 0.
    return _check(
        "chip_policy",
        "warn",
        _(
            "%(name)s: %(value)s is not a whole number as Volcano reads it (only "
            "an unquoted integer): the weight stays 0, so %(random_chip)s"
        )
        % {
            "name": SCHEDULE_WEIGHT,
            "value": repr(written),
            "random_chip": random_chip,
        },
        _("write %(setting)s without quotes (any whole number above 0)")
        % {"setting": f"{SCHEDULE_WEIGHT}: 10"},
    )


def _no_policy(weight: int, random_chip: str) -> dict[str, Any]:
    if weight > 0:
        return _check(
            "chip_policy",
            "warn",
            _("%(setting)s without %(policy)s: every chip scores 0, so %(random_chip)s")
            % {
                "setting": f"{SCHEDULE_WEIGHT}: {weight}",
                "policy": SCHEDULE_POLICY,
                "random_chip": random_chip,
            },
            _set(SCHEDULE_POLICY, "binpack"),
        )
    return _check(
        "chip_policy",
        "ok",
        _(
            "no %(policy)s (as in the guide): %(random_chip)s; the portal "
            "chooses the node and reports the chip once the pod is bound"
        )
        % {"policy": SCHEDULE_POLICY, "random_chip": random_chip},
    )


def _chip_policy_check(
    args: Mapping[str, Any], volcano: Component | None
) -> dict[str, Any]:
    """SchedulePolicy scores chips only with ScheduleWeight > 0; else a random chip."""
    policy = args.get(SCHEDULE_POLICY)
    written = args.get(SCHEDULE_WEIGHT)
    weight = get_int(args, SCHEDULE_WEIGHT)
    random_chip = _(
        "Volcano takes any fitting chip of the chosen node at random (Go map order)"
    )
    if written is not None and weight is None:
        return _weight_unreadable(written, random_chip)
    weight = weight or 0
    if not policy:
        return _no_policy(weight, random_chip)
    if policy not in ("binpack", "spread"):
        return _check(
            "chip_policy",
            "warn",
            _(
                "%(policy)s: %(value)s is neither binpack nor spread: every chip "
                "scores 0, so %(random_chip)s"
            )
            % {
                "policy": SCHEDULE_POLICY,
                "value": repr(policy),
                "random_chip": random_chip,
            },
            _("set %(setting)s (or spread)")
            % {"setting": f"{SCHEDULE_POLICY}: binpack"},
        )
    if weight <= 0:
        return _check(
            "chip_policy",
            "warn",
            _(
                "%(setting)s has no effect: %(weight)s is 0, and with weight 0 "
                "%(random_chip)s"
            )
            % {
                "setting": f"{SCHEDULE_POLICY}: {policy}",
                "weight": SCHEDULE_WEIGHT,
                "random_chip": random_chip,
            },
            _("set %(setting)s (any whole number above 0)")
            % {"setting": f"{SCHEDULE_WEIGHT}: 10"},
        )
    version = volcano.version if volcano is not None and not volcano.fork else None
    if policy == "spread" and (version is None or version <= SPREAD_BUG_UNTIL):
        which = (
            f"Volcano {format_version(version)}"
            if version is not None
            else _("Volcano up to v1.15.1 (the version here is unknown)")
        )
        return _check(
            "chip_policy",
            "warn",
            _(
                "%(setting)s on %(volcano)s scores a chip holding exactly one vNPU "
                "highest, not an unused one (fixed after v1.15.1)"
            )
            % {"setting": f"{SCHEDULE_POLICY}: spread", "volcano": which},
            _("set %(setting)s, or run a Volcano release after v1.15.1")
            % {"setting": f"{SCHEDULE_POLICY}: binpack"},
        )
    return _check(
        "chip_policy",
        "ok",
        _(
            "Volcano scores nodes by %(policy)s (%(setting)s); inside a node "
            "v1.15.1 still takes any fitting chip (seen on the real scheduler)"
        )
        % {"policy": policy, "setting": f"{SCHEDULE_WEIGHT}: {weight}"},
    )


def _node_lock_check(
    args: Mapping[str, Any], volcano: Component | None
) -> dict[str, Any]:
    enabled, quoted = _flag(args, NODE_LOCK, volcano)
    if enabled is True:
        return _check(
            "node_lock",
            "ok",
            _(
                "%(setting)s: Volcano locks a node (%(lock)s) while it assigns its "
                "devices"
            )
            % {"setting": f"{NODE_LOCK}: true", "lock": "hami.io/mutex.lock"},
        )
    if enabled is None:
        return _check("node_lock", "warn", quoted, _unquote_fix(NODE_LOCK))
    return _check(
        "node_lock",
        "warn",
        (
            _("%(problem)s; ") % {"problem": quoted}
            if quoted
            else _("no %(setting)s: ") % {"setting": NODE_LOCK}
        )
        + _(
            "without the node lock two pods admitted to one node in one pass can "
            "receive each other's allocation (inferred from Volcano's code)"
        ),
        _set(NODE_LOCK, "true"),
    )


def predicates_check(conf: dict[str, Any] | None) -> dict[str, Any]:
    if conf is None:
        return _check("predicates_plugin", "fail", _unreadable_conf())
    if any(p.get("name") == "predicates" for p in _plugins(conf)):
        return _check(
            "predicates_plugin", "ok", _("the predicates plugin is configured")
        )
    return _check(
        "predicates_plugin",
        "fail",
        _(
            "no predicates plugin: Volcano assigns a pod's vNPU (the %(annotations)s "
            "annotations) in predicates, so without it pods bind with no device"
        )
        % {"annotations": "hami.io/*"},
        _("add %(entry)s to the tier that has deviceshare")
        % {"entry": "`- name: predicates`"},
    )


def preempt_check(
    conf: dict[str, Any] | None, volcano: Component | None
) -> dict[str, Any]:
    """Volcano's own ``preempt`` is not needed; warn where it evicts vNPU pods unasked."""
    if conf is None:
        return _check("preempt_action", "fail", _unreadable_conf())
    actions = [a.strip() for a in str(conf.get("actions") or "").split(",")]
    if "preempt" not in actions:
        return _check(
            "preempt_action",
            "ok",
            _(
                "Volcano's actions have no preempt: it evicts no vNPU pod on its "
                "own; the portal evicts only what an admin approved"
            ),
        )
    version = volcano.version if volcano is not None else None
    if volcano is not None and (
        volcano.fork or (version and version <= NO_DEVICE_EVICTION_UNTIL)
    ):
        return _check(
            "preempt_action",
            "ok",
            _(
                "preempt is in the actions; %(volcano)s does not evict for vNPU "
                "memory (its idle check sees only slots, cpu and memory)"
            )
            % {"volcano": volcano.label},
        )
    who = (
        volcano.label
        if version is not None and volcano is not None
        else _("Volcano (version unknown)")
    )
    return _check(
        "preempt_action",
        "warn",
        _(
            "preempt is in the actions: %(volcano)s may evict lower-priority vNPU "
            "pods of the same queue without the portal's approval (Volcano after "
            "v1.15.1 rechecks the device predicate when preempting)"
        )
        % {"volcano": who},
        _(
            "remove preempt, e.g. %(actions)s (the portal proposes preemptions for "
            "approval), or label pods that must stay %(label)s"
        )
        % {
            "actions": 'actions: "enqueue, allocate, backfill"',
            "label": 'volcano.sh/preemptable: "false"',
        },
    )
