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
    time.sleep(0.5)  # fixed on purpose: nothing may change during it
    assert sim.store.rv == rv  # nothing changes on its own (plugin interval is 30 s)


def _workloads(sim):
    from simcluster.controllers.workloads import Workloads

    return next(c for c in sim.manager.controllers if isinstance(c, Workloads))


def _unowned_pod(name: str) -> dict:
    return {
        "metadata": {"name": name, "labels": {"app": "batch"}},
        "spec": {"containers": [{"name": "c", "image": "busybox"}]},
    }


def test_churn_on_unowned_pods_does_not_rescan_every_pod(sim, core, wait_for) -> None:
    """A label patch on a plain pod cannot change a Deployment, a DaemonSet or
    (with no PDB in its namespace) a PDB: the full reconcile is skipped."""
    core.create_namespaced_pod("default", _unowned_pod("plain"))
    assert sim.wait_idle()
    workloads = _workloads(sim)
    before = workloads.reconciles
    for n in range(20):
        core.patch_namespaced_pod(
            "plain", "default", {"metadata": {"labels": {"n": str(n)}}}
        )
    assert sim.wait_idle()
    assert workloads.reconciles == before

    # a pod owned by a Deployment still counts: deleting one brings a new one
    owned = core.list_namespaced_pod("kube-system", label_selector="app=hami-scheduler")
    victim = owned.items[0].metadata.name
    core.delete_namespaced_pod(victim, "kube-system", grace_period_seconds=0)
    wait_for(lambda: workloads.reconciles > before)
    wait_for(
        lambda: (
            len(
                [
                    p
                    for p in core.list_namespaced_pod(
                        "kube-system", label_selector="app=hami-scheduler"
                    ).items
                    if p.metadata.name != victim
                    and p.metadata.deletion_timestamp is None
                ]
            )
            == len(owned.items)
        )
    )


def test_a_pdb_still_counts_plain_pods_of_its_namespace(sim, core, wait_for) -> None:
    policy = client.PolicyV1Api(core.api_client)
    policy.create_namespaced_pod_disruption_budget(
        "default",
        {
            "metadata": {"name": "web"},
            "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}},
        },
    )
    core.create_namespaced_pod("default", _unowned_pod("plain"))
    assert sim.wait_idle()

    def status() -> client.V1PodDisruptionBudgetStatus | None:
        return policy.read_namespaced_pod_disruption_budget("web", "default").status

    wait_for(lambda: status() is not None and status().current_healthy == 0)
    # the pod joins the budget's selector by a label patch alone
    core.patch_namespaced_pod(
        "plain", "default", {"metadata": {"labels": {"app": "web"}}}
    )
    wait_for(lambda: status().current_healthy == 1)
