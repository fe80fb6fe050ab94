"""The HAMi Ascend device plugin, simulated on every node that has chips.

It writes the node registration (``hami.io/node-register-<cw>``, one chip type
per node), the handshake (``Reported_...``) and, from plugin v1.3 on,
``hami-vnpu-core`` annotations, and the extended resource ``huawei.com/<cw>`` =
healthy chips x count, at an interval. The device config is read
at start and again when the plugin DaemonSet is rolled (as the real plugin reads
its mounted file once per process).
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any

from simcluster import hami, resources
from simcluster.controllers.base import Controller
from simcluster.controllers.binder import read_chip_types
from simcluster.hardware import Chip, Hardware
from simcluster.selectors import match_label_selector
from simcluster.store import Obj, Store, WatchEvent

PLUGIN_DAEMONSET = ("kube-system", "hami-ascend-device-plugin")
REPORT_OFFSET = timedelta(seconds=1)  # the plugin's --report_time_offset default
VNPU_CORE_SINCE = (1, 3)  # plugin versions that write (and read) hami-vnpu-core
# From v1.4.0 a hami-core node's chips register devcore 100 (a percent,
# HamiVnpuCoreMaxPercent in register.go); v1.3.0 registers the config's aiCore
# even then, so a ``-core`` percent above it never fits.
CORE_PERCENT_SINCE = (1, 4)


def network_id(common_word: str, index: int) -> int:
    """``getDeviceNetworkID``: 0 for index <= 3, else 1; always 0 for Ascend910C."""
    if common_word == "Ascend910C":
        return 0
    return 0 if index <= 3 else 1


def device_infos(
    chips: tuple[Chip, ...] | list[Chip],
    chip_type: hami.ChipTypeSpec,
    core_percent: bool,
) -> list[hami.DeviceInfo]:
    """The ``DeviceInfo`` list the plugin registers for chips of one type;
    ``devcore`` is 100 when ``core_percent`` (a v1.4+ plugin in hami-core
    mode), else the config's aiCore."""
    count = hami.slots_per_chip(chip_type.memory_allocatable, chip_type.templates)
    cw = chip_type.common_word
    out = []
    for index, chip in enumerate(chips):
        if chip.chip_name != chip_type.chip_name:
            continue
        custom: dict[str, Any] = {}
        if cw.startswith("Ascend910"):
            custom = {"NetworkID": network_id(cw, index)}
        out.append(
            hami.DeviceInfo(
                id=chip.uuid,
                index=index,
                count=count,
                devmem=chip_type.memory_allocatable,
                devcore=100 if core_percent else (chip_type.ai_core or 0),
                type=cw,
                health=chip.healthy,
                custominfo=custom,
            )
        )
    return out


def served_chip_type(
    chips: tuple[Chip, ...] | list[Chip], chip_types: list[hami.ChipTypeSpec]
) -> hami.ChipTypeSpec | None:
    """The one chip type the plugin serves on a node: the first ``chipName`` of
    the config that the node's chips have. None is the real plugin's crash loop."""
    names = {chip.chip_name for chip in chips}
    return next((ct for ct in chip_types if ct.chip_name in names), None)


def plugin_version(image: str) -> tuple[int, int]:
    """``(major, minor)`` of the plugin image's tag (``...:v1.4.0``); (0, 0) if none."""
    match = re.search(r":v?(\d+)\.(\d+)", image or "")
    return (int(match.group(1)), int(match.group(2))) if match else (0, 0)


def apply_registration(
    node: Obj,
    chips: tuple[Chip, ...] | list[Chip],
    chip_types: list[hami.ChipTypeSpec],
    vnpu_core: bool,
    moment: datetime,
    version: tuple[int, int] = VNPU_CORE_SINCE,
) -> bool:
    """Write the plugin's annotations and resources into a node; False: crash loop.

    As the real plugin: one chip type per node; a sick chip is registered with
    its health false and its slots leave ``huawei.com/<cw>``; every chip has
    ``devicepairscore``; ``hami-vnpu-core`` only from plugin v1.3 on, and
    ``devcore`` 100 in that mode only from v1.4 on.
    """
    chip_type = served_chip_type(chips, chip_types)
    if chip_type is None:
        return False
    annotations = node["metadata"].setdefault("annotations", {})
    status = node.setdefault("status", {})
    core_mode = vnpu_core and version >= VNPU_CORE_SINCE
    devices = device_infos(
        chips, chip_type, core_mode and version >= CORE_PERCENT_SINCE
    )
    cw = chip_type.common_word
    annotations[hami.register_key(cw)] = hami.render_node_register(
        devices, pair_scores=True
    )
    annotations[hami.handshake_key(cw)] = hami.render_handshake_reported(
        moment + REPORT_OFFSET
    )
    healthy = sum(1 for device in devices if device.health)
    total = str(healthy * devices[0].count)
    for field in ("capacity", "allocatable"):
        status.setdefault(field, {})[chip_type.resource_name] = total
    if version >= VNPU_CORE_SINCE:
        annotations["hami-vnpu-core"] = "true" if core_mode else "false"
    return True


