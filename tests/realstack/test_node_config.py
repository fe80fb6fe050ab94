"""The device plugin's node config on the real control plane (issue 32, item 7).

kubestack's ``nodeconfig`` scenario runs plugin v1.4.0 with
``hami-device-node-config`` mounted and passed with ``--node_config_file``;
its plugin pods are a real DaemonSet's (kube-controller-manager recreates a
deleted one), and the simulated plugin in each reads the node config as the
real one does, only when that pod starts (docs/node-config.md). Everything
here goes through the real kube-apiserver with the ``kubernetes`` client, as
an operator (or the portal's chip isolation) would: edit the ConfigMap,
delete one node's plugin pod. The placements are the real Volcano's.

A stack of its own for this module (about 15 s to start), shared by its tests;
each puts the node config and the plugin pods back as the scenario has them.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest
from kubernetes import client

from apps.inventory.hami.annotations import allocated_key, parse_pod_devices
from kubestack.scenarios import slice_pod, wait_running
from kubestack.stack import KubeStack
from simcluster import guide_data
from simcluster.plugin_pods import node_config_yaml
from tests import plugin_pods as pods
from tests.polling import wait_for

pytestmark = [pytest.mark.realstack, pytest.mark.slow]

NODE = guide_data.NODE_310P  # 4 healthy 310P3, no entry in the scenario's file
CW = "Ascend310P"
SLOTS = 7  # 21527 MB // vir01's 3072 MB
VIR04 = 12288  # one a 310P3 chip: two are more than its 21527 MB
wait = functools.partial(wait_for, timeout=60, interval=0.25)


@pytest.fixture(scope="module")
def nc_stack() -> Iterator[KubeStack]:
    """The ``nodeconfig`` scenario on the real control plane."""
    stack = KubeStack(scenario="nodeconfig", seed=7).start()
    yield stack
    stack.stop()


@dataclass
class Cluster:
    """The stack, its clients, and what a test changed (put back after it)."""

    stack: KubeStack
    core: client.CoreV1Api
    apps: client.AppsV1Api
    pods: list[str] = field(default_factory=list)  # in ``default``

    def uuids(self, node: str = NODE) -> list[str]:
        return [chip["id"] for chip in pods.chips(self.core, node, CW)]

    def filter_uuid(self, uuid: str) -> None:
        """The scenario's node config plus an entry leaving ``uuid`` out on NODE."""
        pods.set_node_config(
            self.core,
            node_config_yaml()
            + f'  - name: {NODE}\n    filterDevices:\n      uuid: ["{uuid}"]\n',
        )

    def restart(self, node: str = NODE) -> client.V1Pod:
        """Delete the node's plugin pod; wait for its successor's plugin to
        have started and reported."""
        starts = self.stack.device_plugin.starts
        pod = pods.restart_plugin(self.core, node, wait)
        wait(
            lambda: (
                self.stack.device_plugin.starts > starts
                and self.stack.device_plugin.running([node])
            ),
            "the new plugin pod's plugin to start",
        )
        return pod

    def create(self, names: list[str], memory: int) -> None:
        self.pods.extend(names)
        manifests = [slice_pod(name, CW, memory) for name in names]
        for manifest in manifests:
            manifest["spec"]["nodeSelector"] = {"kubernetes.io/hostname": NODE}
        self.stack.create_objects(manifests)

    def chip_of(self, name: str) -> str:
        """The UUID of the chip Volcano bound the pod to ("" if none)."""
        found = self.core.read_namespaced_pod(name, "default")
        text = (found.metadata.annotations or {}).get(allocated_key(CW), "")
        devices = [d for c in parse_pod_devices(text) for d in c] if text else []
        return devices[0].uuid if devices else ""


@pytest.fixture
def cluster(nc_stack: KubeStack) -> Iterator[Cluster]:
    api = nc_stack.kubernetes_client()
    found = Cluster(nc_stack, client.CoreV1Api(api), client.AppsV1Api(api))
    before = found.uuids()
    yield found
    for name in found.pods:
        nc_stack.kubectl(
            "delete", "pod", name, "--grace-period=0", "--force", check=False
        )
    pods.set_node_config(found.core, node_config_yaml())
    if found.uuids() != before:
        found.restart()
        wait(lambda: found.uuids() == before, "NODE's chips to be back")


