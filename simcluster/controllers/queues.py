"""Volcano's queue controller, the part clients see: a new Queue is opened.

vc-controller-manager gives a Queue without a parent the parent ``root`` and,
when its ``status.state`` is empty, sets it to ``Open``. A state set through
the status subresource (``kubectl patch queue q --subresource=status``, or
what ``vcctl queue operate -a close`` leads to) is kept as it is: closing and
reopening stay the admin's.
"""

from __future__ import annotations

from simcluster import resources
from simcluster.controllers.base import Controller
from simcluster.store import Obj, Store, WatchEvent


class VolcanoQueues(Controller):
    """Opens new Volcano Queues and gives them the parent ``root``."""

    name = "volcano-queues"

    def __init__(self, store: Store) -> None:
        self.store = store

    def resync(self) -> None:
        _, queues = self.store.list(resources.QUEUE)
        for queue in queues:
            self._open(queue.obj)

    def on_events(self, events: list[WatchEvent]) -> None:
        for event in events:
            if event.res_key == resources.QUEUE.key and event.type != "DELETED":
                self._open(event.obj)

    def _open(self, queue: Obj) -> None:
        name = queue["metadata"]["name"]
        needs_parent = name != "root" and not (queue.get("spec") or {}).get("parent")
        if (queue.get("status") or {}).get("state") and not needs_parent:
            return

        def fill(obj: Obj) -> None:
            if needs_parent:
                obj.setdefault("spec", {})["parent"] = "root"
            status = obj.setdefault("status", {})
            status["state"] = status.get("state") or "Open"

        self.store.mutate(resources.QUEUE, "", name, fill)
