"""A binder that places pending pods as Volcano's deviceshare or HAMi's scheduler does.

vNPU pods (``schedulerName: volcano`` or ``hami-scheduler`` and a container limit on
``huawei.com/<cw>`` or ``-memory``) get a chip by HAMi's template rule and the
upstream pod annotations. How the chip is chosen follows the scheduler
(``placement.SchedulerRules``): HAMi's honours pins and health and counts
terminating pods; Volcano's ignores pins and health, frees a terminating pod's
room at once, scores only with ``SchedulePolicy``/``ScheduleWeight`` from its
ConfigMap, and serves queues before priorities. Other pending pods are bound to
the matching node with the fewest pods. Nothing is preempted.
"""

from __future__ import annotations

import random
import time
from collections import Counter
from collections.abc import Iterator
from typing import Any

from apps.inventory.hami.goconf import YamlSyntaxError, get_int, load_go_yaml
from simcluster import hami, podutil, resources
from simcluster.controllers.base import Controller
from simcluster.controllers.placement import (
    VNPU_SCHEDULERS,
    ChipState,
    DeviceRequest,
    NodeInfo,
    Pick,
    SchedulerRules,
    containers_of,
    device_requests,
    hami_rules,
    node_matches,
    node_score,
    pick_on_node,
    pod_gpu_policy,
    request_fit,
    taints_tolerated,
    volcano_rules,
)
from simcluster.store import Obj, Store, WatchEvent, now_rfc3339

DEVICE_CONFIG = ("kube-system", "hami-scheduler-device")
SCHEDULER_DEPLOYMENTS = {
    ("volcano-system", "volcano-scheduler"),
    ("kube-system", "hami-scheduler"),
}
PodKey = tuple[str, str]
RETRY_SECONDS = 2.0


def read_chip_types(store: Store) -> list[hami.ChipTypeSpec]:
    """Chip types from the live ``hami-scheduler-device`` ConfigMap."""
    found = store.get(resources.CONFIGMAP, *DEVICE_CONFIG)
    if found is None:
        return []
    return hami.chip_types_from_text(
        (found.obj.get("data") or {}).get("device-config.yaml", "")
    )


VOLCANO_CONFIG = ("volcano-system", "volcano-scheduler-configmap")
VOLCANO_QUEUE = "scheduling.volcano.sh/queue-name"


def read_volcano_rules(store: Store) -> SchedulerRules:
    """Volcano's chip rules from its scheduler ConfigMap's deviceshare arguments,
    read as Volcano reads them (``apps.inventory.hami.goconf``: yaml.v2, and
    ``GetInt``, which ignores a quoted weight)."""
    found = store.get(resources.CONFIGMAP, *VOLCANO_CONFIG)
    text = ((found.obj.get("data") or {}) if found else {}).get(
        "volcano-scheduler.conf", ""
    )
    try:
        conf = load_go_yaml(text) or {}
    except YamlSyntaxError:
        conf = {}
    arguments: dict[str, Any] = {}
    for tier in conf.get("tiers") or [] if isinstance(conf, dict) else []:
        for plugin in (tier or {}).get("plugins") or []:
            if isinstance(plugin, dict) and plugin.get("name") == "deviceshare":
                arguments = plugin.get("arguments") or {}
    policy = arguments.get("deviceshare.SchedulePolicy")
    weight = get_int(arguments, "deviceshare.ScheduleWeight") or 0
    return volcano_rules(policy if isinstance(policy, str) else "", weight)


def pod_queue(pod: Obj) -> str | None:
    """The Volcano queue of a pod Volcano schedules (None: another scheduler's pod)."""
    if (pod.get("spec") or {}).get("schedulerName") != "volcano":
        return None
    annotations = (pod.get("metadata") or {}).get("annotations") or {}
    return annotations.get(VOLCANO_QUEUE) or "default"


def _allocated(pod: Obj) -> list[tuple[str, int]]:
    """(uuid, memory) booked by a pod, from every ``-devices-allocated`` annotation."""
    out: list[tuple[str, int]] = []
    for key, value in ((pod.get("metadata") or {}).get("annotations") or {}).items():
        if key.startswith("hami.io/") and key.endswith("-devices-allocated"):
            try:
                containers = hami.parse_pod_devices(value)
            except ValueError:
                continue
            out.extend((d.uuid, int(d.usedmem)) for c in containers for d in c)
    return out


