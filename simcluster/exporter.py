"""The simulated MindCluster npu-exporter: per node, the series a real site's
exporter DaemonSet serves, computed when Prometheus scrapes.

Which pod holds which vNPU on which chip is read from the same place the
portal reads it: the pods' ``hami.io/<cw>-devices-allocated`` annotations (the
allocation the binder wrote and the kubelet's Allocate confirmed with
``bind-phase: success``), for pods whose containers run (phase Running, a
terminating one too until it is gone). How busy each vNPU is comes from the
pod's workload profile (``simcluster.profiles``).

Served on the API server's own listener, without a token (a real exporter is
unauthenticated too), spared by the fault knobs and by a 503 outage (it is
another process on the node); a ``refuse`` outage closes the one listener, so
the scrapes fail then.

- ``GET /exporter/targets``: Prometheus HTTP service discovery, one target per
  node with chips, labelled ``node`` (as a site's relabel of the exporter pod's
  node name does);
- ``GET /exporter/nodes/<node>/metrics``: that node's series (names, labels and
  units of npu-exporter v6: chip HBM in MB, vNPU memory in KB, percentages).
"""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from simcluster import hami, podutil, resources
from simcluster.api import ApiResponse
from simcluster.controllers.binder import read_chip_types
from simcluster.hardware import Chip, Hardware
from simcluster.profiles import Profile, profile_of
from simcluster.promtext import CONTENT_TYPE, Gauge, render
from simcluster.store import Obj, Store

PREFIX = "/exporter/"
TARGETS_PATH = "/exporter/targets"
# The driver numbers vNPUs from 100; 16 ids per chip leave room for the most
# slices a chip takes (a 310P3 with vir01: 7).
VDEV_BASE = 100
VDEV_PER_CHIP = 16
# dcmi's figures (AICores, HBM MB) for chips the device config does not name.
HARDWARE: dict[str, tuple[int, int]] = {
    "310P3": (8, 24576),
    "910B1": (24, 65536),
    "910B2": (24, 65536),
    "910B3": (20, 65536),
    "910B4": (20, 32768),
}
VnpuKey = tuple[str, int, str, int]  # pod uid, container, chip uuid, n-th on it


@dataclass(frozen=True)
class ChipSpec:
    """What one chip is: its name as the exporter reports it and its size."""

    model_name: str
    aicore: int
    hbm_mb: int
    memory_allocatable: int
    templates: dict[str, tuple[int, int]]  # name -> (memory MB, AICores)


@dataclass(frozen=True)
class Vnpu:
    """One vNPU: a container's slice of a chip, and what its pod does with it."""

    key: VnpuKey
    order: tuple[str, str, str, int]  # who came first gets the lower vNPU id
    namespace: str
    pod_name: str
    container_name: str
    chip_index: int
    memory_mb: int
    aicore: int
    profile: Profile


def chip_spec(chip: Chip, chip_types: dict[str, hami.ChipTypeSpec]) -> ChipSpec:
    """The chip's size from the device config, else from ``HARDWARE``."""
    spec = chip_types.get(chip.chip_name)
    aicore, hbm = HARDWARE.get(chip.chip_name, (0, 0))
    if spec is None:
        return ChipSpec(f"Ascend{chip.chip_name}", aicore, hbm, hbm, {})
    return ChipSpec(
        f"Ascend{chip.chip_name}",
        spec.ai_core or aicore,
        spec.memory_capacity or hbm,
        spec.memory_allocatable,
        {t.name: (t.memory, t.ai_core or 0) for t in spec.templates},
    )


def slice_aicore(device: hami.ContainerDevice, template: str, spec: ChipSpec) -> int:
    """AICores a slice booked: its template's, a whole card's, or its share."""
    if device.usedcores > 0:  # hami-core mode books a percentage of the chip
        return max(1, round(spec.aicore * device.usedcores / 100))
    named = spec.templates.get(template)
    if named and named[1]:
        return named[1]
    if spec.memory_allocatable and device.usedmem >= spec.memory_allocatable:
        return spec.aicore
    for memory, aicore in spec.templates.values():
        if memory == device.usedmem and aicore:
            return aicore
    if not spec.memory_allocatable:
        return 0
    return max(1, round(spec.aicore * device.usedmem / spec.memory_allocatable))


def runs_vnpus(pod: Obj) -> bool:
    """The pod's containers run on vNPUs the device plugin created."""
    annotations = podutil.annotations_of(pod)
    return (
        podutil.phase(pod) == "Running"
        and annotations.get(hami.BIND_PHASE) == "success"
    )


def node_of(pod: Obj) -> str:
    """The node a pod runs on (its binding; HAMi's annotation for old fixtures)."""
    bound = (pod.get("spec") or {}).get("nodeName")
    return bound or podutil.annotations_of(pod).get(hami.VGPU_NODE, "")


