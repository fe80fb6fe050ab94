"""PATCH bodies: JSON patch (RFC 6902), merge patch (RFC 7386), strategic merge.

The strategic merge covers what ``kubectl apply``/``patch``/``rollout restart``
send: maps merge recursively, ``null`` deletes, lists of known kinds merge by
their key (containers by ``name`` ...), ``$patch: delete``/``replace`` and the
``$setElementOrder``/``$retainKeys``/``$deleteFromPrimitiveList`` directives.
"""

from __future__ import annotations

import copy
from typing import Any

from simcluster import errors

JSON_PATCH = "application/json-patch+json"
MERGE_PATCH = "application/merge-patch+json"
STRATEGIC_PATCH = "application/strategic-merge-patch+json"
APPLY_PATCH = "application/apply-patch+yaml"

# Merge keys of the list fields that the Kubernetes types declare patchStrategy=merge.
MERGE_KEYS: dict[str, str] = {
    "containers": "name",
    "initContainers": "name",
    "ephemeralContainers": "name",
    "env": "name",
    "volumes": "name",
    "volumeMounts": "mountPath",
    "volumeDevices": "devicePath",
    "ports": "containerPort",
    "imagePullSecrets": "name",
    "conditions": "type",
    "ownerReferences": "uid",
    "hostAliases": "ip",
    "topologySpreadConstraints": "topologyKey",
}
# Primitive lists with patchStrategy=merge (union).
MERGE_PRIMITIVE_LISTS = frozenset({"finalizers"})


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


def _pointer(path: str) -> list[str]:
    if path == "":
        return []
    if not path.startswith("/"):
        raise errors.bad_request(f"invalid JSON pointer: {path!r}")
    return [p.replace("~1", "/").replace("~0", "~") for p in path[1:].split("/")]


def _parent(doc: Any, parts: list[str]) -> Any:
    current = doc
    for part in parts[:-1]:
        if isinstance(current, list):
            current = current[_index(current, part, exists=True)]
        elif isinstance(current, dict) and part in current:
            current = current[part]
        else:
            raise errors.ApiError(
                422,
                "Invalid",
                f"the server rejected our request: path '{part}' not found",
            )
    return current


def _index(lst: list[Any], part: str, *, exists: bool) -> int:
    if part == "-" and not exists:
        return len(lst)
    try:
        index = int(part)
    except ValueError:
        raise errors.bad_request(f"invalid array index {part!r}") from None
    limit = len(lst) if exists else len(lst) + 1
    if not 0 <= index < limit:
        raise errors.ApiError(422, "Invalid", f"array index {index} out of bounds")
    return index


def _get(doc: Any, parts: list[str]) -> Any:
    if not parts:
        return doc
    parent = _parent(doc, parts)
    last = parts[-1]
    if isinstance(parent, list):
        return parent[_index(parent, last, exists=True)]
    if not isinstance(parent, dict) or last not in parent:
        raise errors.ApiError(422, "Invalid", f"path '{last}' not found")
    return parent[last]


def _remove(doc: Any, parts: list[str]) -> Any:
    parent = _parent(doc, parts)
    last = parts[-1]
    if isinstance(parent, list):
        return parent.pop(_index(parent, last, exists=True))
    if not isinstance(parent, dict) or last not in parent:
        raise errors.ApiError(
            422, "Invalid", f"unable to remove nonexistent key: {last}"
        )
    return parent.pop(last)


def _add(doc: Any, parts: list[str], value: Any) -> Any:
    if not parts:
        return value
    parent = _parent(doc, parts)
    last = parts[-1]
    if isinstance(parent, list):
        parent.insert(_index(parent, last, exists=False), value)
    elif isinstance(parent, dict):
        parent[last] = value
    else:
        raise errors.ApiError(422, "Invalid", f"cannot add at {last}")
    return doc


