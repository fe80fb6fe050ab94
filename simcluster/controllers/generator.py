"""A workload generator for demos: creates and deletes slice pods every few seconds.

Besides the churn it keeps two resident pods that never end, so that a demo
has slices to flag: one idle for ever and one using more HBM than it booked
(their workload profiles, ``simcluster.profiles``; the churn's pods get the
default mix).
"""

from __future__ import annotations

import random
from collections.abc import Callable

from simcluster import errors, hami, podutil, resources
from simcluster.controllers.base import Controller
from simcluster.controllers.binder import read_chip_types
from simcluster.controllers.kubelet import RUN_SECONDS
from simcluster.profiles import WORKLOAD_ANNOTATION
from simcluster.store import Obj, Store

NAMESPACE = "demo"
IMAGE = "swr.cn-south-1.myhuaweicloud.com/ascendhub/ascend-pytorch:24.0.RC1"
LABEL = "simcluster.io/generated"
# Resident pods (name, workload profile): not the churn's, never deleted by it.
RESIDENTS = (("demo-idle", "idle"), ("demo-hog", "hog:140"))
RESIDENT_LABEL = "simcluster.io/resident"


def slice_pod(
    name: str,
    namespace: str,
    chip_type: hami.ChipTypeSpec,
    memory: int | None,
    priority_class: str | None = None,
    run_seconds: int | None = None,
) -> Obj:
    """A pod asking Volcano for one vNPU slice of ``memory`` MB (None = whole card)."""
    limits: dict[str, str] = {
        "cpu": "1",
        "memory": "1000Mi",
        chip_type.resource_name: "1",
    }
    if memory is not None:
        limits[chip_type.resource_memory_name] = str(memory)
    pod: Obj = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": {"app": name, LABEL: "true"},
        },
        "spec": {
            "schedulerName": "volcano",
            "containers": [
                {
                    "name": "npu-container",
                    "image": IMAGE,
                    "command": ["sleep"],
                    "args": ["100000"],
                    "resources": {"limits": limits, "requests": dict(limits)},
                }
            ],
        },
    }
    if priority_class:
        pod["spec"]["priorityClassName"] = priority_class
    if run_seconds:
        pod["metadata"]["annotations"] = {RUN_SECONDS: str(run_seconds)}
    return pod


class Generator(Controller):
    """Every ``interval`` s: add a slice pod, maybe delete one, drop finished ones."""

    name = "generator"

    def __init__(
        self,
        store: Store,
        admit_pod: Callable[[Obj], None],
        delete_pod: Callable[[str, str], None],
        interval: float = 3.0,
        seed: int | None = None,
    ) -> None:
        self.store = store
        self.admit_pod = admit_pod
        self.delete_pod = delete_pod
        self.interval = interval
        self.random = random.Random(seed)  # noqa: S311 - demo traffic
        self._next = 0.0

    def tick(self, now: float) -> None:
        """Create, delete and clean up demo pods."""
        if now < self._next:
            return
        self._next = now + self.interval
        if self.store.get(resources.NAMESPACE, "", NAMESPACE) is None:
            self.store.create(
                resources.NAMESPACE,
                {
                    "metadata": {
                        "name": NAMESPACE,
                        "labels": {"kubernetes.io/metadata.name": NAMESPACE},
                    },
                    "spec": {"finalizers": ["kubernetes"]},
                    "status": {"phase": "Active"},
                },
            )
        _, pods = self.store.list(resources.POD, NAMESPACE)
        ours = [p.obj for p in pods if podutil.labels_of(p.obj).get(LABEL)]
        for pod in ours:
            if podutil.is_terminal(pod):
                self.delete_pod(NAMESPACE, pod["metadata"]["name"])
        live = [
            p
            for p in ours
            if not podutil.is_terminal(p) and not podutil.is_terminating(p)
        ]
        if live and (len(live) > 20 or self.random.random() < 0.3):
            victim = self.random.choice(live)
            self.delete_pod(NAMESPACE, victim["metadata"]["name"])
        chip_types = read_chip_types(self.store)
        if not chip_types:
            return
        self._keep_residents(chip_types)
        chip_type = self.random.choice(chip_types)
        choices: list[int | None] = [t.memory for t in chip_type.templates] or [None]
        memory = self.random.choice(choices)
        pod = slice_pod(
            f"demo-{podutil.random_suffix(8)}",
            NAMESPACE,
            chip_type,
            memory,
            run_seconds=self.random.randint(15, 90),
        )
        try:
            self.admit_pod(pod)
            self.store.create(resources.POD, pod)
        except errors.ApiError:
            pass

    def _keep_residents(self, chip_types: list[hami.ChipTypeSpec]) -> None:
        """(Re)create the resident pods, each on the smallest template of a type."""
        for n, (name, workload) in enumerate(RESIDENTS):
            found = self.store.get(resources.POD, NAMESPACE, name)
            if found is not None and not podutil.is_terminal(found.obj):
                continue
            if found is not None:
                self.delete_pod(NAMESPACE, name)
                continue  # created again once it is gone
            chip_type = chip_types[n % len(chip_types)]
            memories = sorted(t.memory for t in chip_type.templates)
            pod = slice_pod(
                name, NAMESPACE, chip_type, memories[0] if memories else None
            )
            # Not the churn's label: its victims are chosen by that label.
            pod["metadata"]["labels"] = {"app": name, RESIDENT_LABEL: "true"}
            pod["metadata"]["annotations"] = {WORKLOAD_ANNOTATION: workload}
            try:
                self.admit_pod(pod)
                self.store.create(resources.POD, pod)
            except errors.ApiError:
                pass