def _runtime_templates(annotations: dict[str, str], common_word: str) -> dict[str, str]:
    raw = annotations.get(hami.runtime_key(common_word))
    if not raw:
        return {}
    try:
        return {item.uuid: item.temp for item in hami.parse_runtime_info(raw)}
    except hami.AnnotationError:
        return {}


def pod_vnpus(pod: Obj, chips: dict[str, int], specs: list[ChipSpec]) -> Iterator[Vnpu]:
    """The vNPUs of one pod on the chips of its node (``chips``: uuid -> index)."""
    meta = pod.get("metadata") or {}
    annotations = podutil.annotations_of(pod)
    spec = pod.get("spec") or {}
    names = [
        c.get("name", "")
        for c in [*(spec.get("initContainers") or []), *(spec.get("containers") or [])]
    ]
    started = (pod.get("status") or {}).get("startTime") or ""
    profile = profile_of(meta.get("name", ""), annotations)
    for key, value in annotations.items():
        common_word = hami.allocated_common_word(key)
        if common_word is None:
            continue
        try:
            containers = hami.parse_pod_devices(value)
        except hami.AnnotationError:
            continue  # the portal skips it too; the exporter keeps serving
        templates = _runtime_templates(annotations, common_word)
        for position, devices in enumerate(containers):
            seen: Counter[str] = Counter()
            for device in devices:
                index = chips.get(device.uuid)
                if index is None:
                    continue
                nth = seen[device.uuid]
                seen[device.uuid] += 1
                yield Vnpu(
                    key=(meta.get("uid", ""), position, device.uuid, nth),
                    order=(started, meta.get("namespace", ""), meta["name"], position),
                    namespace=meta.get("namespace", ""),
                    pod_name=meta.get("name", ""),
                    container_name=names[position] if position < len(names) else "",
                    chip_index=index,
                    memory_mb=device.usedmem,
                    aicore=slice_aicore(
                        device, templates.get(device.uuid, ""), specs[index]
                    ),
                    profile=profile,
                )


def pcie_bus(index: int) -> str:
    """A plausible PCIe address for the chip in slot ``index``."""
    return f"0000:{index + 1:02x}:00.0"