def _unschedulable(core: client.CoreV1Api, name: str) -> bool:
    """Volcano has looked at the pod and found no room for it."""
    pod = core.read_namespaced_pod(name, "default")
    return not pod.spec.node_name and any(
        c.type == "PodScheduled" and c.status == "False" and c.reason == "Unschedulable"
        for c in pod.status.conditions or []
    )


def _free_chip(cluster: Cluster) -> str:
    """A chip of NODE that holds no slice (the scenario's pods may hold one)."""
    held = {
        device.uuid
        for pod in cluster.core.list_namespaced_pod("default").items
        for key, value in (pod.metadata.annotations or {}).items()
        if key == allocated_key(CW) and pod.spec.node_name == NODE
        for container in parse_pod_devices(value)
        for device in container
    }
    # Not the first: the chips after it must be renumbered.
    return next(uuid for uuid in cluster.uuids()[1:] if uuid not in held)


def test_the_scenario_wires_plugin_v1_4_0_to_its_node_config(
    cluster: Cluster,
) -> None:
    ds = cluster.apps.read_namespaced_daemon_set(pods.DS, pods.NS)
    container = ds.spec.template.spec.containers[0]
    assert container.image.endswith(":v1.4.0")
    assert "--node_config_file" in container.args
    volumes = {v.name: v for v in ds.spec.template.spec.volumes}
    (mount,) = [
        m for m in container.volume_mounts if m.mount_path == "/node-config.yaml"
    ]
    assert volumes[mount.name].config_map.name == pods.CM
    # the scenario's file: the 910B4's sick chip by UUID, the Duo's card 1
    sick = next(uid for uid, healthy in guide_data.CHIPS_910B if not healthy)
    registered = pods.chips(cluster.core, guide_data.NODE_910B, "Ascend910B4")
    assert sick not in {c["id"] for c in registered}
    assert [c.get("index", 0) for c in registered] == list(range(7))
    assert len(pods.chips(cluster.core, "npu-node-310p-duo-01", CW)) == 2


def test_a_filtered_chip_leaves_the_registration_when_its_plugin_pod_restarts(
    cluster: Cluster,
) -> None:
    all_chips = cluster.uuids()
    assert len(all_chips) == 4
    assert pods.allocatable(cluster.core, NODE, CW) == str(4 * SLOTS)
    chip = _free_chip(cluster)
    position = all_chips.index(chip)
    cluster.filter_uuid(chip)

    old = pods.plugin_pod(cluster.core, NODE)
    new = cluster.restart()
    assert new.metadata.uid != old.metadata.uid
    assert [o.kind for o in new.metadata.owner_references] == ["DaemonSet"]

    wait(lambda: chip not in cluster.uuids(), "the chip to leave the registration")
    registered = pods.chips(cluster.core, NODE, CW)
    assert [c["id"] for c in registered] == [u for u in all_chips if u != chip]
    # renumbered 0..n-1: the chips after the filtered one moved down by one
    assert [c.get("index", 0) for c in registered] == [0, 1, 2]
    assert registered[position]["id"] == all_chips[position + 1]
    # the kubelet's allocatable is a status write of its own: it may trail
    # the registration annotation (a busy fresh-clone run saw 21 for 28)
    wait(
        lambda: pods.allocatable(cluster.core, NODE, CW) == str(3 * SLOTS),
        "allocatable to follow",
    )
    # the other nodes' plugins were not restarted: the Duo keeps its filter
    assert len(pods.chips(cluster.core, "npu-node-310p-duo-01", CW)) == 2


def test_volcano_never_places_on_a_filtered_chip_and_places_there_once_restored(
    cluster: Cluster,
) -> None:
    chip = _free_chip(cluster)
    cluster.filter_uuid(chip)
    cluster.restart()
    wait(lambda: chip not in cluster.uuids(), "the chip to leave the registration")

    # given one vir04 fills a chip: three fill the node's other chips
    fillers = ["iso-fill-0", "iso-fill-1", "iso-fill-2"]
    cluster.create(fillers, VIR04)
    wait_running(cluster.stack, [("default", name) for name in fillers], timeout=120)
    assert {cluster.chip_of(name) for name in fillers} == set(cluster.uuids())
    # the fourth has room only on the filtered chip: the real Volcano looks
    # at it and leaves it Pending
    cluster.create(["iso-extra"], VIR04)
    wait(
        lambda: _unschedulable(cluster.core, "iso-extra"),
        "Volcano to find no room for the fourth vir04",
    )
    for name in cluster.pods:
        assert cluster.chip_of(name) != chip, name

    # when the filter is removed and the node's plugin pod restarted
    pods.set_node_config(cluster.core, node_config_yaml())
    cluster.restart()
    wait(lambda: chip in cluster.uuids(), "the chip to be registered again")
    # the kubelet's allocatable is a status write of its own: it may trail
    # the registration annotation (a busy fresh-clone run saw 21 for 28)
    wait(
        lambda: pods.allocatable(cluster.core, NODE, CW) == str(4 * SLOTS),
        "allocatable to follow",
    )
    # then Volcano places the waiting pod there: the only chip with room
    wait_running(cluster.stack, [("default", "iso-extra")], timeout=120)
    assert cluster.chip_of("iso-extra") == chip


