"""A workload generator for demos: creates and deletes slice pods every few seconds.

The churn's pods are jobs in the sense of ``simcluster.jobs``: each runs
15-90 s, prints a short training log (epochs and a falling loss) over its
run and ends, most with exit code 0, about one in seven with an error (exit
1 or 3, its last lines saying why). Ended pods stay ``KEEP_FINISHED`` seconds,
so that ``kubectl get pods -n demo`` shows Completed and Error and ``kubectl
logs`` still reads them, then go.

Besides the churn it keeps two resident pods that never end, so that a demo
has slices to flag: one idle for ever and one using more HBM than it booked
(their workload profiles, ``simcluster.profiles``; the churn's pods get the
default mix).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from datetime import UTC, datetime

from simcluster import errors, hami, jobs, podutil, resources
from simcluster.controllers.base import Controller
from simcluster.controllers.binder import read_chip_types
from simcluster.profiles import WORKLOAD_ANNOTATION
from simcluster.store import Obj, Store

NAMESPACE = "demo"
IMAGE = "swr.cn-south-1.myhuaweicloud.com/ascendhub/ascend-pytorch:24.0.RC1"
LABEL = "simcluster.io/generated"
# Resident pods (name, workload profile): not the churn's, never deleted by it.
RESIDENTS = (("demo-idle", "idle"), ("demo-hog", "hog:140"))
RESIDENT_LABEL = "simcluster.io/resident"
KEEP_FINISHED = 30.0  # seconds an ended demo job stays (its status and log)
MODELS = ("resnet50", "bert-base", "yolov5s", "llama-7b-lora", "vit-b16")
# (exit code, last lines) of the demo jobs that fail
FAILURES = (
    (1, ["Traceback (most recent call last):", "RuntimeError: NPU out of memory."]),
    (3, ["loss is nan, stopping: check the learning rate"]),
)


def training_log(rng: random.Random, name: str) -> tuple[int, list[str]]:
    """A plausible training job's (exit code, lines): epochs with a falling
    loss, then a saved checkpoint, or (one in seven) an error part-way."""
    model = rng.choice(MODELS)
    epochs = rng.randint(3, 8)
    loss = rng.uniform(1.8, 2.6)
    lines = [f"[{name}] training {model}: {epochs} epochs, batch 64, device npu:0"]
    code, last = 0, [f"checkpoint saved to /output/{model}-epoch{epochs}.pt", "done"]
    failure = rng.choice(FAILURES) if rng.random() < 1 / 7 else None
    stop = rng.randint(1, epochs) if failure else epochs
    for epoch in range(1, stop + 1):
        loss *= rng.uniform(0.55, 0.85)
        speed = rng.uniform(300, 900)
        lines.append(
            f"epoch {epoch}/{epochs} loss={loss:.4f} acc={1 - loss / 3:.3f} "
            f"throughput={speed:.1f} samples/s"
        )
    if failure:
        code, last = failure[0], list(failure[1])
    return code, lines + last


def slice_pod(
    name: str,
    namespace: str,
    chip_type: hami.ChipTypeSpec,
    memory: int | None,
    priority_class: str | None = None,
    run_seconds: int | None = None,
    exit_code: int = 0,
    log: list[str] | None = None,
) -> Obj:
    """A pod asking Volcano for one vNPU slice of ``memory`` MB (None = whole card).

    With ``run_seconds`` it is a job (``simcluster.jobs``): it runs that long,
    prints ``log`` and ends with ``exit_code`` (restartPolicy Never).
    """
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
        pod["spec"]["restartPolicy"] = "Never"
        pod["spec"]["containers"][0]["env"] = [
            {"name": jobs.RUN_ENV, "value": str(run_seconds)},
            {"name": jobs.EXIT_ENV, "value": str(exit_code)},
            {"name": jobs.LOG_ENV, "value": "\n".join(log or [])},
        ]
    return pod


def _finished_long_ago(pod: Obj, now_wall: float) -> bool:
    """Ended at least ``KEEP_FINISHED`` s ago (by its containers' finishedAt)."""
    statuses = (pod.get("status") or {}).get("containerStatuses") or []
    ends = [
        (s.get("state") or {}).get("terminated", {}).get("finishedAt") for s in statuses
    ]
    try:
        moments = [
            datetime.strptime(e, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
            for e in ends
            if e
        ]
    except ValueError:
        return True
    if not moments:
        return True  # ended without running (e.g. admission): nothing to show
    return now_wall - max(moments).timestamp() >= KEEP_FINISHED


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
            if podutil.is_terminal(pod) and _finished_long_ago(pod, time.time()):
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
        name = f"demo-{podutil.random_suffix(8)}"
        run_seconds = self.random.randint(15, 90)
        code, log = training_log(self.random, name)
        pod = slice_pod(
            name,
            NAMESPACE,
            chip_type,
            memory,
            run_seconds=run_seconds,
            exit_code=code,
            log=log,
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
