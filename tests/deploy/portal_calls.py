"""Every kind of cluster call the portal makes, made once: the RBAC tests' workload.

Run against a cluster whose credentials are deploy/'s ServiceAccount (simcluster
enforcing the ClusterRole in tests/deploy, the real API server's RBAC in
tests/realstack), so that whatever the cluster logged afterwards is exactly
what the portal needs.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from apps.inventory import services
from apps.inventory.deviceconfig import publishing
from apps.inventory.deviceconfig.restarts import restart_states
from apps.inventory.deviceconfig.whatif import slice_name, slices_broken_by_draft
from apps.inventory.kube import Gateway
from apps.inventory.models import Template
from apps.inventory.nodeconfig.publishing import CURRENT, nodeconfig_publish
from apps.inventory.sync.engine import sync_once, sync_run
from apps.scheduling import volcano
from apps.scheduling.models import Queue, QueueQuota

POD_NAMES = ("vnpu-req-rbac", "vnpu-req-rbac2")
NODE_CONFIG_MAP = ("kube-system", "hami-device-node-config", "node-config.yaml")
QUEUE_NAME = "vnpu-rbac"
RESTARTED = ("hami-scheduler", "volcano-scheduler", "hami-ascend-device-plugin")


def make_every_portal_call(
    cluster: Any,
    admin_user: Any,
    watch_seconds: float,
    touch_queue: Callable[[str], object],
) -> None:
    """Sync (list, then watch for ``watch_seconds``), publish, restart, pods, events, queues.

    The cluster must hold an empty node-config ConfigMap (``NODE_CONFIG_MAP``):
    the portal updates it and never creates it.

    ``touch_queue(name)`` changes the Volcano Queue as another writer (an
    admin's credentials), so that the portal's update meets a conflict.
    """
    # sync: a full list of every target, then a few seconds of watches
    counts = sync_once(cluster)
    assert counts["nodes"] == 2
    # a portal queue becomes a Volcano Queue (its update comes last)
    queue = Queue.objects.create(cluster=cluster, name=QUEUE_NAME)
    QueueQuota.objects.create(queue=queue, common_word="Ascend310P", slots_limit=2)
    ops = Gateway(cluster)
    try:
        report = volcano.volcano_queues_ensure(cluster, ops=ops)
        assert (report.created, report.errors) == ([QUEUE_NAME], []), report
    finally:
        ops.close()
    stop = threading.Event()
    threading.Timer(watch_seconds, stop.set).start()
    sync_run(cluster.pk, seconds=watch_seconds, watch_timeout=1, stop=stop)
    # publishing: read the live config, write it back guarded by resourceVersion
    template = Template.objects.get(chip_type__cluster=cluster, name="vir01")
    services.template_update(template=template, actor=admin_user, data={"memory": 4096})
    # whatever slices the deployment runs on vir01: this checks permissions
    breaking = [slice_name(row) for row in slices_broken_by_draft(cluster)]
    result = publishing.deviceconfig_publish(
        cluster=cluster,
        actor=admin_user,
        reason="rbac test",
        confirm_breaking=breaking,
    )
    assert result.version.number >= 2
    # the device plugin's node config: read live, written back guarded (the
    # fixture made the ConfigMap: the portal never creates it)
    node_config = nodeconfig_publish(
        cluster=cluster,
        actor=admin_user,
        reason="rbac test",
        expected_version=CURRENT,
        text="# written by the rbac test\nnodes: []\n",
        confirm_warnings=True,
        confirm_unread=True,
    )
    assert node_config.version.number >= 2
    # restarts: the schedulers and the device plugin, and their state
    for component in RESTARTED:
        publishing.workload_restart(
            cluster=cluster, component=component, actor=admin_user
        )
    assert len(restart_states(cluster)["components"]) == len(RESTARTED)
    # scheduling: namespaces; create, read, annotate, evict, delete pods; an event
    ops = Gateway(cluster)
    first, second = POD_NAMES
    try:
        # a submission's namespace check and each pass's namespace list
        assert ops.namespace_exists("default")
        assert not ops.namespace_exists("no-such-namespace")
        assert "default" in ops.namespaces()
        pod = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": first, "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "busybox"}]},
        }
        ops.create_pod("default", pod)
        assert ops.get_pod("default", first) is not None
        assert isinstance(
            ops.ended_pods("app.kubernetes.io/managed-by=vnpu-portal"), list
        )
        assert ops.patch_pod_annotations("default", first, {"a": "b"})
        assert ops.evict_pod("default", first)[0] in ("evicted", "gone")
        ops.create_pod(
            "default", {**pod, "metadata": {**pod["metadata"], "name": second}}
        )
        assert ops.delete_pod("default", second, grace_seconds=0)
        # a preemption's node hold, put on and lifted
        hold = {"key": "vnpu-portal/held", "value": "true"}
        assert ops.node_taint("npu-node-310p-01", {**hold, "effect": "NoSchedule"})
        assert ops.node_untaint("npu-node-310p-01", hold["key"])
        ops.create_event(
            "default",
            {
                "metadata": {"generateName": "vnpu-", "namespace": "default"},
                "involvedObject": {
                    "kind": "Pod",
                    "name": first,
                    "namespace": "default",
                },
                "reason": "Test",
                "message": "rbac test",
                "type": "Normal",
            },
        )
        # a quota change reaches the Volcano Queue though someone else wrote
        # the queue since sync saw it: the PUT is a 409, the queue is read
        # again (GET) and the PUT retried on its version
        QueueQuota.objects.filter(queue=queue).update(slots_limit=3)
        touch_queue(QUEUE_NAME)
        report = volcano.volcano_queues_ensure(cluster, ops=ops)
        assert (report.updated, report.errors) == ([QUEUE_NAME], []), report
    finally:
        ops.close()


# Calls just outside the grant: each must be refused with 403.
BEYOND_THE_GRANT = (
    ("GET", "/api/v1/namespaces/vnpu-system/secrets"),
    ("DELETE", "/apis/apps/v1/namespaces/kube-system/deployments/hami-scheduler"),
    ("PUT", "/api/v1/namespaces/volcano-system/configmaps/volcano-scheduler-configmap"),
    ("GET", "/api/v1/namespaces/kube-system/configmaps/kube-root-ca.crt"),
    ("DELETE", "/api/v1/nodes/npu-node-310p-01"),
    ("PUT", "/api/v1/nodes/npu-node-310p-01"),
    # never deletes a Volcano Queue, never opens or closes one
    ("DELETE", "/apis/scheduling.volcano.sh/v1beta1/queues/default"),
    ("PATCH", "/apis/scheduling.volcano.sh/v1beta1/queues/default/status"),
)


def refusals_beyond_the_grant(cluster: Any) -> list[tuple[str, str, int | None]]:
    """(method, path, status) of each call in :data:`BEYOND_THE_GRANT` (None: allowed)."""
    from apps.inventory.kube import KubeError

    answers: list[tuple[str, str, int | None]] = []
    with Gateway(cluster) as gateway:
        for method, path in BEYOND_THE_GRANT:
            try:
                gateway.call(
                    method,
                    path,
                    body={} if method in ("PUT", "PATCH") else None,
                    content_type="application/merge-patch+json"
                    if method == "PATCH"
                    else "application/json",
                )
                answers.append((method, path, None))
            except KubeError as refused:
                answers.append((method, path, refused.status))
    return answers