class Exporter:
    """Every node's exporter, plus the knob that makes a chip's hardware sick."""

    def __init__(
        self, store: Store, hardware: Hardware, clock: Callable[[], float] = time.time
    ) -> None:
        self.store = store
        self.hardware = hardware
        self.clock = clock  # epoch seconds; tests freeze it to read the wave
        self._lock = threading.Lock()
        self._health: dict[tuple[str, int], bool] = {}
        self._vdev: dict[str, dict[VnpuKey, int]] = {}
        self._index: tuple[int, dict[str, list[Obj]]] | None = None

    # -- knobs ----------------------------------------------------------------
    def set_health(self, node: str, index: int, healthy: bool | None) -> None:
        """What dcmi says of one chip, whatever HAMi's registration says
        (None: follow the simulated hardware again). KeyError/IndexError if unknown."""
        chips = self.hardware.chips(node)
        if not chips:
            raise KeyError(node)
        if not 0 <= index < len(chips):
            raise IndexError(index)
        with self._lock:
            if healthy is None:
                self._health.pop((node, index), None)
            else:
                self._health[(node, index)] = healthy

    # -- what is scraped ------------------------------------------------------
    def nodes(self) -> list[str]:
        """Nodes that exist and have chips (where the exporter DaemonSet runs)."""
        return [
            name
            for name in self.hardware.nodes()
            if self.store.get(resources.NODE, "", name) is not None
        ]

    def targets(self, address: str, scheme: str) -> list[dict[str, object]]:
        """The service-discovery document: one target per node."""
        return [
            {
                "targets": [address],
                "labels": {
                    "__scheme__": scheme,
                    "__metrics_path__": f"{PREFIX}nodes/{name}/metrics",
                    "node": name,
                },
            }
            for name in self.nodes()
        ]

    def _pods_on(self, node: str) -> list[Obj]:
        """Running vNPU pods of ``node``; the grouping is redone once per change."""
        with self._lock:
            if self._index is None or self._index[0] != self.store.rv:
                rv, stored = self.store.list(resources.POD)
                by_node: dict[str, list[Obj]] = {}
                for item in stored:
                    if runs_vnpus(item.obj):
                        by_node.setdefault(node_of(item.obj), []).append(item.obj)
                self._index = (rv, by_node)
            return self._index[1].get(node, [])

    def _vdev_ids(self, node: str, vnpus: list[Vnpu]) -> dict[VnpuKey, int]:
        """Stable vNPU ids: one keeps its id while it lives; a new one takes the
        lowest id free on its chip (as the driver hands them out)."""
        with self._lock:
            known = self._vdev.setdefault(node, {})
            live = {v.key for v in vnpus}
            for key in [k for k in known if k not in live]:
                del known[key]
            used = set(known.values())
            for vnpu in sorted(vnpus, key=lambda v: v.order):
                if vnpu.key in known:
                    continue
                first = VDEV_BASE + VDEV_PER_CHIP * vnpu.chip_index
                vdev = next(n for n in range(first, first + 1000) if n not in used)
                known[vnpu.key] = vdev
                used.add(vdev)
            return dict(known)

    def metrics(self, node: str) -> str | None:
        """The exposition text of ``node``; None when there is no such node."""
        chips = self.hardware.chips(node)
        if not chips or self.store.get(resources.NODE, "", node) is None:
            return None
        chip_types = {ct.chip_name: ct for ct in read_chip_types(self.store)}
        specs = [chip_spec(chip, chip_types) for chip in chips]
        index_of = {chip.uuid: index for index, chip in enumerate(chips)}
        vnpus = [
            vnpu
            for pod in self._pods_on(node)
            for vnpu in pod_vnpus(pod, index_of, specs)
        ]
        ids = self._vdev_ids(node, vnpus)
        with self._lock:
            health = {i: self._health.get((node, i)) for i in range(len(chips))}
        now = self.clock()
        return render(self._families(node, chips, specs, vnpus, ids, health, now))

    @staticmethod
    def _families(
        node: str,
        chips: tuple[Chip, ...],
        specs: list[ChipSpec],
        vnpus: list[Vnpu],
        ids: dict[VnpuKey, int],
        health: dict[int, bool | None],
        now: float,
    ) -> list[Gauge]:
        util = Gauge("vnpu_pod_aicore_utilization", "AICore use of the vNPU (%)")
        total = Gauge("vnpu_pod_total_memory", "memory of the vNPU (KB)")
        used = Gauge("vnpu_pod_used_memory", "memory the vNPU uses (KB)")
        weighted = [0.0] * len(chips)  # sum of pct x AICores per chip
        used_kb = [0] * len(chips)
        for vnpu in sorted(vnpus, key=lambda v: ids[v.key]):
            percent = round(vnpu.profile.aicore_at(now), 2)
            kb = round(vnpu.memory_mb * 1024 * vnpu.profile.hbm_percent / 100)
            weighted[vnpu.chip_index] += percent * vnpu.aicore
            used_kb[vnpu.chip_index] += kb
            labels = {
                "id": str(vnpu.chip_index),
                "model_name": specs[vnpu.chip_index].model_name,
                "v_dev_id": str(ids[vnpu.key]),
                "aicore_count": str(vnpu.aicore),
                "namespace": vnpu.namespace,
                "pod_name": vnpu.pod_name,
                "container_name": vnpu.container_name,
                "is_virtual": "true",
            }
            util.add(labels, percent)
            total.add(labels, vnpu.memory_mb * 1024)
            used.add(labels, kb)
        chip_util = Gauge("npu_chip_info_utilization", "AICore use of the chip (%)")
        hbm_used = Gauge("npu_chip_info_hbm_used_memory", "HBM in use (MB)")
        hbm_total = Gauge("npu_chip_info_hbm_total_memory", "HBM of the chip (MB)")
        healthy = Gauge(
            "npu_chip_info_health_status", "1 healthy, 0 unhealthy (the hardware's)"
        )
        for index, (chip, spec) in enumerate(zip(chips, specs, strict=True)):
            labels = {
                "id": str(index),
                "model_name": spec.model_name,
                "vdie_id": chip.uuid,
                "pcie_bus_info": pcie_bus(index),
                "namespace": "",
                "pod_name": "",
                "container_name": "",
            }
            share = weighted[index] / spec.aicore if spec.aicore else 0.0
            chip_util.add(labels, round(min(100.0, share), 2))
            hbm_used.add(labels, round(used_kb[index] / 1024))
            hbm_total.add(labels, spec.hbm_mb)
            sick = health[index]
            healthy.add(labels, int(chip.healthy if sick is None else sick))
        return [chip_util, hbm_used, hbm_total, healthy, util, total, used]

    # -- HTTP -------------------------------------------------------------------
    def answer(self, method: str, path: str, address: str, scheme: str) -> ApiResponse:
        """The reply to ``method path`` under ``/exporter/``; ``address`` is the
        ``host:port`` the caller reached (what the targets point at)."""
        if method != "GET":
            return _text(405, "only GET\n")
        if path == TARGETS_PATH:
            body = json.dumps(self.targets(address, scheme)).encode()
            return ApiResponse(body=body)
        parts = path[len(PREFIX) :].split("/")
        if len(parts) == 3 and parts[0] == "nodes" and parts[2] == "metrics":
            text = self.metrics(parts[1])
            if text is not None:
                return ApiResponse(
                    body=text.encode(), headers={"Content-Type": CONTENT_TYPE}
                )
        return _text(404, f"no exporter at {path}\n")


def _text(status: int, text: str) -> ApiResponse:
    return ApiResponse(
        status, text.encode(), headers={"Content-Type": "text/plain; charset=utf-8"}
    )
