"""Discovery documents: /version, /api, /apis, resource lists and OpenAPI v3."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from simcluster.resources import RESOURCES, ResourceType, group_versions, resources_in

VERSION: dict[str, str] = {
    "major": "1",
    "minor": "32",
    "gitVersion": "v1.32.0-simcluster",
    "gitCommit": "0000000000000000000000000000000000000000",
    "gitTreeState": "clean",
    "buildDate": "2026-01-01T00:00:00Z",
    "goVersion": "go1.23.0",
    "compiler": "gc",
    "platform": "linux/amd64",
}


def api_versions(server_address: str) -> dict[str, Any]:
    """``GET /api``: the legacy core group."""
    return {
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [
            {"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}
        ],
    }


def _api_group(group: str, versions: list[str]) -> dict[str, Any]:
    gvs = [{"groupVersion": f"{group}/{v}", "version": v} for v in versions]
    return {
        "kind": "APIGroup",
        "apiVersion": "v1",
        "name": group,
        "versions": gvs,
        "preferredVersion": gvs[0],
    }


def api_group_list() -> dict[str, Any]:
    """``GET /apis``: every named group."""
    groups = [
        _api_group(group, versions)
        for group, versions in group_versions().items()
        if group
    ]
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}


def api_group(group: str) -> dict[str, Any] | None:
    """``GET /apis/<group>``."""
    versions = group_versions().get(group)
    if not group or not versions:
        return None
    return _api_group(group, versions)


def _sub_entry(res: ResourceType, sub: str) -> dict[str, Any]:
    if sub == "eviction":
        return {
            "name": f"{res.plural}/eviction",
            "singularName": "",
            "namespaced": True,
            "group": "policy",
            "version": "v1",
            "kind": "Eviction",
            "verbs": ["create"],
        }
    if sub == "binding":
        return {
            "name": f"{res.plural}/binding",
            "singularName": "",
            "namespaced": True,
            "kind": "Binding",
            "verbs": ["create"],
        }
    return {
        "name": f"{res.plural}/{sub}",
        "singularName": "",
        "namespaced": res.namespaced,
        "kind": res.kind,
        # pods/log is read-only, as on kube-apiserver
        "verbs": ["get"] if sub == "log" else ["get", "patch", "update"],
    }


def resource_list(group: str, version: str) -> dict[str, Any] | None:
    """``GET /api/v1`` or ``/apis/<g>/<v>``: an ``APIResourceList``."""
    found = resources_in(group, version)
    if not found:
        return None
    entries: list[dict[str, Any]] = []
    if not group:
        entries.append(
            {
                "name": "bindings",
                "singularName": "binding",
                "namespaced": True,
                "kind": "Binding",
                "verbs": ["create"],
            }
        )
    for res in found:
        entry: dict[str, Any] = {
            "name": res.plural,
            "singularName": res.singular_name,
            "namespaced": res.namespaced,
            "kind": res.kind,
            "verbs": list(res.verbs),
        }
        if res.short_names:
            entry["shortNames"] = list(res.short_names)
        if res.categories:
            entry["categories"] = list(res.categories)
        entries.append(entry)
        entries.extend(_sub_entry(res, sub) for sub in res.subresources)
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": f"{group}/{version}" if group else version,
        "resources": entries,
    }


# -- OpenAPI v3 --------------------------------------------------------------
_PARAMS = [
    {"name": name, "in": "query", "schema": {"type": "string"}, "uniqueItems": True}
    for name in ("dryRun", "fieldManager", "fieldValidation", "pretty")
]


def _op(
    res: ResourceType,
    action: str,
    kind: str | None = None,
    group: str | None = None,
    version: str | None = None,
) -> dict[str, Any]:
    return {
        "operationId": f"{action}{res.kind}",
        "parameters": _PARAMS,
        "responses": {"200": {"description": "OK"}},
        "x-kubernetes-action": action,
        "x-kubernetes-group-version-kind": {
            "group": res.group if group is None else group,
            "version": version or res.version,
            "kind": kind or res.kind,
        },
    }


def _prefix(res: ResourceType) -> str:
    return (
        f"/api/{res.version}" if not res.group else f"/apis/{res.group}/{res.version}"
    )


def _paths(res: ResourceType) -> dict[str, Any]:
    base = _prefix(res)
    collection = (
        f"{base}/namespaces/{{namespace}}/{res.plural}"
        if res.namespaced
        else f"{base}/{res.plural}"
    )
    item = f"{collection}/{{name}}"
    paths: dict[str, Any] = {
        collection: {
            "get": _op(res, "list"),
            "post": _op(res, "post"),
            "delete": _op(res, "deletecollection"),
        },
        item: {
            "get": _op(res, "get"),
            "put": _op(res, "put"),
            "patch": _op(res, "patch"),
            "delete": _op(res, "delete"),
        },
    }
    if res.namespaced:
        paths[f"{base}/{res.plural}"] = {"get": _op(res, "list")}
    for sub in res.subresources:
        if sub == "eviction":
            paths[f"{item}/eviction"] = {
                "post": _op(res, "post", "Eviction", "policy", "v1")
            }
        elif sub == "binding":
            paths[f"{item}/binding"] = {"post": _op(res, "post", "Binding")}
        elif sub == "log":
            paths[f"{item}/log"] = {"get": _op(res, "get")}
        else:
            paths[f"{item}/{sub}"] = {
                "get": _op(res, "get"),
                "put": _op(res, "put"),
                "patch": _op(res, "patch"),
            }
    return paths


def _gv_path(group: str, version: str) -> str:
    return f"api/{version}" if not group else f"apis/{group}/{version}"


def openapi_document(group: str, version: str) -> dict[str, Any] | None:
    """``GET /openapi/v3/<gv path>``: paths with the fieldValidation parameter."""
    found = resources_in(group, version)
    if not found:
        return None
    paths: dict[str, Any] = {}
    for res in found:
        paths.update(_paths(res))
    return {
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes (simcluster)", "version": VERSION["gitVersion"]},
        "paths": paths,
        "components": {"schemas": {}},
    }


def openapi_index() -> dict[str, Any]:
    """``GET /openapi/v3``: one entry per group-version, with a content hash."""
    paths: dict[str, Any] = {}
    seen: set[tuple[str, str]] = set()
    for res in RESOURCES:
        if (res.group, res.version) in seen:
            continue
        seen.add((res.group, res.version))
        doc = openapi_document(res.group, res.version)
        digest = hashlib.sha512(json.dumps(doc, sort_keys=True).encode()).hexdigest()[
            :64
        ]
        path = _gv_path(res.group, res.version)
        paths[path] = {"serverRelativeURL": f"/openapi/v3/{path}?hash={digest.upper()}"}
    return {"paths": paths}


def parse_openapi_path(path: str) -> tuple[str, str] | None:
    """``api/v1`` → ("", "v1"); ``apis/apps/v1`` → ("apps", "v1")."""
    parts = path.strip("/").split("/")
    if len(parts) == 2 and parts[0] == "api":
        return "", parts[1]
    if len(parts) == 3 and parts[0] == "apis":
        return parts[1], parts[2]
    return None
