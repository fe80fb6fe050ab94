"""Env values are secrets: what the API and the audit log show instead of them.

A request's environment often carries credentials (a registry password, a
dataset token), so every env ``value`` is shown as ``REDACTED`` in every API
answer and audit entry, unless its entry is marked non-secret
(``{"name": ..., "value": ..., "secret": false}`` in ``workload.env``). The
database keeps the real values: the pod gets them. Values in a
``pod_template``'s containers are always redacted (Kubernetes has no
``secret`` field to mark them; ``valueFrom`` references are shown as they
are, since they hold no value).

Pure functions on JSON-like data; they never change their argument.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

REDACTED: Final = "***"

# The container lists of a PodSpec that may carry env.
_CONTAINER_LISTS: Final = ("containers", "initContainers", "ephemeralContainers")


def env_redacted(env: Any) -> Any:
    """``env`` (a list of ``{name, value, secret?}`` or a ``{NAME: value}`` map) without secret values."""
    if isinstance(env, Mapping):
        # The map form has no way to mark a value non-secret.
        return dict.fromkeys(env, REDACTED)
    if not isinstance(env, list):
        return env
    shown = []
    for entry in env:
        if not isinstance(entry, Mapping):
            shown.append(REDACTED)
            continue
        entry = dict(entry)
        if "value" in entry and entry.get("secret") is not False:
            entry["value"] = REDACTED
        shown.append(entry)
    return shown


def workload_redacted(workload: Any) -> Any:
    """A request's ``workload`` (``{image, command, args, env}``) without secret env values."""
    if not isinstance(workload, Mapping) or "env" not in workload:
        return workload
    return {**workload, "env": env_redacted(workload["env"])}


def pod_template_redacted(template: Any) -> Any:
    """A PodTemplateSpec without any container's literal env values."""
    if not isinstance(template, Mapping):
        return template
    spec = template.get("spec")
    if not isinstance(spec, Mapping):
        return template
    new_spec = dict(spec)
    for key in _CONTAINER_LISTS:
        containers = spec.get(key)
        if not isinstance(containers, list):
            continue
        new_spec[key] = [
            {**c, "env": _all_values_redacted(c["env"])}
            if isinstance(c, Mapping) and "env" in c
            else c
            for c in containers
        ]
    return {**template, "spec": new_spec}


def _all_values_redacted(env: Any) -> Any:
    if not isinstance(env, list):
        return env_redacted(env)
    return [
        {**e, "value": REDACTED} if isinstance(e, Mapping) and "value" in e else e
        for e in env
    ]


def payload_redacted(payload: Any) -> Any:
    """Any JSON payload (an audit entry's before/after) with request bodies redacted.

    Every ``workload`` and ``pod_template`` key, at any depth, is redacted, so
    a payload that embeds a request body (``request.create``) or part of one
    shows no secret env value.
    """
    if isinstance(payload, Mapping):
        result = {}
        for key, value in payload.items():
            if key == "workload":
                value = workload_redacted(value)
            elif key == "pod_template":
                value = pod_template_redacted(value)
            else:
                value = payload_redacted(value)
            result[key] = value
        return result
    if isinstance(payload, list):
        return [payload_redacted(item) for item in payload]
    return payload
