"""The Table API as a client sees it: Accept negotiation, options, watches.

Also the watch-list (``sendInitialEvents``) that kubectl 1.35 uses for
``delete``, ``rollout status`` and ``wait``.
"""

from __future__ import annotations

import json
from typing import Any

TABLE_ACCEPT = (
    "application/json;as=Table;v=v1;g=meta.k8s.io,"
    "application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"
)


def test_table_json(raw) -> None:
    status, table = raw(
        "GET", "/api/v1/namespaces/default/pods", headers={"Accept": TABLE_ACCEPT}
    )
    assert status == 200
    assert table["kind"] == "Table"
    assert table["apiVersion"] == "meta.k8s.io/v1"
    assert table["metadata"]["resourceVersion"]
    columns = table["columnDefinitions"]
    assert [(c["name"], c["type"], c["format"], c["priority"]) for c in columns] == [
        ("Name", "string", "name", 0),
        ("Ready", "string", "", 0),
        ("Status", "string", "", 0),
        ("Restarts", "string", "", 0),
        ("Age", "string", "", 0),
        ("IP", "string", "", 1),
        ("Node", "string", "", 1),
        ("Nominated Node", "string", "", 1),
        ("Readiness Gates", "string", "", 1),
    ]
    assert all(c["description"] for c in columns)
    row = table["rows"][0]
    assert len(row["cells"]) == len(columns)
    assert row["object"]["kind"] == "PartialObjectMetadata"
    assert row["object"]["apiVersion"] == "meta.k8s.io/v1"
    assert row["object"]["metadata"]["name"] == row["cells"][0]
    assert "spec" not in row["object"]


def test_table_options_and_paging(raw) -> None:
    accept = {"Accept": TABLE_ACCEPT}
    _, table = raw("GET", "/api/v1/pods?includeObject=Object", headers=accept)
    assert table["rows"][0]["object"]["kind"] == "Pod"
    assert "spec" in table["rows"][0]["object"]
    _, table = raw("GET", "/api/v1/pods?includeObject=None", headers=accept)
    assert table["rows"][0]["object"] is None
    status, error = raw("GET", "/api/v1/pods?includeObject=Bogus", headers=accept)
    assert status == 400
    assert "includeObject" in error["message"]
    _, page = raw("GET", "/api/v1/pods?limit=2", headers=accept)
    assert len(page["rows"]) == 2
    assert page["metadata"]["continue"]
    assert page["metadata"]["remainingItemCount"] >= 1
    _, beta = raw(
        "GET",
        "/api/v1/nodes/npu-node-310p-01",
        headers={"Accept": "application/json;as=Table;v=v1beta1;g=meta.k8s.io"},
    )
    assert beta["apiVersion"] == "meta.k8s.io/v1beta1"
    assert [r["cells"][0] for r in beta["rows"]] == ["npu-node-310p-01"]
    # without as=Table: the plain list, as before
    _, plain = raw("GET", "/api/v1/pods", headers={"Accept": "application/json"})
    assert plain["kind"] == "PodList"


def _watch_lines(sim, api_client, path: str, accept: str) -> list[dict[str, Any]]:
    response = api_client.rest_client.pool_manager.request(
        "GET",
        api_client.configuration.host + path,
        headers={"Authorization": f"Bearer {sim.tokens.admin}", "Accept": accept},
        preload_content=True,
        retries=False,
    )
    assert response.status == 200, response.data
    return [json.loads(line) for line in response.data.decode().splitlines() if line]


def test_watch_as_table_sends_headers_once(sim, api_client, core) -> None:
    for name in ("w1", "w2"):
        core.create_namespaced_config_map(
            "default", {"metadata": {"name": name}, "data": {"a": "1"}}
        )
    events = _watch_lines(
        sim,
        api_client,
        "/api/v1/namespaces/default/configmaps?watch=true&timeoutSeconds=1",
        TABLE_ACCEPT,
    )
    # kube-root-ca.crt first (every namespace has it), then the two
    assert [e["type"] for e in events] == ["ADDED", "ADDED", "ADDED"]
    assert events[0]["object"]["rows"][0]["cells"][0] == "kube-root-ca.crt"
    first, second = (e["object"] for e in events[1:])
    assert first["kind"] == second["kind"] == "Table"
    assert [c["name"] for c in events[0]["object"]["columnDefinitions"]] == [
        "Name",
        "Data",
        "Age",
    ]
    assert events[0]["object"]["columnDefinitions"] is not None
    assert first["columnDefinitions"] is None  # as kube-apiserver: first event only
    assert second["columnDefinitions"] is None
    assert first["rows"][0]["cells"][:2] == ["w1", 1]
    assert second["rows"][0]["cells"][:2] == ["w2", 1]
    assert (
        second["metadata"]["resourceVersion"]
        == (second["rows"][0]["object"]["metadata"]["resourceVersion"])
    )


def test_watch_list_sends_initial_events_then_the_end_bookmark(sim, api_client) -> None:
    # kubectl 1.35 delete/rollout status/wait watch this way (client-go watch-list)
    query = (
        "watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan"
        "&allowWatchBookmarks=true&timeoutSeconds=1"
    )
    events = _watch_lines(
        sim, api_client, f"/api/v1/namespaces/default/pods?{query}", "application/json"
    )
    names = {e["object"]["metadata"]["name"] for e in events if e["type"] == "ADDED"}
    assert names == {"npu-pod-310p", "npu-pod-910b"}
    end = next(e for e in events if e["type"] == "BOOKMARK")
    assert end["object"]["metadata"]["annotations"] == {
        "k8s.io/initial-events-end": "true"
    }
    assert events.index(end) == len(names)  # right after the initial state
    response = api_client.rest_client.pool_manager.request(
        "GET",
        api_client.configuration.host
        + "/api/v1/pods?watch=true&sendInitialEvents=true",
        headers={"Authorization": f"Bearer {sim.tokens.admin}"},
        retries=False,
    )
    assert response.status == 422
