"""Checks of a submission that need no database: names, workloads, pod templates.

Each returns field errors as ``{"path": [messages]}`` (paths like
``pod_template.spec.containers[0].image``) so the API answers 400 naming the
field, before anything is written; ``fail`` raises them as that 400.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from django.conf import settings

from apps.common.exceptions import ValidationFailed

FieldErrors = dict[str, list[str]]

DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
ENV_NAME = re.compile(r"^[-._a-zA-Z][-._a-zA-Z0-9]*$")
IDEMPOTENCY_KEY = re.compile(r"^[A-Za-z0-9._:/-]{1,128}$")


def fail(errors: FieldErrors) -> None:
    """Raise a 400 naming every field in ``errors`` (nothing when it is empty)."""
    if errors:
        raise invalid(errors)


def invalid(errors: FieldErrors) -> ValidationFailed:
    """The 400 naming every field in ``errors``; its message quotes the first."""
    first, messages = next(iter(errors.items()))
    return ValidationFailed(f"{first}: {messages[0]}", detail=errors)


def namespace_errors(namespace: str) -> FieldErrors:
    """A Kubernetes namespace name: a DNS-1123 label of at most 63 characters."""
    if len(namespace) > 63 or not DNS_LABEL.match(namespace):
        return {
            "namespace": [
                "a DNS-1123 label: lowercase letters, digits and '-', at most 63 characters"
            ]
        }
    return {}


def idempotency_key_errors(key: str) -> FieldErrors:
    """Letters, digits and ``._:/-``, 1 to 128 characters."""
    if not IDEMPOTENCY_KEY.match(key):
        return {"idempotency_key": ["1 to 128 of letters, digits and ._:/-"]}
    return {}


def normalise_env(env: Any, path: str, errors: FieldErrors) -> list[dict[str, Any]]:
    """Env as a map ``{NAME: value}`` or a list of ``{name, value, secret?}``, as a list.

    Values are secrets (redacted in answers and the audit log,
    ``apps.common.redaction``) unless an entry says ``"secret": false``; only
    that mark is kept (``"secret": false``), the default adds nothing.
    """
    items: list[tuple[Any, Any, Any]]
    if env is None:
        return []
    if isinstance(env, Mapping):
        items = [(name, value, True) for name, value in env.items()]
    elif isinstance(env, list) and all(isinstance(e, Mapping) for e in env):
        items = [
            (e.get("name"), e.get("value", ""), e.get("secret", True)) for e in env
        ]
    else:
        errors[path] = ["a map of NAME: value, or a list of {name, value, secret?}"]
        return []
    result: list[dict[str, Any]] = []
    for name, value, secret in items:
        if not isinstance(name, str) or not ENV_NAME.match(name):
            errors[path] = [f"invalid variable name {name!r}"]
            return []
        if not isinstance(value, str | int | float | bool):
            errors[path] = [f"{name}: the value must be a string"]
            return []
        if not isinstance(secret, bool):
            errors[path] = [f"{name}: secret must be true or false"]
            return []
        entry: dict[str, Any] = {"name": name, "value": str(value)}
        if not secret:
            entry["secret"] = False
        result.append(entry)
    return result


def pod_template_errors(template: Any) -> FieldErrors:
    """A PodTemplateSpec: ``{metadata?, spec: {containers: [{name, image}, ...]}}``.

    Only the shape is checked here; what the pod may carry (namespace,
    privileges, the fields only the portal writes) is the queue's pod policy
    (``apps.scheduling.podsecurity``).
    """
    errors: FieldErrors = {}
    root = "pod_template"
    if not isinstance(template, Mapping):
        return {root: ["a PodTemplateSpec object: {metadata, spec}"]}
    # Stored with the request and served on every list page: up to the body
    # limit, 20 of them made each page 44 MiB. A real template is a few KiB.
    size = len(
        json.dumps(template, ensure_ascii=False, separators=(",", ":")).encode(
            "utf-8", "surrogatepass"
        )
    )
    limit = settings.POD_TEMPLATE_MAX_BYTES
    if size > limit:
        return {root: [f"at most {limit} bytes of JSON; this one has {size}"]}
    metadata = template.get("metadata", {})
    if not isinstance(metadata, Mapping):
        errors[f"{root}.metadata"] = ["an object"]
    else:
        for part in ("labels", "annotations"):
            values = metadata.get(part, {})
            if not isinstance(values, Mapping) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in values.items()
            ):
                errors[f"{root}.metadata.{part}"] = ["a map of strings"]
    spec = template.get("spec")
    if not isinstance(spec, Mapping):
        errors[f"{root}.spec"] = ["required: an object with containers"]
        return errors
    containers = spec.get("containers")
    if not isinstance(containers, list) or not containers:
        errors[f"{root}.spec.containers"] = ["required: a non-empty list"]
        return errors
    for index, container in enumerate(containers):
        path = f"{root}.spec.containers[{index}]"
        if not isinstance(container, Mapping):
            errors[path] = ["an object"]
            continue
        for key in ("name", "image"):
            if not isinstance(container.get(key), str) or not container.get(key):
                errors[f"{path}.{key}"] = ["required"]
        resources = container.get("resources", {})
        if not isinstance(resources, Mapping):
            errors[f"{path}.resources"] = ["an object"]
            continue
        for part in ("limits", "requests"):
            if not isinstance(resources.get(part) or {}, Mapping):
                errors[f"{path}.resources.{part}"] = ["an object"]
    return errors