def test_an_edited_node_config_changes_nothing_until_the_pod_restarts(
    cluster: Cluster,
) -> None:
    chip = _free_chip(cluster)
    cluster.filter_uuid(chip)
    handshake = f"hami.io/node-handshake-{CW}"
    before = cluster.core.read_node(NODE).metadata.annotations[handshake]
    starts = cluster.stack.device_plugin.starts
    # the running plugin reports again (as it does every 30 s) ...
    cluster.stack.device_plugin.report()
    after = cluster.core.read_node(NODE).metadata.annotations[handshake]
    assert after != before
    # ... with what it read when it started: the chip is still there
    assert chip in cluster.uuids()
    assert pods.allocatable(cluster.core, NODE, CW) == str(4 * SLOTS)
    assert cluster.stack.device_plugin.starts == starts
    # and the same edit takes effect once the pod is replaced
    cluster.restart()
    wait(lambda: chip not in cluster.uuids(), "the chip to leave the registration")


def test_a_node_config_that_does_not_load_is_ignored(cluster: Cluster) -> None:
    chip = _free_chip(cluster)
    # a quoted count fails the whole file (Go's json: a string into an int)
    pods.set_node_config(
        cluster.core,
        node_config_yaml()
        + f'  - name: {NODE}\n    vDeviceCount: "2"\n'
        + f'    filterDevices:\n      uuid: ["{chip}"]\n',
    )
    cluster.restart()
    # defaults: every chip, the default slot count
    registered = pods.chips(cluster.core, NODE, CW)
    assert [c["id"] for c in registered] == cluster.uuids()
    assert chip in cluster.uuids()
    assert {c["count"] for c in registered} == {SLOTS}


def _crashed(core: client.CoreV1Api, node: str) -> client.V1Pod | None:
    """The node's plugin pod once the kubelet shows it crash-looping."""
    pod = pods.plugin_pod(core, node)
    if pod is None or not pod.status.container_statuses:
        return None
    status = pod.status.container_statuses[0]
    waiting = status.state.waiting if status.state else None
    return pod if waiting and waiting.reason == "CrashLoopBackOff" else None


def _update_strategy(apps: client.AppsV1Api, kind: str) -> None:
    rolling = {"maxUnavailable": 1} if kind == "RollingUpdate" else None
    body = {"spec": {"updateStrategy": {"type": kind, "rollingUpdate": rolling}}}
    apps.patch_namespaced_daemon_set(pods.DS, pods.NS, body)


def test_a_plugin_before_v1_3_exits_on_the_flag(cluster: Cluster) -> None:
    """v1.1.0 given ``--node_config_file``: Go's flag package stops it at
    start. The DaemonSet is set to ``OnDelete`` so that only NODE's pod is
    replaced (a rolling update may go on past a pod that crashes once it
    was Ready for a moment, as on a real cluster)."""
    core, apps = cluster.core, cluster.apps
    template = apps.read_namespaced_daemon_set(pods.DS, pods.NS).spec.template
    container = template.spec.containers[0]
    chip = _free_chip(cluster)
    cluster.filter_uuid(chip)
    nodes = [node.metadata.name for node in core.list_node().items]
    try:
        _update_strategy(apps, "OnDelete")
        pods.set_plugin(apps, "v1.1.0", True)
        pods.restart_plugin(core, NODE, wait)
        # exit code 2, CrashLoopBackOff, never ready
        pod = wait(lambda: _crashed(core, NODE), "the new pod to crash-loop")
        assert pod.spec.containers[0].image.endswith(":v1.1.0")
        status = pod.status.container_statuses[0]
        assert status.last_state.terminated.exit_code == 2
        assert not status.ready
        # nothing is registered from it: a report round moves every other
        # node's handshake, not this one's; the filter is not applied
        handshakes = {n: _handshake(core, n) for n in nodes}
        cluster.stack.device_plugin.report()
        moved = {n for n in nodes if _handshake(core, n) != handshakes[n]}
        assert moved == set(nodes) - {NODE}
        assert chip in cluster.uuids()
        # the other nodes still run v1.4.0
        for node in set(nodes) - {NODE}:
            assert pods.plugin_pod(core, node).spec.containers[0].image == (
                container.image
            )
    finally:
        version = container.image.rsplit(":", 1)[1]
        pods.set_plugin(apps, version, "--node_config_file" in container.args)
        _update_strategy(apps, "RollingUpdate")
        wait(
            lambda: (
                all(
                    (pod := pods.plugin_pod(core, n)) is not None
                    and pod.spec.containers[0].image == container.image
                    and _crashed(core, n) is None
                    for n in nodes
                )
                and cluster.stack.device_plugin.running(nodes)
            ),
            "every plugin pod back on the scenario's version",
        )