class DevicePlugin(Controller):
    """Keeps the registration of every node with chips (see module docstring)."""

    name = "device-plugin"

    def __init__(
        self, store: Store, hardware: Hardware, interval: float = 30.0
    ) -> None:
        self.store = store
        self.hardware = hardware
        self.interval = interval
        self.chip_types: list[hami.ChipTypeSpec] = []
        self.vnpu_core = False
        self._next = 0.0
        self._generation: int | None = None
        self._hardware_version = -1
        self.reports = 0  # rounds of registrations written

    def _load_config(self) -> None:
        self.chip_types = read_chip_types(self.store)
        found = self.store.get(
            resources.CONFIGMAP, "kube-system", "hami-scheduler-device"
        )
        self.vnpu_core = False
        if found is not None:
            try:
                doc = hami.parse_device_config(
                    (found.obj.get("data") or {}).get("device-config.yaml", "")
                )
                self.vnpu_core = bool(doc.hami_vnpu_core)
            except ValueError:
                pass

    def resync(self) -> None:
        """Read the config (the plugin's start)."""
        self._load_config()
        ds = self.store.get(resources.DAEMONSET, *PLUGIN_DAEMONSET)
        self._generation = ds.obj["metadata"].get("generation") if ds else None
        self._next = 0.0

    def on_events(self, events: list[WatchEvent]) -> None:
        """A roll of the plugin DaemonSet restarts the plugin: re-read, report now."""
        for event in events:
            if event.res_key != resources.DAEMONSET.key or event.type == "DELETED":
                continue
            meta = event.obj["metadata"]
            if (event.namespace, meta["name"]) == PLUGIN_DAEMONSET and (
                meta.get("generation") != self._generation
            ):
                self._generation = meta.get("generation")
                self._load_config()
                self._next = 0.0

    def _version(self) -> tuple[int, int]:
        ds = self.store.get(resources.DAEMONSET, *PLUGIN_DAEMONSET)
        if ds is None:
            return VNPU_CORE_SINCE
        template = ((ds.obj.get("spec") or {}).get("template") or {}).get("spec") or {}
        containers = template.get("containers") or [{}]
        return plugin_version(containers[0].get("image", ""))

    def _served_nodes(self) -> list[str]:
        ds = self.store.get(resources.DAEMONSET, *PLUGIN_DAEMONSET)
        names = self.hardware.nodes()
        if ds is None:
            return names
        template = ((ds.obj.get("spec") or {}).get("template") or {}).get("spec") or {}
        selector = template.get("nodeSelector") or {}
        out = []
        for name in names:
            node = self.store.get(resources.NODE, "", name)
            labels = (node.obj["metadata"].get("labels") or {}) if node else {}
            if match_label_selector({"matchLabels": selector}, labels):
                out.append(name)
        return out

    def tick(self, now: float) -> None:
        """Report every interval, and at once when the hardware changed."""
        if now < self._next and self.hardware.version == self._hardware_version:
            return
        self._next = now + self.interval
        self._hardware_version = self.hardware.version
        self.reports += 1  # for tests that wait for the next reports
        moment = datetime.now(UTC)
        version = self._version()
        for name in self._served_nodes():
            chips = self.hardware.chips(name)

            def write(node: Obj, chips: tuple[Chip, ...] = chips) -> Any:
                return (
                    None
                    if apply_registration(
                        node, chips, self.chip_types, self.vnpu_core, moment, version
                    )
                    else False
                )

            self.store.mutate(resources.NODE, "", name, write)
