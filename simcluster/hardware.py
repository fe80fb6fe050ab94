"""The simulated hardware: which Ascend chips each node has (what dcmi would report)."""

from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass, replace


@dataclass(frozen=True)
class Chip:
    """One physical chip: die-ID UUID, chip name as dcmi reports it, health,
    and its card id (dcmi's ``GetCardIDDeviceID``; None: the chip's position
    on the node, one chip per card; the two chips of a 310P3 Duo share one)."""

    uuid: str
    chip_name: str
    healthy: bool = True
    card: int | None = None


def card_id(chips: tuple[Chip, ...] | list[Chip], position: int) -> int:
    """The card id of the chip at ``position`` on its node."""
    card = chips[position].card
    return position if card is None else card


def die_id(seed: str) -> str:
    """A deterministic VDIE die ID: five upper-case 8-hex-digit parts, ``-`` joined."""
    digest = hashlib.sha256(seed.encode()).hexdigest().upper()
    return "-".join(digest[i : i + 8] for i in range(0, 40, 8))


class Hardware:
    """Thread-safe map of node name to its chips."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._nodes: dict[str, tuple[Chip, ...]] = {}
        self.version = 0  # bumped on every change, so the plugin can notice

    def set_node(self, node: str, chips: list[Chip]) -> None:
        """Install (or replace) the chips of a node."""
        with self._lock:
            self._nodes[node] = tuple(chips)
            self.version += 1

    def chips(self, node: str) -> tuple[Chip, ...]:
        """The chips of a node (empty if it has none)."""
        with self._lock:
            return self._nodes.get(node, ())

    def nodes(self) -> list[str]:
        """Names of nodes that have chips."""
        with self._lock:
            return sorted(self._nodes)

    def set_health(self, node: str, index: int, healthy: bool) -> Chip:
        """Mark one chip healthy or not; raises KeyError/IndexError if unknown."""
        with self._lock:
            chips = list(self._nodes[node])
            chips[index] = replace(chips[index], healthy=healthy)
            self._nodes[node] = tuple(chips)
            self.version += 1
            return chips[index]
