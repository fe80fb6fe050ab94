"""The Kubernetes API as the ``kubernetes`` Python client sees it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from kubernetes import client, config, watch
from kubernetes.client.rest import ApiException

from simcluster.kubeconfig import write_kubeconfig


def _cm(name: str, **labels: str) -> client.V1ConfigMap:
    return client.V1ConfigMap(
        metadata=client.V1ObjectMeta(name=name, labels=labels or None), data={"k": "v"}
    )


def _names(items: list) -> list[str]:
    return sorted(i.metadata.name for i in items)


def test_list_with_label_selectors(core: client.CoreV1Api) -> None:
    for name, labels in (
        ("a", {"tier": "gold", "env": "prod"}),
        ("b", {"tier": "silver"}),
        ("c", {"env": "dev"}),
    ):
        core.create_namespaced_config_map("default", _cm(name, **labels))
    cases = {
        # kube-root-ca.crt (no labels) is in every namespace, as on a real cluster
        "tier=gold": ["a"],
        "tier==gold": ["a"],
        "tier!=gold": ["b", "c", "kube-root-ca.crt"],
        "tier in (gold,silver)": ["a", "b"],
        "tier notin (gold)": ["b", "c", "kube-root-ca.crt"],
        "env": ["a", "c"],
        "!env": ["b", "kube-root-ca.crt"],
        "tier=gold,env=prod": ["a"],
    }
    for selector, expected in cases.items():
        found = core.list_namespaced_config_map(
            "default", label_selector=selector
        ).items
        assert _names(found) == expected, selector


def test_list_with_field_selectors(core: client.CoreV1Api) -> None:
    on_310p = core.list_pod_for_all_namespaces(
        field_selector="spec.nodeName=npu-node-310p-01"
    )
    assert "npu-pod-310p" in _names(on_310p.items)
    assert "npu-pod-910b" not in _names(on_310p.items)
    running = core.list_pod_for_all_namespaces(
        field_selector="status.phase==Running"
    ).items
    assert len(running) == 6
    one = core.list_namespaced_pod(
        "default", field_selector="metadata.name=npu-pod-910b"
    ).items
    assert _names(one) == ["npu-pod-910b"]
    others = core.list_pod_for_all_namespaces(
        field_selector="metadata.namespace!=default,status.phase=Running"
    ).items
    assert all(p.metadata.namespace != "default" for p in others)
    assert len(others) == 4
    with pytest.raises(ApiException) as err:
        core.list_pod_for_all_namespaces(field_selector="spec.bogus=1")
    assert err.value.status == 400


def test_get_create_conflict_and_generate_name(core: client.CoreV1Api) -> None:
    created = core.create_namespaced_config_map("default", _cm("one"))
    assert int(created.metadata.resource_version) > 0
    assert created.metadata.uid
    with pytest.raises(ApiException) as err:
        core.create_namespaced_config_map("default", _cm("one"))
    assert err.value.status == 409
    assert json.loads(err.value.body)["reason"] == "AlreadyExists"
    generated = core.create_namespaced_config_map(
        "default",
        client.V1ConfigMap(metadata=client.V1ObjectMeta(generate_name="gen-")),
    )
    assert generated.metadata.name.startswith("gen-")
    assert len(generated.metadata.name) == 9
    with pytest.raises(ApiException) as err:
        core.read_namespaced_config_map("missing", "default")
    assert err.value.status == 404
    assert json.loads(err.value.body)["reason"] == "NotFound"
    with pytest.raises(ApiException) as err:
        core.create_namespaced_config_map("nope", _cm("x"))
    assert err.value.status == 404


def test_stale_update_is_a_conflict(core: client.CoreV1Api) -> None:
    old = core.create_namespaced_config_map("default", _cm("cfg"))
    fresh = core.read_namespaced_config_map("cfg", "default")
    fresh.data = {"k": "new"}
    core.replace_namespaced_config_map("cfg", "default", fresh)
    old.data = {"k": "stale"}
    with pytest.raises(ApiException) as err:
        core.replace_namespaced_config_map("cfg", "default", old)
    body = json.loads(err.value.body)
    assert err.value.status == 409
    assert body["reason"] == "Conflict"
    assert "the object has been modified; please apply your changes" in body["message"]
    assert core.read_namespaced_config_map("cfg", "default").data == {"k": "new"}


def test_resource_version_is_global_and_increasing(core: client.CoreV1Api) -> None:
    a = int(
        core.create_namespaced_config_map(
            "default", _cm("rv-a")
        ).metadata.resource_version
    )
    b = int(
        core.create_namespaced_config_map(
            "kube-system", _cm("rv-b")
        ).metadata.resource_version
    )
    listed = int(core.list_config_map_for_all_namespaces().metadata.resource_version)
    assert a < b <= listed


def test_generation_bumps_on_spec_change_only(api_client: client.ApiClient) -> None:
    apps = client.AppsV1Api(api_client)
    deploy = apps.read_namespaced_deployment("hami-scheduler", "kube-system")
    generation = deploy.metadata.generation
    apps.patch_namespaced_deployment(
        "hami-scheduler", "kube-system", {"metadata": {"labels": {"x": "y"}}}
    )
    assert (
        apps.read_namespaced_deployment(
            "hami-scheduler", "kube-system"
        ).metadata.generation
        == generation
    )
    apps.patch_namespaced_deployment(
        "hami-scheduler", "kube-system", {"spec": {"replicas": 2}}
    )
    assert (
        apps.read_namespaced_deployment(
            "hami-scheduler", "kube-system"
        ).metadata.generation
        == generation + 1
    )


def test_delete_pod_with_grace_period_then_not_found(
    core: client.CoreV1Api, wait_for
) -> None:
    returned = core.delete_namespaced_pod(
        "npu-pod-910b", "default", grace_period_seconds=1
    )
    assert returned.metadata.deletion_timestamp is not None
    assert (
        core.read_namespaced_pod(
            "npu-pod-910b", "default"
        ).metadata.deletion_grace_period_seconds
        == 1
    )

    def gone() -> bool:
        try:
            core.read_namespaced_pod("npu-pod-910b", "default")
        except ApiException as exc:
            return exc.status == 404
        return False

    wait_for(gone, timeout=5)
    core.delete_namespaced_pod("npu-pod-310p", "default", grace_period_seconds=0)
    with pytest.raises(ApiException) as err:
        core.read_namespaced_pod("npu-pod-310p", "default")
    assert err.value.status == 404


def test_delete_configmap_returns_status(raw, core: client.CoreV1Api) -> None:
    core.create_namespaced_config_map("default", _cm("bye"))
    status, body = raw("DELETE", "/api/v1/namespaces/default/configmaps/bye")
    assert status == 200
    assert body["kind"] == "Status"
    assert body["status"] == "Success"
    assert body["details"]["name"] == "bye"
    status, body = raw("DELETE", "/api/v1/namespaces/default/configmaps/bye")
    assert status == 404
    assert body["reason"] == "NotFound"


def test_watch_sees_a_later_change(core: client.CoreV1Api) -> None:
    listed = core.list_namespaced_config_map("default")
    core.create_namespaced_config_map("default", _cm("watched"))
    events = []
    stream = watch.Watch().stream(
        core.list_namespaced_config_map,
        "default",
        resource_version=listed.metadata.resource_version,
        timeout_seconds=3,
    )
    for event in stream:
        events.append((event["type"], event["object"].metadata.name))
        if len(events) == 1:
            core.patch_namespaced_config_map("watched", "default", {"data": {"k": "2"}})
        if len(events) == 2:
            break
    assert events == [("ADDED", "watched"), ("MODIFIED", "watched")]


def test_watch_from_zero_replays_state(core: client.CoreV1Api) -> None:
    stream = watch.Watch().stream(
        core.list_namespaced_pod, "default", resource_version="0", timeout_seconds=1
    )
    names = {e["object"].metadata.name for e in stream if e["type"] == "ADDED"}
    assert names == {"npu-pod-310p", "npu-pod-910b"}


def test_watch_resumed_from_resource_version_sees_only_later_events(
    core: client.CoreV1Api,
) -> None:
    core.create_namespaced_config_map("default", _cm("before"))
    mark = core.read_namespaced_config_map(
        "before", "default"
    ).metadata.resource_version
    core.create_namespaced_config_map("default", _cm("after"))
    core.delete_namespaced_config_map("before", "default")
    seen = [
        (e["type"], e["object"].metadata.name)
        for e in watch.Watch().stream(
            core.list_namespaced_config_map,
            "default",
            resource_version=mark,
            timeout_seconds=1,
        )
    ]
    assert seen == [("ADDED", "after"), ("DELETED", "before")]


def test_watch_label_selector_turns_relabel_into_delete(core: client.CoreV1Api) -> None:
    core.create_namespaced_config_map("default", _cm("sel", team="a"))
    mark = core.list_namespaced_config_map("default").metadata.resource_version
    core.patch_namespaced_config_map(
        "sel", "default", {"metadata": {"labels": {"team": "b"}}}
    )
    seen = [
        e["type"]
        for e in watch.Watch().stream(
            core.list_namespaced_config_map,
            "default",
            label_selector="team=a",
            resource_version=mark,
            timeout_seconds=1,
        )
    ]
    assert seen == ["DELETED"]


def test_watch_too_old_resource_version_is_gone(sim_factory, tmp_path: Path) -> None:
    sim = sim_factory(history=5)
    core = client.CoreV1Api(sim.kubernetes_client(tmp_path / "kc"))
    mark = core.list_namespaced_config_map("default").metadata.resource_version
    for i in range(10):
        core.create_namespaced_config_map("default", _cm(f"n{i}"))
    with pytest.raises(ApiException) as err:
        for _ in watch.Watch().stream(
            core.list_namespaced_config_map,
            "default",
            resource_version=mark,
            timeout_seconds=2,
        ):
            pass
    assert err.value.status == 410
    recent = core.list_namespaced_config_map("default").metadata.resource_version
    assert (
        list(
            watch.Watch().stream(
                core.list_namespaced_config_map,
                "default",
                resource_version=recent,
                timeout_seconds=1,
            )
        )
        == []
    )


def test_watch_bookmarks(api_client: client.ApiClient, core: client.CoreV1Api) -> None:
    rv = core.list_namespaced_pod("default").metadata.resource_version
    response = core.list_namespaced_pod(
        "default",
        watch=True,
        resource_version=rv,
        allow_watch_bookmarks=True,
        timeout_seconds=2,
        _preload_content=False,
    )
    lines = [json.loads(line) for line in response.data.decode().splitlines() if line]
    bookmarks = [e for e in lines if e["type"] == "BOOKMARK"]
    assert len(bookmarks) >= 2  # periodic (0.5 s here) and one at the end
    assert bookmarks[-1]["object"]["kind"] == "Pod"
    assert int(bookmarks[-1]["object"]["metadata"]["resourceVersion"]) >= int(rv)


def test_pagination_with_limit_and_continue(core: client.CoreV1Api, raw) -> None:
    for i in range(7):
        core.create_namespaced_config_map("default", _cm(f"page-{i}"))
    first = core.list_namespaced_config_map("default", limit=3)
    assert len(first.items) == 3
    assert first.metadata._continue
    # the seven and kube-root-ca.crt, which every namespace has (as on a real cluster)
    assert first.metadata.remaining_item_count == 5
    core.create_namespaced_config_map(
        "default", _cm("page-late")
    )  # not in the snapshot
    names = _names(first.items)
    token = first.metadata._continue
    while token:
        page = core.list_namespaced_config_map("default", limit=3, _continue=token)
        assert page.metadata.resource_version == first.metadata.resource_version
        names += _names(page.items)
        token = page.metadata._continue
    assert sorted(names) == ["kube-root-ca.crt", *(f"page-{i}" for i in range(7))]
    second = core.list_namespaced_config_map("default", limit=2)
    raw("POST", "/simcluster/expire-continue", {})
    with pytest.raises(ApiException) as err:
        core.list_namespaced_config_map(
            "default", limit=2, _continue=second.metadata._continue
        )
    assert err.value.status == 410
    assert json.loads(err.value.body)["reason"] == "Expired"


def test_eviction_honours_pod_disruption_budget(
    api_client: client.ApiClient, core: client.CoreV1Api, wait_for
) -> None:
    policy = client.PolicyV1Api(api_client)
    policy.create_namespaced_pod_disruption_budget(
        "default",
        client.V1PodDisruptionBudget(
            metadata=client.V1ObjectMeta(name="keep-310p"),
            spec=client.V1PodDisruptionBudgetSpec(
                max_unavailable=0,
                selector=client.V1LabelSelector(match_labels={"app": "npu-pod-310p"}),
            ),
        ),
    )
    eviction = client.V1Eviction(
        metadata=client.V1ObjectMeta(name="npu-pod-310p", namespace="default")
    )
    with pytest.raises(ApiException) as err:
        core.create_namespaced_pod_eviction("npu-pod-310p", "default", eviction)
    body = json.loads(err.value.body)
    assert err.value.status == 429
    assert body["reason"] == "TooManyRequests"
    assert body["details"]["causes"][0]["reason"] == "DisruptionBudget"
    assert (
        core.read_namespaced_pod("npu-pod-310p", "default").metadata.deletion_timestamp
        is None
    )
    # The PDB controller reports the same budget in status.
    wait_for(
        lambda: (
            policy.read_namespaced_pod_disruption_budget("keep-310p", "default").status
            is not None
        )
    )
    status = policy.read_namespaced_pod_disruption_budget("keep-310p", "default").status
    assert (
        status.current_healthy,
        status.desired_healthy,
        status.disruptions_allowed,
    ) == (1, 1, 0)
    # A pod without a budget is evicted: graceful deletion starts.
    evict_910b = client.V1Eviction(metadata=client.V1ObjectMeta(name="npu-pod-910b"))
    core.create_namespaced_pod_eviction("npu-pod-910b", "default", evict_910b)
    assert core.read_namespaced_pod(
        "npu-pod-910b", "default"
    ).metadata.deletion_timestamp


def test_eviction_allowed_by_budget(
    api_client: client.ApiClient, core: client.CoreV1Api
) -> None:
    client.PolicyV1Api(api_client).create_namespaced_pod_disruption_budget(
        "default",
        {
            "metadata": {"name": "loose"},
            "spec": {
                "minAvailable": 0,
                "selector": {"matchLabels": {"app": "npu-pod-310p"}},
            },
        },
    )
    core.create_namespaced_pod_eviction(
        "npu-pod-310p",
        "default",
        client.V1Eviction(metadata=client.V1ObjectMeta(name="npu-pod-310p")),
    )
    assert core.read_namespaced_pod(
        "npu-pod-310p", "default"
    ).metadata.deletion_timestamp


def test_unknown_token_is_unauthorized(sim, tmp_path: Path) -> None:
    path = write_kubeconfig(
        tmp_path / "bad", sim.url, "wrong", "wrong", sim.certificate.cert_pem
    )
    api = config.new_client_from_config(config_file=str(path))
    with pytest.raises(ApiException) as err:
        client.CoreV1Api(api).list_node()
    assert err.value.status == 401
    assert json.loads(err.value.body)["reason"] == "Unauthorized"


def test_readonly_token_cannot_write(sim, tmp_path: Path) -> None:
    core = client.CoreV1Api(sim.kubernetes_client(tmp_path / "kc", readonly=True))
    assert len(core.list_node().items) == 2
    with pytest.raises(ApiException) as err:
        core.create_namespaced_config_map("default", _cm("ro"))
    assert err.value.status == 403
    assert json.loads(err.value.body)["reason"] == "Forbidden"
    with pytest.raises(ApiException) as err:
        core.delete_namespaced_pod("npu-pod-310p", "default")
    assert err.value.status == 403


def test_strict_field_validation(raw) -> None:
    body = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "strict"},
        "data": {},
        "bogus": 1,
    }
    status, answer = raw(
        "POST", "/api/v1/namespaces/default/configmaps?fieldValidation=Strict", body
    )
    assert status == 400
    assert 'unknown field "bogus"' in answer["message"]
    status, answer = raw("POST", "/api/v1/namespaces/default/configmaps", body)
    assert status == 201
    assert "bogus" not in answer


def test_errors_are_status_objects(raw) -> None:
    status, body = raw("PUT", "/api/v1/namespaces/default/configmaps", {})
    assert status == 405
    assert body["reason"] == "MethodNotAllowed"
    status, body = raw(
        "POST",
        "/api/v1/namespaces/default/configmaps",
        {"metadata": {"name": "Not_Valid"}},
    )
    assert status == 422
    assert body["reason"] == "Invalid"
    status, body = raw("GET", "/apis/nope/v1/things")
    assert status == 404
    assert body["kind"] == "Status"


def test_pod_priority_from_priority_class(core: client.CoreV1Api) -> None:
    pod = {
        "metadata": {"name": "prio"},
        "spec": {
            "priorityClassName": "batch-medium",
            "containers": [{"name": "c", "image": "x"}],
        },
    }
    created = core.create_namespaced_pod("default", pod)
    assert created.spec.priority == 1000
    pod["metadata"]["name"] = "prio-bad"
    pod["spec"]["priorityClassName"] = "no-such-class"
    with pytest.raises(ApiException) as err:
        core.create_namespaced_pod("default", pod)
    assert err.value.status == 403


def test_discovery_and_openapi(raw) -> None:
    assert raw("GET", "/version")[1]["major"] == "1"
    groups = {g["name"] for g in raw("GET", "/apis")[1]["groups"]}
    assert {"apps", "policy", "scheduling.k8s.io", "scheduling.volcano.sh"} <= groups
    core_list = raw("GET", "/api/v1")[1]
    names = {r["name"] for r in core_list["resources"]}
    assert {
        "pods",
        "pods/eviction",
        "pods/binding",
        "nodes",
        "configmaps",
        "events",
    } <= names
    index = raw("GET", "/openapi/v3")[1]["paths"]
    doc = raw("GET", index["api/v1"]["serverRelativeURL"])[1]
    patch = doc["paths"]["/api/v1/namespaces/{namespace}/configmaps/{name}"]["patch"]
    assert "fieldValidation" in {p["name"] for p in patch["parameters"]}
    assert patch["x-kubernetes-group-version-kind"] == {
        "group": "",
        "version": "v1",
        "kind": "ConfigMap",
    }