def json_patch(doc: Any, operations: Any) -> Any:
    """RFC 6902 JSON patch (add, remove, replace, move, copy, test)."""
    if not isinstance(operations, list):
        raise errors.bad_request("json patch must be a list of operations")
    doc = copy.deepcopy(doc)
    for op in operations:
        if not isinstance(op, dict) or "op" not in op or "path" not in op:
            raise errors.bad_request(f"invalid json patch operation: {op!r}")
        kind, parts = op["op"], _pointer(op["path"])
        if kind == "add":
            doc = _add(doc, parts, copy.deepcopy(op.get("value")))
        elif kind == "remove":
            _remove(doc, parts)
        elif kind == "replace":
            _get(doc, parts)
            if not parts:
                doc = copy.deepcopy(op.get("value"))
            else:
                _remove(doc, parts)
                doc = _add(doc, parts, copy.deepcopy(op.get("value")))
        elif kind in ("move", "copy"):
            source = _pointer(op.get("from", ""))
            value = (
                _remove(doc, source)
                if kind == "move"
                else copy.deepcopy(_get(doc, source))
            )
            doc = _add(doc, parts, value)
        elif kind == "test":
            if _get(doc, parts) != op.get("value"):
                raise errors.ApiError(
                    422, "Invalid", f"test operation failed at {op['path']}"
                )
        else:
            raise errors.bad_request(f"unknown json patch operation {kind!r}")
    return doc


def _strategic_list(field: str, target: list[Any], patch: list[Any]) -> list[Any]:
    key = MERGE_KEYS.get(field)
    if field in MERGE_PRIMITIVE_LISTS:
        out = list(target)
        out.extend(v for v in patch if v not in out)
        return out
    if key is None or not all(isinstance(p, dict) for p in patch):
        return [_strip_directives(p) for p in patch]
    if any(isinstance(p, dict) and p.get("$patch") == "replace" for p in patch):
        return [_strip_directives(p) for p in patch if p.get("$patch") != "replace"]
    out = [copy.deepcopy(t) for t in target]
    for item in patch:
        ident = item.get(key)
        pos = next(
            (
                i
                for i, t in enumerate(out)
                if isinstance(t, dict) and t.get(key) == ident
            ),
            None,
        )
        if item.get("$patch") == "delete":
            if pos is not None:
                out.pop(pos)
            continue
        if pos is None:
            out.append(_strip_directives(item))
        else:
            out[pos] = strategic_merge(out[pos], item)
    return out


def _strip_directives(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            k: _strip_directives(v)
            for k, v in value.items()
            if not k.startswith("$") and v is not None
        }
    if isinstance(value, list):
        return [_strip_directives(v) for v in value]
    return value


def strategic_merge(target: Any, patch: Any) -> Any:
    """Apply a strategic merge patch (minimal, see module docstring)."""
    if not isinstance(patch, dict) or not isinstance(target, dict):
        return _strip_directives(patch)
    if patch.get("$patch") == "replace":
        return _strip_directives(patch)
    if patch.get("$patch") == "delete":
        return {}
    result = copy.deepcopy(target)
    for key, value in patch.items():
        if key.startswith("$deleteFromPrimitiveList/"):
            field = key.split("/", 1)[1]
            result[field] = [v for v in result.get(field, []) if v not in (value or [])]
            continue
        if key.startswith("$"):
            continue  # $setElementOrder, $retainKeys, $patch: ordering hints only
        if value is None:
            result.pop(key, None)
        elif isinstance(value, dict) and isinstance(result.get(key), dict):
            result[key] = strategic_merge(result[key], value)
        elif isinstance(value, list) and isinstance(result.get(key), list):
            result[key] = _strategic_list(key, result[key], value)
        else:
            result[key] = _strip_directives(value)
    return result


def apply_patch(content_type: str, target: dict[str, Any], body: Any) -> dict[str, Any]:
    """Dispatch on the PATCH ``Content-Type``; 415-like 400 for unknown types."""
    base = content_type.split(";")[0].strip().lower()
    if base == JSON_PATCH:
        result = json_patch(target, body)
    elif base == MERGE_PATCH:
        if not isinstance(body, dict):
            raise errors.bad_request("merge patch must be a JSON object")
        result = merge_patch(target, body)
    elif base == STRATEGIC_PATCH:
        if not isinstance(body, dict):
            raise errors.bad_request("strategic merge patch must be a JSON object")
        result = strategic_merge(target, body)
    else:
        raise errors.ApiError(
            415,
            "UnsupportedMediaType",
            "the body of the request was in an unknown format - accepted media types "
            f"include: {JSON_PATCH}, {MERGE_PATCH}, {STRATEGIC_PATCH}",
        )
    if not isinstance(result, dict):
        raise errors.bad_request("patch result is not an object")
    return result