def _handshake(core: client.CoreV1Api, node: str) -> str:
    annotations = core.read_node(node).metadata.annotations or {}
    return next(
        (v for k, v in annotations.items() if k.startswith("hami.io/node-handshake-")),
        "",
    )


@pytest.mark.django_db
def test_the_portal_isolates_a_chip_and_the_real_volcano_stops_placing_there(
    cluster: Cluster, operator_client, settings, tmp_path
) -> None:
    """Isolate and restore over REST, proved by sync from the real API server,
    with the real Volcano's placements before and after."""
    from apps.inventory.choices import ConnectionKind
    from apps.inventory.models import Chip
    from apps.inventory.services import cluster_create
    from apps.inventory.sync.engine import sync_once

    settings.LOCK_DIR = str(tmp_path / "locks")
    kubeconfig = cluster.stack.write_kubeconfig(tmp_path / "kubeconfig")
    real = cluster_create(
        actor=None,
        name="nc",
        connection=ConnectionKind.KUBECONFIG,
        kubeconfig=kubeconfig.read_text(),
    )
    sync_once(real)
    uuid = _free_chip(cluster)
    chip = Chip.objects.get(cluster=real, uuid=uuid)

    def settled(isolation: str) -> Chip | None:
        sync_once(real)
        found = Chip.objects.get(pk=chip.pk)
        return found if found.isolation == isolation else None

    answer = operator_client.post(
        f"/api/chips/{chip.pk}/isolate/", {"reason": "ECC errors"}, format="json"
    )
    assert answer.status_code == 202, answer.json()
    isolated = wait(lambda: settled("isolated"), "the portal to prove the isolation")
    assert isolated.registered is False
    assert uuid not in cluster.uuids()
    assert pods.allocatable(cluster.core, NODE, CW) == str(3 * SLOTS)

    # the real Volcano fills the other three chips and leaves a fourth Pending
    fillers = ["portal-iso-0", "portal-iso-1", "portal-iso-2"]
    cluster.create(fillers, VIR04)
    wait_running(cluster.stack, [("default", name) for name in fillers], timeout=120)
    assert uuid not in {cluster.chip_of(name) for name in fillers}
    cluster.create(["portal-iso-extra"], VIR04)
    wait(
        lambda: _unschedulable(cluster.core, "portal-iso-extra"),
        "Volcano to leave the fourth pod Pending",
    )

    answer = operator_client.post(
        f"/api/chips/{chip.pk}/restore/", {"reason": "card replaced"}, format="json"
    )
    assert answer.status_code == 202, answer.json()
    wait(lambda: settled(""), "the portal to prove the restore")
    # and the real Volcano places the waiting pod on exactly that chip
    wait_running(cluster.stack, [("default", "portal-iso-extra")], timeout=120)
    assert cluster.chip_of("portal-iso-extra") == uuid


