"""Map an HTTP method and path to a resource request (verb, resource, names)."""

from __future__ import annotations

from dataclasses import dataclass

from simcluster import errors, resources
from simcluster.resources import ResourceType
from simcluster.watch import truthy

WRITE_VERBS = frozenset({"create", "update", "patch", "delete", "deletecollection"})
_NOT_FOUND = "the server could not find the requested resource"


@dataclass(frozen=True)
class Route:
    """A resource request's coordinates."""

    verb: str
    res: ResourceType
    namespace: str | None
    name: str | None
    subresource: str | None


def _missing() -> errors.ApiError:
    return errors.ApiError(404, "NotFound", _NOT_FOUND)


def split_group_version(parts: list[str]) -> tuple[str, str, list[str]] | None:
    """``["api","v1",...]`` or ``["apis",g,v,...]`` → (group, version, rest)."""
    if len(parts) >= 2 and parts[0] == "api":
        return "", parts[1], parts[2:]
    if len(parts) >= 3 and parts[0] == "apis":
        return parts[1], parts[2], parts[3:]
    return None


def route(
    method: str, group: str, version: str, rest: list[str], query: dict[str, str]
) -> Route:
    """Resolve the resource part of a path (``rest`` is non-empty)."""
    namespace: str | None = None
    if (
        rest[0] == "namespaces"
        and len(rest) >= 3
        and rest[2] not in ("status", "finalize")
    ):
        namespace, rest = rest[1], rest[2:]
    if len(rest) > 3:
        raise _missing()
    if group == "" and rest == ["bindings"] and namespace is not None:
        # POST /api/v1/namespaces/<ns>/bindings: the pod name is in the body
        if method != "POST":
            raise errors.method_not_allowed()
        return Route("create", resources.POD, namespace, None, "binding")
    res = resources.lookup(group, version, rest[0])
    if res is None:
        raise _missing()
    name = rest[1] if len(rest) > 1 else None
    sub = rest[2] if len(rest) > 2 else None
    if namespace is not None and not res.namespaced:
        raise _missing()
    if res.namespaced and namespace is None and name is not None:
        raise _missing()
    if method == "GET":
        verb = "watch" if truthy(query.get("watch")) else ("get" if name else "list")
    elif method == "POST":
        if name and not sub:
            raise errors.method_not_allowed()
        verb = "create"
    elif method in ("PUT", "PATCH"):
        if not name:
            raise errors.method_not_allowed()
        verb = "update" if method == "PUT" else "patch"
    elif method == "DELETE":
        verb = "delete" if name else "deletecollection"
    else:
        raise errors.method_not_allowed()
    if res.namespaced and namespace is None and verb not in ("list", "watch"):
        raise errors.method_not_allowed()
    return Route(verb, res, namespace, name, sub)
