"""The controller loop: one thread feeds store events to every controller in turn."""

from __future__ import annotations

import logging
import threading
import time

from simcluster import errors
from simcluster.store import Store, WatchEvent

log = logging.getLogger("simcluster.controllers")


class Controller:
    """Base class: override ``resync``, ``on_events`` and ``tick`` as needed."""

    name = "controller"

    def resync(self) -> None:
        """Rebuild state from the store (at start and after lost events)."""

    def on_events(self, events: list[WatchEvent]) -> None:
        """React to changes since the last call."""

    def tick(self, now: float) -> None:
        """Periodic work; ``now`` is ``time.monotonic()``."""


class Manager:
    """Runs controllers sequentially in a background thread.

    Sequential execution keeps the simulated components from racing each other;
    each still writes through the store, so API clients see every step.
    """

    def __init__(
        self, store: Store, controllers: list[Controller], period: float = 0.05
    ) -> None:
        self.store = store
        self.controllers = controllers
        self.period = period
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._last_rv = 0
        self.idle = threading.Event()

    def start(self) -> None:
        """Resync every controller, then start the loop thread."""
        self._last_rv = self.store.rv
        for controller in self.controllers:
            self._guard(controller, controller.resync)
        self._thread = threading.Thread(
            target=self._run, name="simcluster-controllers", daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        """Stop the loop and wait for it."""
        self._stop.set()
        self.store.touch()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def _guard(self, controller: Controller, fn: object, *args: object) -> None:
        try:
            fn(*args)  # type: ignore[operator]
        except Exception:
            log.exception("controller %s failed", controller.name)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                events, current = self.store.events_since(self._last_rv, self.period)
            except errors.ApiError:
                self._last_rv = self.store.rv
                for controller in self.controllers:
                    self._guard(controller, controller.resync)
                continue
            self._last_rv = current
            if events:
                self.idle.clear()
                for controller in self.controllers:
                    self._guard(controller, controller.on_events, events)
            now = time.monotonic()
            for controller in self.controllers:
                self._guard(controller, controller.tick, now)
            if not events:
                self.idle.set()
