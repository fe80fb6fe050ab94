"""The portal, run as its ServiceAccount against a cluster that enforces deploy/'s RBAC.

Every kind of cluster call the code makes is exercised for real: sync (list and
watch of every target), the live device-config read and the guarded publish,
rollout restarts and their state, and scheduling's pod, eviction and event
calls. simcluster enforces the applied ClusterRole for the ServiceAccount's
token and logs each request; the test then requires that nothing was refused
and that the calls made are exactly the registry (apps.common.kube_permissions).
"""

from __future__ import annotations

import threading

import pytest
from kubernetes.client.rest import ApiException

from apps.common.kube_permissions import granted_atoms
from apps.inventory import publishing, services
from apps.inventory.choices import ConnectionKind
from apps.inventory.kube import cluster_api, kube_json
from apps.inventory.models import Template
from apps.inventory.restarts import restart_states
from apps.inventory.sync.engine import sync_once, sync_run
from apps.scheduling.kube import KubeClusterOps
from simcluster import rbac
from tests.deploy.conftest import DEPLOY

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]
USER = rbac.service_account_user("vnpu-system", "vnpuportal")


@pytest.fixture
def portal_cluster(sim, kubectl, settings):
    settings.VOLCANO_SCHEDULER_CONFIGMAP = "volcano-system/volcano-scheduler-configmap"
    settings.DEVICE_PLUGIN_DAEMONSET = "kube-system/hami-ascend-device-plugin"
    settings.WATCHED_DEPLOYMENTS = [
        "volcano-system/volcano-scheduler",
        "kube-system/hami-scheduler",
    ]
    applied = kubectl("apply", "-f", str(DEPLOY))
    assert applied.returncode == 0, applied.stderr
    return services.cluster_create(
        actor=None,
        name="self",
        connection=ConnectionKind.TOKEN,
        api_url=sim.url,
        token=sim.service_account_token("vnpu-system", "vnpuportal"),
        ca_cert=sim.certificate.cert_pem.decode(),
    )


def _atom(entry) -> tuple[str, str, str, str]:
    resource = entry.resource + (f"/{entry.subresource}" if entry.subresource else "")
    wanted = granted_atoms()
    general = (entry.group, resource, entry.verb, "*")
    return (
        general
        if general in wanted
        else (entry.group, resource, entry.verb, entry.name)
    )


def test_the_portal_needs_exactly_what_deploy_grants(sim, portal_cluster, admin_user):
    cluster = portal_cluster
    # sync: a full list of every target, then a few seconds of watches
    counts = sync_once(cluster)
    assert counts["nodes"] == 2
    stop = threading.Event()
    threading.Timer(2.0, stop.set).start()
    sync_run(cluster.pk, seconds=2.0, watch_timeout=1, stop=stop)
    # publishing: read the live config, write it back guarded by resourceVersion
    template = Template.objects.get(chip_type__cluster=cluster, name="vir01")
    services.template_update(template=template, actor=admin_user, data={"memory": 4096})
    result = publishing.deviceconfig_publish(
        cluster=cluster, actor=admin_user, reason="rbac test"
    )
    assert result.version.number >= 2
    # restarts: the schedulers and the device plugin, and their state
    for component in (
        "hami-scheduler",
        "volcano-scheduler",
        "hami-ascend-device-plugin",
    ):
        publishing.workload_restart(
            cluster=cluster, component=component, actor=admin_user
        )
    assert len(restart_states(cluster)["components"]) == 3
    # scheduling: create, read, annotate, evict, delete pods; record an event
    ops = KubeClusterOps(cluster)
    try:
        pod = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "vnpu-req-rbac", "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "busybox"}]},
        }
        ops.create_pod("default", pod)
        assert ops.get_pod("default", "vnpu-req-rbac") is not None
        assert ops.patch_pod_annotations("default", "vnpu-req-rbac", {"a": "b"})
        assert ops.evict_pod("default", "vnpu-req-rbac")[0] in ("evicted", "gone")
        ops.create_pod(
            "default",
            {**pod, "metadata": {**pod["metadata"], "name": "vnpu-req-rbac2"}},
        )
        assert ops.delete_pod("default", "vnpu-req-rbac2", grace_seconds=0)
        ops.create_event(
            "default",
            {
                "metadata": {"generateName": "vnpu-", "namespace": "default"},
                "involvedObject": {
                    "kind": "Pod",
                    "name": "vnpu-req-rbac",
                    "namespace": "default",
                },
                "reason": "Test",
                "message": "rbac test",
                "type": "Normal",
            },
        )
    finally:
        ops.close()

    made = sim.requests_by(USER)
    refused = sorted(
        {(e.verb, e.resource, e.subresource, e.name) for e in made if not e.allowed}
    )
    # then nothing the portal does was refused by the ClusterRole
    assert refused == []
    # and it used every permission it is granted, and nothing else
    assert {_atom(e) for e in made} == granted_atoms()


def test_the_service_account_cannot_do_more(sim, portal_cluster):
    with cluster_api(portal_cluster) as api:
        for method, path in (
            ("GET", "/api/v1/namespaces/vnpu-system/secrets"),
            (
                "DELETE",
                "/apis/apps/v1/namespaces/kube-system/deployments/hami-scheduler",
            ),
            (
                "PUT",
                "/api/v1/namespaces/volcano-system/configmaps/volcano-scheduler-configmap",
            ),
            ("GET", "/api/v1/namespaces/kube-system/configmaps/kube-root-ca.crt"),
            ("PATCH", "/api/v1/nodes/npu-node-310p-01"),
        ):
            with pytest.raises(ApiException) as refused:
                kube_json(
                    api,
                    method,
                    path,
                    body={} if method in ("PUT", "PATCH") else None,
                    content_type="application/merge-patch+json"
                    if method == "PATCH"
                    else "application/json",
                )
            assert refused.value.status == 403, (method, path)