def _queue_order(item: tuple[PodKey, Obj]) -> tuple[int, str, PodKey]:
    key, pod = item
    priority = int((pod.get("spec") or {}).get("priority") or 0)
    created = (pod.get("metadata") or {}).get("creationTimestamp") or ""
    return (-priority, created, key)


class Binder(Controller):
    """Schedules pending pods; see the module docstring."""

    name = "binder"

    def __init__(
        self, store: Store, policy: str = "binpack", seed: int | None = None
    ) -> None:
        self.store = store
        self.policy = policy  # HAMi's scheduler; Volcano's comes from its ConfigMap
        self.random = random.Random(seed)  # noqa: S311 - Go's map order, not secrets
        self.volcano = volcano_rules("", 0)
        self.chip_types: list[hami.ChipTypeSpec] = []
        self._nodes: dict[str, NodeInfo] = {}
        self._chips: dict[str, ChipState] = {}
        self._contrib: dict[PodKey, tuple[list[tuple[str, int]], bool]] = {}
        self._queue_of: dict[PodKey, str] = {}  # bound Volcano pods' queues
        self._pod_node: dict[PodKey, str] = {}
        self._per_node: Counter[str] = Counter()
        self._pending: set[PodKey] = set()
        self._reported: dict[PodKey, str] = {}
        self._dirty = True
        self._last_try = 0.0
        self._scheduler_generations: dict[PodKey, int] = {}

    # -- state ----------------------------------------------------------------
    def resync(self) -> None:
        """Reload config, nodes and usage from the store."""
        self.chip_types = read_chip_types(self.store)
        self.volcano = read_volcano_rules(self.store)
        self._nodes.clear()
        self._contrib.clear()
        self._queue_of.clear()
        self._pod_node.clear()
        self._per_node.clear()
        self._pending.clear()
        _, nodes = self.store.list(resources.NODE)
        for node in nodes:
            self._observe_node(node.obj)
        _, pods = self.store.list(resources.POD)
        for pod in pods:
            self._observe_pod(pod.obj)
        _, deployments = self.store.list(resources.DEPLOYMENT)
        for deployment in deployments:
            meta = deployment.obj["metadata"]
            key = (meta.get("namespace", ""), meta["name"])
            if key in SCHEDULER_DEPLOYMENTS:
                self._scheduler_generations[key] = meta.get("generation", 0)
        self._rebuild_usage()
        self._dirty = True

    def _observe_node(self, node: Obj) -> None:
        meta = node["metadata"]
        spec = node.get("spec") or {}
        info = NodeInfo(
            meta["name"],
            dict(meta.get("labels") or {}),
            bool(spec.get("unschedulable")),
            taints=list(spec.get("taints") or []),
        )
        for key, value in (meta.get("annotations") or {}).items():
            if not key.startswith("hami.io/node-register-"):
                continue
            try:
                devices = hami.parse_node_register(value)
            except ValueError:
                continue
            info.chips.extend(
                ChipState(
                    info.name, d.index, d.id, d.type, d.count, d.devmem, bool(d.health)
                )
                for d in devices
            )
        self._nodes[info.name] = info

    def _observe_pod(self, pod: Obj) -> None:
        meta = pod["metadata"]
        key = (meta.get("namespace", ""), meta["name"])
        node = (pod.get("spec") or {}).get("nodeName")
        terminal = podutil.is_terminal(pod)
        self._set_pod_node(key, node if node and not terminal else None)
        self._set_contrib(
            key,
            []
            if terminal or not (meta.get("annotations") or {}).get(hami.VGPU_NODE)
            else _allocated(pod),
            releasing=podutil.is_terminating(pod),
        )
        queue = pod_queue(pod)
        if node and not terminal and queue is not None:
            self._queue_of[key] = queue
        else:
            self._queue_of.pop(key, None)
        if not node and not terminal and not podutil.is_terminating(pod):
            if key not in self._pending:
                self._pending.add(key)
                self._dirty = True
        else:
            self._pending.discard(key)
            self._reported.pop(key, None)

    def _set_pod_node(self, key: PodKey, node: str | None) -> None:
        old = self._pod_node.pop(key, None)
        if old:
            self._per_node[old] -= 1
        if node:
            self._pod_node[key] = node
            self._per_node[node] += 1

    def _set_contrib(
        self, key: PodKey, contrib: list[tuple[str, int]], releasing: bool = False
    ) -> None:
        new = (contrib, releasing)
        old = self._contrib.pop(key, ([], False))
        if old == new:
            if contrib:
                self._contrib[key] = new
            return
        self._apply(*old, sign=-1)
        if contrib:
            self._contrib[key] = new
        self._apply(*new, sign=1)
        self._dirty = True

    def _apply(
        self, contrib: list[tuple[str, int]], releasing: bool, sign: int
    ) -> None:
        for uuid, memory in contrib:
            chip = self._chips.get(uuid)
            if chip is not None:
                chip.used += sign
                chip.usedmem += sign * memory
                if releasing:
                    chip.releasing += sign
                    chip.releasingmem += sign * memory

    def _rebuild_usage(self) -> None:
        self._chips = {c.uuid: c for n in self._nodes.values() for c in n.chips}
        for chip in self._chips.values():
            chip.used = chip.usedmem = chip.releasing = chip.releasingmem = 0
        for contrib, releasing in self._contrib.values():
            self._apply(contrib, releasing, sign=1)

    def on_events(self, events: list[WatchEvent]) -> None:
        """Follow pods, nodes, the device config and scheduler restarts."""
        nodes_changed = False
        for event in events:
            if event.res_key == resources.POD.key:
                if event.type == "DELETED":
                    key = (event.namespace, event.obj["metadata"]["name"])
                    self._set_pod_node(key, None)
                    self._set_contrib(key, [])
                    self._queue_of.pop(key, None)
                    self._pending.discard(key)
                    self._reported.pop(key, None)
                    self._dirty = True
                else:
                    self._observe_pod(event.obj)
            elif event.res_key == resources.NODE.key:
                nodes_changed = True
                if event.type == "DELETED":
                    self._nodes.pop(event.obj["metadata"]["name"], None)
                else:
                    self._observe_node(event.obj)
            elif event.res_key == resources.DEPLOYMENT.key and event.type != "DELETED":
                meta = event.obj["metadata"]
                key = (event.namespace, meta["name"])
                generation = meta.get("generation", 0)
                if (
                    key in SCHEDULER_DEPLOYMENTS
                    and self._scheduler_generations.get(key) != generation
                ):
                    self._scheduler_generations[key] = generation
                    self.chip_types = read_chip_types(
                        self.store
                    )  # restart re-reads, as upstream
                    self._dirty = True
            elif (
                event.res_key == resources.CONFIGMAP.key
                and (
                    event.namespace,
                    event.obj["metadata"]["name"],
                )
                == VOLCANO_CONFIG
            ):
                # The conf file is hot-reloaded (a ConfigMap volume), unlike the
                # device config, which Volcano reads once per process.
                self.volcano = read_volcano_rules(self.store)
                self._dirty = True
        if nodes_changed:
            self._rebuild_usage()
            self._dirty = True

    # -- scheduling -----------------------------------------------------------
    def tick(self, now: float) -> None:
        """Try the pending pods when something changed (or every few seconds)."""
        if not self._pending:
            return
        if not self._dirty and now - self._last_try < RETRY_SECONDS:
            return
        self._dirty = False
        self._last_try = now
        if not self.chip_types:
            self.chip_types = read_chip_types(self.store)
        waiting: list[tuple[PodKey, Obj]] = []
        for key in list(self._pending):
            found = self.store.get(resources.POD, *key)
            if found is None:
                self._pending.discard(key)
                continue
            waiting.append((key, found.obj))
        for key, pod in self._serving_order(waiting):
            self._schedule(key, pod)

    def _serving_order(
        self, waiting: list[tuple[PodKey, Obj]]
    ) -> Iterator[tuple[PodKey, Obj]]:
        """HAMi's pods by priority, then age; Volcano's by queue first.

        Volcano's allocate action takes the queue with the smallest share
        (here: its bound vNPU pods), then that queue's highest-priority, oldest
        pod, and counts the placement before choosing the next queue. So a
        victim's replacement in a less-used queue is served before a
        higher-priority pod of a busier one.
        """
        volcano = [item for item in waiting if pod_queue(item[1]) is not None]
        others = sorted(
            (item for item in waiting if pod_queue(item[1]) is None), key=_queue_order
        )
        yield from others
        by_queue: dict[str, list[tuple[PodKey, Obj]]] = {}
        for item in sorted(volcano, key=_queue_order):
            by_queue.setdefault(pod_queue(item[1]) or "default", []).append(item)
        share = Counter(self._queue_of.values())
        while by_queue:
            queue = min(by_queue, key=lambda q: (share[q], q))
            key, pod = by_queue[queue].pop(0)
            if not by_queue[queue]:
                del by_queue[queue]
            yield key, pod
            if key in self._pod_node:
                share[queue] += 1

    def _candidates(self, pod: Obj) -> tuple[list[NodeInfo], list[str]]:
        """The nodes the pod may go to, and why the others may not (counted
        as the scheduler's FailedScheduling message counts them)."""
        nodes = [n for n in self._nodes.values() if not n.unschedulable]
        matching = [n for n in nodes if node_matches(pod, n)]
        tolerated = [n for n in matching if taints_tolerated(pod, n)]
        excluded = []
        if len(nodes) > len(matching):
            excluded.append(
                f"{len(nodes) - len(matching)} node(s) didn't match Pod's node "
                "affinity/selector"
            )
        if len(matching) > len(tolerated):
            excluded.append(
                f"{len(matching) - len(tolerated)} node(s) had untolerated taint"
            )
        return sorted(tolerated, key=lambda n: n.name), excluded

    def _schedule(self, key: PodKey, pod: Obj) -> None:
        requests = device_requests(pod, self.chip_types)
        scheduler = (pod.get("spec") or {}).get("schedulerName", "default-scheduler")
        total = len(self._nodes)
        nodes, excluded = self._candidates(pod)
        if not requests:
            if not nodes:
                self._fail(key, pod, scheduler, self._message(total, excluded, ""))
                return
            best = min(nodes, key=lambda n: (self._per_node[n.name], n.name))
            self._bind(key, best.name, [], scheduler)
            return
        if scheduler not in VNPU_SCHEDULERS:
            return  # no simulated scheduler allocates vNPUs for this pod
        fits: list[hami.FitResult] = []
        for request in requests:
            fit = request_fit(request, scheduler)
            if request.count > 1 and request.memory is not None:
                cw = request.chip_type.common_word
                reason = f"{cw}: vNPU not supported for multiple devices"
                self._fail(
                    key, pod, scheduler, f"0/{total} nodes are available: {reason}"
                )
                return
            if fit.kind == hami.FitKind.INVALID:
                self._fail(
                    key, pod, scheduler, f"0/{total} nodes are available: {fit.reason}"
                )
                return
            fits.append(fit)
        annotations = pod["metadata"].get("annotations") or {}
        rules = (
            self.volcano
            if scheduler == "volcano"
            else hami_rules(pod_gpu_policy(annotations, self.policy))
        )
        best_picks: list[Pick] | None = None
        best_score = (-1.0, 0.0)
        for node in nodes:
            picks = pick_on_node(node, requests, fits, annotations, rules, self.random)
            if picks is None:
                continue
            tie = self.random.random() if rules.random_ties else 0.0
            score = (node_score(picks, rules), tie)
            if score > best_score:
                best_picks, best_score = picks, score
        if best_picks is None:
            self._fail(
                key,
                pod,
                scheduler,
                self._message(total, excluded, self._device_reason(requests, fits)),
            )
            return
        self._bind(key, best_picks[0].chip.node, best_picks, scheduler)

    @staticmethod
    def _device_reason(
        requests: list[DeviceRequest], fits: list[hami.FitResult]
    ) -> str:
        parts = []
        for request, fit in zip(requests, fits, strict=True):
            cw = request.chip_type.common_word
            if fit.kind == hami.FitKind.WHOLE_CARD:
                parts.append(f"no empty {cw} chip for a whole card ({fit.memory} MB)")
            else:
                parts.append(f"no {cw} chip with {fit.memory} MB and a free slot")
        return "; ".join(parts)

    @staticmethod
    def _message(total: int, excluded: list[str], reason: str) -> str:
        parts = [reason] if reason else []
        parts.extend(excluded)
        return f"0/{total} nodes are available: " + ("; ".join(parts) or "no nodes")

    def _bind(self, key: PodKey, node: str, picks: list[Pick], scheduler: str) -> None:
        stamp = str(int(time.time()))

        def write(obj: Obj) -> Any:
            if (obj.get("spec") or {}).get("nodeName") or podutil.is_terminating(obj):
                return False
            obj["spec"]["nodeName"] = node
            podutil.set_condition(obj, "PodScheduled", "True", now_rfc3339())
            if picks:
                annotations = obj["metadata"].setdefault("annotations", {})
                annotations.update(self._annotations(obj, node, picks, stamp))
            return None

        bound = self.store.mutate(resources.POD, key[0], key[1], write)
        if bound is not None:
            # Count the allocation now, as HAMi's scheduler updates its cache on
            # bind: the next pending pod of this same pass must see the chip's
            # new usage, not wait for the watch event (that over-committed chips).
            self._observe_pod(bound.obj)

    @staticmethod
    def _annotations(
        pod: Obj, node: str, picks: list[Pick], stamp: str
    ) -> dict[str, str]:
        n_containers = len(containers_of(pod))
        out = {
            hami.VGPU_NODE: node,
            "hami.io/vgpu-time": stamp,
            "predicate-time": stamp,
        }
        by_type: dict[str, list[Pick]] = {}
        for pick in picks:
            by_type.setdefault(pick.request.chip_type.common_word, []).append(pick)
        for cw, group in by_type.items():
            containers: list[list[hami.ContainerDevice]] = [
                [] for _ in range(n_containers)
            ]
            runtime: list[hami.RuntimeInfo] = []
            for pick in group:
                containers[pick.request.container].append(
                    hami.ContainerDevice(pick.chip.uuid, cw, pick.fit.memory, 0)
                )
                runtime.append(
                    hami.RuntimeInfo(
                        pick.chip.uuid, pick.fit.template or "", pick.fit.memory, 0
                    )
                )
            encoded = hami.encode_pod_devices(containers)
            out[hami.to_allocate_key(cw)] = encoded
            out[hami.allocated_key(cw)] = encoded
            out[f"huawei.com/{cw}"] = hami.render_runtime_info(runtime)
        out[hami.BIND_PHASE] = "allocating"
        out["hami.io/bind-time"] = stamp
        return out

    def _fail(self, key: PodKey, pod: Obj, scheduler: str, message: str) -> None:
        if self._reported.get(key) == message:
            return
        self._reported[key] = message

        def condition(obj: Obj) -> Any:
            if (obj.get("spec") or {}).get("nodeName"):
                return False
            podutil.set_condition(
                obj, "PodScheduled", "False", now_rfc3339(), "Unschedulable", message
            )
            return None

        self.store.mutate(resources.POD, key[0], key[1], condition)
        meta = pod["metadata"]
        now = now_rfc3339()
        event = {
            "metadata": {
                "name": f"{meta['name']}.{time.time_ns():x}",
                "namespace": meta.get("namespace", "default"),
            },
            "involvedObject": {
                "kind": "Pod",
                "namespace": meta.get("namespace", ""),
                "name": meta["name"],
                "uid": meta.get("uid", ""),
                "apiVersion": "v1",
                "resourceVersion": meta.get("resourceVersion", ""),
            },
            "reason": "FailedScheduling",
            "message": message,
            "source": {"component": scheduler},
            "firstTimestamp": now,
            "lastTimestamp": now,
            "count": 1,
            "type": "Warning",
            "eventTime": None,
            "reportingComponent": scheduler,
            "reportingInstance": "",
        }
        self.store.create(resources.EVENT, event)
