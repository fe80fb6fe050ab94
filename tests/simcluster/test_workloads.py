"""Deployments, DaemonSets, garbage collection and the demo workload generator."""

from __future__ import annotations

import time
from pathlib import Path

from kubernetes import client

DEPLOYMENT = {
    "metadata": {"name": "web"},
    "spec": {
        "replicas": 2,
        "selector": {"matchLabels": {"app": "web"}},
        "template": {
            "metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [{"name": "web", "image": "nginx"}]},
        },
    },
}


def test_deployment_creates_scales_and_collects_pods(
    api_client: client.ApiClient, wait_for
) -> None:
    core, apps = client.CoreV1Api(api_client), client.AppsV1Api(api_client)
    apps.create_namespaced_deployment("default", DEPLOYMENT)

    def pods() -> list[client.V1Pod]:
        return [
            p
            for p in core.list_namespaced_pod("default", label_selector="app=web").items
            if p.metadata.deletion_timestamp is None
        ]

    wait_for(
        lambda: (
            apps.read_namespaced_deployment("web", "default").status.ready_replicas == 2
        )
    )
    owned = pods()
    assert len(owned) == 2
    assert {p.metadata.owner_references[0].name for p in owned} == {"web"}
    assert all(p.metadata.labels["pod-template-hash"] for p in owned)
    apps.patch_namespaced_deployment("web", "default", {"spec": {"replicas": 1}})
    wait_for(lambda: len(pods()) == 1)
    apps.delete_namespaced_deployment("web", "default")
    wait_for(lambda: not pods())


def test_rollout_restart_replaces_pods(api_client: client.ApiClient, wait_for) -> None:
    core, apps = client.CoreV1Api(api_client), client.AppsV1Api(api_client)
    before = {
        p.metadata.name: p.status.start_time
        for p in core.list_namespaced_pod(
            "kube-system", label_selector="app=hami-scheduler"
        ).items
    }
    apps.patch_namespaced_deployment(
        "hami-scheduler",
        "kube-system",
        {
            "spec": {
                "template": {
                    "metadata": {
                        "annotations": {"kubectl.kubernetes.io/restartedAt": "now"}
                    }
                }
            }
        },
    )

    def replaced() -> list[client.V1Pod]:
        items = core.list_namespaced_pod(
            "kube-system", label_selector="app=hami-scheduler"
        ).items
        fresh = [p for p in items if p.metadata.name not in before]
        ready = [
            p
            for p in fresh
            if any(
                c.type == "Ready" and c.status == "True"
                for c in p.status.conditions or []
            )
        ]
        return ready if ready and len(items) == 1 else []

    new = wait_for(replaced)[0]
    assert new.metadata.annotations["kubectl.kubernetes.io/restartedAt"] == "now"
    assert new.status.start_time >= max(before.values())
    status = apps.read_namespaced_deployment("hami-scheduler", "kube-system").status
    assert (
        status.observed_generation,
        status.updated_replicas,
        status.ready_replicas,
    ) == (2, 1, 1)


def test_daemonset_rollout_restart(api_client: client.ApiClient, wait_for) -> None:
    core, apps = client.CoreV1Api(api_client), client.AppsV1Api(api_client)
    selector = "app=hami-ascend-device-plugin"
    before = {
        p.metadata.name
        for p in core.list_namespaced_pod("kube-system", label_selector=selector).items
    }
    apps.patch_namespaced_daemon_set(
        "hami-ascend-device-plugin",
        "kube-system",
        {
            "spec": {
                "template": {
                    "metadata": {
                        "annotations": {"kubectl.kubernetes.io/restartedAt": "x"}
                    }
                }
            }
        },
    )

    def rolled() -> bool:
        items = core.list_namespaced_pod("kube-system", label_selector=selector).items
        status = apps.read_namespaced_daemon_set(
            "hami-ascend-device-plugin", "kube-system"
        ).status
        return (
            len(items) == 2
            and not {p.metadata.name for p in items} & before
            and status.updated_number_scheduled == 2
            and status.number_ready == 2
            and status.observed_generation == 2
        )

    wait_for(rolled)


def test_workload_generator_creates_slice_pods(
    sim_factory, tmp_path: Path, wait_for
) -> None:
    sim = sim_factory(workload=True, workload_interval=0.2, seed=7)
    core = client.CoreV1Api(sim.kubernetes_client(tmp_path / "kc"))
    running = wait_for(
        lambda: [
            p
            for p in core.list_namespaced_pod("demo").items
            if p.status.phase == "Running"
        ],
        timeout=8,
    )
    assert running[0].metadata.annotations["hami.io/bind-phase"] == "success"


def test_still_cluster_without_generator(sim) -> None:
    sim.wait_idle(3)
    rv = sim.store.rv
    time.sleep(0.5)
    assert sim.store.rv == rv  # nothing changes on its own (plugin interval is 30 s)