@pytest.mark.django_db(transaction=True)
def test_isolate_then_drain_moves_a_portal_request_off_the_chip_for_good(
    cluster: Cluster, settings, tmp_path
) -> None:
    """The order docs/node-config.md recommends before a repair: isolate the
    chip (no scheduler places there again), then drain it. The portal's
    request is evicted through the real Eviction API, re-queued, and runs
    again, on another chip; the real Volcano cannot pick the isolated one."""
    from apps.inventory.choices import ConnectionKind
    from apps.inventory.models import Chip
    from apps.inventory.services import cluster_create
    from apps.inventory.sync.engine import sync_once
    from apps.scheduling.models import Request
    from harness.portal import Running, ci_request, token_client
    from harness.portal import wait_running as request_running

    settings.LOCK_DIR = str(tmp_path / "locks")
    real = cluster_create(
        actor=None,
        name="real",
        connection=ConnectionKind.KUBECONFIG,
        kubeconfig=cluster.stack.write_kubeconfig(tmp_path / "kc").read_text(),
    )
    # one full list first: a submission validates its chip type and
    # PriorityClass against what sync has seen
    sync_once(real)
    ci = token_client("ci-bot", "operator")
    admin = token_client("boss", "admin")
    with Running(real):
        submitted = ci.post(
            "/api/requests/", ci_request(idempotency_key="drain-after-isolate"),
            format="json",
        )  # fmt: skip
        assert submitted.status_code == 201, submitted.json()
        request_id = submitted.json()["id"]
        first = request_running(ci, request_id, timeout=120)
        cluster.pods.append(Request.objects.get(pk=request_id).pod_name)
        chip = Chip.objects.get(cluster=real, uuid=first["chip_uuid"])

        isolated = admin.post(
            f"/api/chips/{chip.pk}/isolate/", {"reason": "repair"}, format="json"
        )
        assert isolated.status_code == 202, isolated.json()
        wait(
            lambda: Chip.objects.get(pk=chip.pk).isolation == "isolated",
            "the portal to prove the isolation",
            timeout=90,
        )
        drained = admin.post(
            f"/api/chips/{chip.pk}/drain/", {"reason": "repair"}, format="json"
        )
        assert drained.status_code in (200, 201), drained.json()

        def moved() -> dict | None:
            state = request_running(ci, request_id, timeout=120)
            return state if state["attempts"] > first["attempts"] else None

        again = wait(moved, "the request to run again after the drain", timeout=150)
        cluster.pods.append(Request.objects.get(pk=request_id).pod_name)
        assert again["chip_uuid"] not in ("", chip.uuid)
        assert again["pod_name"] != first["pod_name"]  # a new attempt, a new pod

        restored = admin.post(
            f"/api/chips/{chip.pk}/restore/", {"reason": "repaired"}, format="json"
        )
        assert restored.status_code == 202, restored.json()
        wait(
            lambda: Chip.objects.get(pk=chip.pk).isolation == "",
            "the portal to prove the restore",
            timeout=90,
        )


@pytest.mark.django_db
def test_the_portal_switches_a_nodes_slicing_mode_on_the_real_stack(
    cluster: Cluster, operator_client, settings, tmp_path
) -> None:
    """Item 6 on the real API server: the node's entry published over REST
    changes nothing until the portal restarts that node's plugin pod; then
    the node registers hami-core, and sync sees it. Put back the same way."""
    from apps.inventory.choices import ConnectionKind
    from apps.inventory.models import Node
    from apps.inventory.services import cluster_create
    from apps.inventory.sync.engine import sync_once

    settings.LOCK_DIR = str(tmp_path / "locks")
    real = cluster_create(
        actor=None,
        name="modes",
        connection=ConnectionKind.KUBECONFIG,
        kubeconfig=cluster.stack.write_kubeconfig(tmp_path / "kc").read_text(),
    )
    sync_once(real)
    url = f"/api/clusters/{real.pk}/node-config"

    def annotation() -> str:
        node = cluster.core.read_node(NODE)
        return (node.metadata.annotations or {}).get("hami-vnpu-core", "")

    def switch(on: bool, version: int) -> None:
        published = operator_client.post(
            f"{url}/publish/",
            {"reason": "mode", "expected_version": version, "confirm_warnings": True,
             "nodes": [{"name": NODE, "hami_vnpu_core": on}]},
            format="json",
        )  # fmt: skip
        assert published.status_code == 201, published.json()
        restarted = operator_client.post(
            f"{url}/restart/", {"node": NODE, "reason": "apply the mode"}, format="json"
        )
        assert restarted.status_code == 202, restarted.json()

    before = annotation()
    assert before in ("", "false")
    baseline = operator_client.get(f"{url}/").json()["baseline_version"]
    switch(True, baseline)
    wait(lambda: annotation() == "true", "the node to register hami-core")

    def synced_core() -> bool:
        sync_once(real)
        return Node.objects.get(cluster=real, name=NODE).hami_vnpu_core

    wait(synced_core, "sync to see the node in hami-core mode")
    switch(False, baseline + 1)
    wait(lambda: annotation() in ("", "false"), "the node back in template mode")
