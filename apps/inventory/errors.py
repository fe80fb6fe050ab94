"""The inventory's named errors (publishing a device or node config); codes and HTTP
statuses are in ``apps.common.exceptions.ERRORS``."""

from __future__ import annotations

from apps.common.exceptions import Conflict, ErrorCode, ValidationFailed


class NoChange(ValidationFailed):
    """Nothing to publish or adopt: the cluster already has this device config."""

    code = ErrorCode.NO_CHANGE


class UnreadableShape(ValidationFailed):
    """A component of the cluster would not read the config's shape."""

    code = ErrorCode.UNREADABLE_SHAPE


class NodeConfigNotRead(ValidationFailed):
    """The device plugin would not read the node config (flag, mount or version)."""

    code = ErrorCode.NODE_CONFIG_NOT_READ


class BreaksRunningSlices(ValidationFailed):
    """The publish would break slices that run now, and they were not confirmed."""

    code = ErrorCode.BREAKS_RUNNING_SLICES


def refuse_unless_confirmed(
    error: type[ValidationFailed], field: str, said: str, confirmed: bool
) -> None:
    """Raise ``error`` naming ``field``, the flag that writes it anyway, unless confirmed.

    The guards of a publish (a shape a component cannot parse, a node config
    the plugin does not read) say what is wrong and how to fix it in ``said``.
    """
    if not confirmed:
        raise error(
            f"{field}: {said}",
            detail={field: [f"{said}; send {field}: true to write it anyway"]},
        )


class Drift(Conflict):
    """The live ConfigMap changed outside the portal since it was last seen."""

    code = ErrorCode.DRIFT


class NoBaseline(Conflict):
    """The portal owns no device config of the cluster yet (sync or adopt first)."""

    code = ErrorCode.NO_BASELINE


class StaleVersion(Conflict):
    """The node config moved on since the version the caller's edit was based on."""

    code = ErrorCode.STALE_VERSION


class UnconfirmedWarnings(ValidationFailed):
    """The node config to publish has warnings the caller has not confirmed."""

    code = ErrorCode.UNCONFIRMED_WARNINGS


class IsolationState(Conflict):
    """The chip is not in a state the action applies to (isolate twice, restore
    a chip in service)."""

    code = ErrorCode.ISOLATION_STATE


class PluginRestartBlocked(Conflict):
    """Restarting a node's device plugin would apply a device config whose
    restart the admin has not confirmed."""

    code = ErrorCode.PLUGIN_RESTART_BLOCKED
