"""Fault injection: latency, 500s and 429s, forced 409s, dropped watches, outages."""

from __future__ import annotations

import random
import threading
import time
from collections import Counter
from dataclasses import asdict, dataclass, fields
from typing import Any

from simcluster import errors


@dataclass
class FaultSettings:
    """What to inject. Rates are shares in [0, 1]."""

    latency_ms: float = 0.0
    error_500_rate: float = 0.0
    error_429_rate: float = 0.0
    conflict_rate: float = 0.0
    watch_drop_after_events: int = 0
    watch_drop_after_seconds: float = 0.0


class Faults:
    """Thread-safe holder of the current fault settings and outage window."""

    def __init__(
        self, settings: FaultSettings | None = None, seed: int | None = None
    ) -> None:
        self._lock = threading.Lock()
        self.settings = settings or FaultSettings()
        self._random = random.Random(seed)  # noqa: S311 - not for security
        self.outage_until = 0.0
        # What was injected so far (500, 429, 409, dropped watches, delayed requests).
        self.injected: Counter[str] = Counter()

    def count(self, kind: str) -> None:
        """Record one injected fault of ``kind``."""
        with self._lock:
            self.injected[kind] += 1

    def update(self, values: dict[str, Any]) -> FaultSettings:
        """Set some fields (unknown names are a 400); returns the new settings."""
        names = {f.name: f.type for f in fields(FaultSettings)}
        with self._lock:
            current = asdict(self.settings)
            for key, value in values.items():
                if key not in names:
                    raise errors.bad_request(f"unknown fault setting {key!r}")
                try:
                    current[key] = (
                        int(value) if key == "watch_drop_after_events" else float(value)
                    )
                except (TypeError, ValueError):
                    raise errors.bad_request(
                        f"bad value for {key!r}: {value!r}"
                    ) from None
            self.settings = FaultSettings(**current)
            return self.settings

    def reset(self) -> None:
        """Switch every fault off and end any outage."""
        with self._lock:
            self.settings = FaultSettings()
            self.outage_until = 0.0

    def in_outage(self) -> bool:
        """Whether an outage is in progress."""
        return time.monotonic() < self.outage_until

    def _roll(self, rate: float) -> bool:
        with self._lock:
            return rate > 0 and self._random.random() < rate

    def before_request(self, *, write: bool) -> None:
        """Apply latency, then maybe raise an injected error."""
        settings = self.settings
        if settings.latency_ms > 0:
            self.count("latency")
            time.sleep(settings.latency_ms / 1000.0)
        if self._roll(settings.error_500_rate):
            self.count("500")
            raise errors.internal_error("simcluster: injected internal error")
        if self._roll(settings.error_429_rate):
            self.count("429")
            raise errors.too_many_requests(
                "simcluster: injected rate limit (too many requests)"
            )

    def forced_conflict(self) -> bool:
        """Whether this write should fail with an injected 409 Conflict."""
        if self._roll(self.settings.conflict_rate):
            self.count("409")
            return True
        return False
