"""Simulated kubelets: start bound pods, make them Ready, play their jobs out
(``simcluster.jobs``: run time, log lines, exit code), remove them."""

from __future__ import annotations

import contextlib
import hashlib
import time
from datetime import UTC, datetime
from typing import Any

from simcluster import hami, jobs, podutil, resources
from simcluster.api import PodDeadlines
from simcluster.controllers.allocate import (
    allocate_error,
    allocate_failure_message,
    create_error,
    create_failure_message,
    not_started,
    start_error_status,
)
from simcluster.controllers.base import Controller
from simcluster.podlogs import LogBook
from simcluster.store import Obj, Store, WatchEvent, now_rfc3339

RUN_SECONDS = jobs.RUN_ANNOTATION
PodKey = tuple[str, str]


def node_ip(node: str) -> str:
    """A stable fake InternalIP for a node."""
    digest = hashlib.sha256(node.encode()).digest()
    return f"10.20.{digest[0]}.{digest[1] % 250 + 2}"


def pod_ip(uid: str) -> str:
    """A stable fake pod IP."""
    digest = hashlib.sha256(uid.encode()).digest()
    return f"172.16.{digest[0]}.{digest[1] % 250 + 2}"


def container_id(pod_uid: str, name: str) -> str:
    """A stable fake containerd ID for a pod's container."""
    return "containerd://" + hashlib.sha256((pod_uid + name).encode()).hexdigest()


def _parse_time(text: str) -> float:
    moment = datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    return time.monotonic() + (moment - datetime.now(UTC)).total_seconds()


def _wall_ns(text: str) -> int:
    moment = datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    return int(moment.timestamp()) * 1_000_000_000


def serve_devices(pod: Obj) -> None:
    """The device plugin's Allocate: pop devices-to-allocate, bind-phase success."""
    annotations = pod["metadata"].get("annotations") or {}
    touched = False
    for key, value in list(annotations.items()):
        if key.startswith("hami.io/") and key.endswith("-devices-to-allocate"):
            containers = hami.parse_pod_devices(value)
            annotations[key] = hami.encode_pod_devices([[] for _ in containers])
            touched = True
    if touched:
        annotations[hami.BIND_PHASE] = "success"


def start_pod(pod: Obj, node: Obj | None, ready: bool) -> None:
    """Turn a bound Pending pod into a Running one."""
    now = now_rfc3339()
    spec = pod.get("spec") or {}
    status = pod.setdefault("status", {})
    status["phase"] = "Running"
    status["startTime"] = now
    host = node_ip(spec.get("nodeName", ""))
    status["hostIP"] = host
    status["hostIPs"] = [{"ip": host}]
    ip = host if spec.get("hostNetwork") else pod_ip(pod["metadata"].get("uid", ""))
    status["podIP"] = ip
    status["podIPs"] = [{"ip": ip}]
    for kind in ("PodReadyToStartContainers", "Initialized", "PodScheduled"):
        podutil.set_condition(pod, kind, "True", now)
    set_ready(pod, ready, now)
    serve_devices(pod)


def fail_allocation(pod: Obj, reason: str) -> None:
    """The kubelet fails a pod whose Allocate failed (UnexpectedAdmissionError)."""
    now = now_rfc3339()
    pod["metadata"].setdefault("annotations", {})[hami.BIND_PHASE] = "failed"
    status = pod.setdefault("status", {})
    status.update(
        {
            "phase": "Failed",
            "reason": "UnexpectedAdmissionError",
            "message": allocate_failure_message(reason),
            "startTime": now,
        }
    )


def set_ready(pod: Obj, ready: bool, now: str) -> None:
    """Set Ready/ContainersReady and the container statuses."""
    value = "True" if ready else "False"
    podutil.set_condition(pod, "ContainersReady", value, now)
    podutil.set_condition(pod, "Ready", value, now)
    started = (pod.get("status") or {}).get("startTime", now)
    pod["status"]["containerStatuses"] = [
        {
            "name": c.get("name", ""),
            "image": c.get("image", ""),
            "imageID": "",
            "containerID": container_id(
                pod["metadata"].get("uid", ""), c.get("name", "")
            ),
            "ready": ready,
            "started": True,
            "restartCount": 0,
            "state": {"running": {"startedAt": started}},
        }
        for c in (pod.get("spec") or {}).get("containers") or []
    ]


def finish_pod(pod: Obj, job: jobs.Job | None = None) -> None:
    """The run is over: each container terminated with its job's exit code;
    phase Succeeded when every code is 0, else Failed (restartPolicy Never)."""
    job = job or jobs.Job()
    now = now_rfc3339()
    status = pod.setdefault("status", {})
    podutil.set_condition(pod, "Ready", "False", now, "PodCompleted")
    podutil.set_condition(pod, "ContainersReady", "False", now, "PodCompleted")
    started = status.get("startTime", now)
    statuses = []
    for cs in status.get("containerStatuses") or []:
        code = job.exit_code(cs.get("name", ""))
        terminated = {
            "exitCode": code,
            "reason": jobs.exit_reason(code),
            "startedAt": started,
            "finishedAt": now,
        }
        if cs.get("containerID"):
            terminated["containerID"] = cs["containerID"]
        statuses.append(
            {
                **cs,
                "ready": False,
                "started": False,
                "state": {"terminated": terminated},
            }
        )
    status["containerStatuses"] = statuses
    failed = any(s["state"]["terminated"]["exitCode"] for s in statuses)
    status["phase"] = "Failed" if failed else "Succeeded"


class Kubelet(Controller):
    """All nodes' kubelets: pod start, readiness, completion and graceful removal."""

    name = "kubelet"

    def __init__(
        self,
        store: Store,
        deadlines: PodDeadlines,
        ready_delay: float = 0.5,
        logs: LogBook | None = None,
    ) -> None:
        self.store = store
        self.deadlines = deadlines
        self.ready_delay = ready_delay
        self.logs = logs or LogBook()
        # When this kubelet started a pod (monotonic s, wall ns): startTime
        # has whole seconds only, and a run and its lines count from the start.
        self._started: dict[PodKey, tuple[float, int]] = {}
        self._to_start: set[PodKey] = set()
        self._retry: set[PodKey] = set()
        self._ready_at: dict[PodKey, float] = {}
        self._finish_at: dict[PodKey, float] = {}
        self._terminating: dict[PodKey, tuple[str, float]] = {}

    def resync(self) -> None:
        """Scan every pod."""
        self._to_start.clear()
        self._retry.clear()
        self._ready_at.clear()
        self._finish_at.clear()
        self._terminating.clear()
        _, pods = self.store.list(resources.POD)
        for pod in pods:
            self._observe(pod.obj)

    def on_events(self, events: list[WatchEvent]) -> None:
        """Track pods that need the kubelet's attention."""
        for event in events:
            if event.res_key != resources.POD.key:
                continue
            if event.type == "DELETED":
                key = (event.namespace, event.obj["metadata"]["name"])
                for table in (
                    self._ready_at,
                    self._finish_at,
                    self._terminating,
                    self._started,
                ):
                    table.pop(key, None)
                self.logs.forget_pod(event.obj["metadata"].get("uid", ""))
                self._to_start.discard(key)
                self._retry.discard(key)
            else:
                self._observe(event.obj)

    def _observe(self, pod: Obj) -> None:
        meta = pod["metadata"]
        key = (meta.get("namespace", ""), meta["name"])
        spec = pod.get("spec") or {}
        phase = podutil.phase(pod)
        if meta.get("deletionTimestamp"):
            self._to_start.discard(key)
            self._retry.discard(key)
            at = self.deadlines.get(meta.get("uid", ""))
            self._terminating[key] = (
                meta.get("uid", ""),
                at if at is not None else _parse_time(meta["deletionTimestamp"]),
            )
            return
        if phase == "Pending" and spec.get("nodeName"):
            self._to_start.add(key)
        elif phase == "Running":
            if not podutil.is_ready(pod) and key not in self._ready_at:
                self._ready_at[key] = time.monotonic() + self.ready_delay
            if key not in self._finish_at:
                self._play(key, pod)

    def _play(self, key: PodKey, pod: Obj) -> None:
        """A running pod's job: when its run ends, and its log (unless open)."""
        job = jobs.read_job(pod)
        base, started_ns = self._start_of(key, pod)
        if job.run_seconds is not None:
            self._finish_at[key] = base + job.run_seconds
        self._open_logs(pod, job, started_ns)

    def _start_of(self, key: PodKey, pod: Obj) -> tuple[float, int]:
        """When the pod started (monotonic s, wall ns): exactly if this kubelet
        started it, else from its startTime (or now, without one)."""
        if key in self._started:
            return self._started[key]
        started = (pod.get("status") or {}).get("startTime")
        if started:
            with contextlib.suppress(ValueError):
                return _parse_time(started), _wall_ns(started)
        return time.monotonic(), time.time_ns()

    def _open_logs(self, pod: Obj, job: jobs.Job, started_ns: int) -> None:
        """Schedule each container's lines from its start (once per container)."""
        uid = pod["metadata"].get("uid", "")
        for name, lines in job.lines.items():
            if lines:
                self.logs.start(
                    uid,
                    container_id(uid, name),
                    jobs.schedule(lines, job.run_seconds, started_ns),
                )

    def tick(self, now: float) -> None:
        """Do whatever is due."""
        self._start_pending()
        for key, at in list(self._ready_at.items()):
            if at <= now:
                del self._ready_at[key]
                self.store.mutate(resources.POD, key[0], key[1], self._make_ready)
        for key, at in list(self._finish_at.items()):
            if at <= now:
                del self._finish_at[key]
                self.store.mutate(resources.POD, key[0], key[1], self._finish)
        for key, (uid, at) in list(self._terminating.items()):
            if at <= now:
                del self._terminating[key]
                self._remove(key, uid)

    def _start_pending(self) -> None:
        # A pod whose vNPU could not be created is tried again at the next
        # tick, once (not again within this one).
        self._to_start |= self._retry
        self._retry = set()
        for key in sorted(self._to_start):
            self._to_start.discard(key)
            ready = self.ready_delay <= 0

            def start(pod: Obj, ready: bool = ready, key: PodKey = key) -> Any:
                node_name = (pod.get("spec") or {}).get("nodeName")
                if (
                    podutil.phase(pod) != "Pending"
                    or not node_name
                    or podutil.is_terminating(pod)
                ):
                    return False
                node = self.store.get(resources.NODE, "", node_name)
                if node is None:
                    return False
                annotations = pod["metadata"].get("annotations") or {}
                if annotations.get(hami.BIND_PHASE) == "allocating":
                    devices = self._registered(node.obj)
                    reason = allocate_error(pod, devices)
                    if reason is not None:
                        fail_allocation(pod, reason)
                        return None
                    reason = create_error(pod, self._node_pods(node_name), devices)
                    if reason is not None:
                        return self._cannot_create(key, pod, reason)
                start_pod(pod, node.obj, ready)
                # Its lines are due from now: open the log before anyone can
                # read the pod as Running.
                self._started[key] = (time.monotonic(), time.time_ns())
                self._open_logs(pod, jobs.read_job(pod), self._started[key][1])
                return None

            self.store.mutate(resources.POD, key[0], key[1], start)

    def _cannot_create(self, key: PodKey, pod: Obj, reason: str) -> Any:
        """The runtime could not create the pod's vNPU: with restartPolicy
        Never the pod ends Failed (StartError); else the kubelet tries again
        (the container waits, as in RunContainerError's back-off)."""
        if (pod.get("spec") or {}).get("restartPolicy") == "Never":
            serve_devices(pod)  # Allocate itself succeeded
            pod["status"] = start_error_status(
                pod, reason, now_rfc3339(), pod_ip(pod["metadata"].get("uid", ""))
            )
            return None
        self._retry.add(key)
        message = create_failure_message(reason)
        waiting = {"reason": "RunContainerError", "message": message}
        statuses = (pod.get("status") or {}).get("containerStatuses") or []
        if statuses and statuses[0].get("state", {}).get("waiting") == waiting:
            return False  # unchanged: no write, no event
        pod.setdefault("status", {})["containerStatuses"] = not_started(
            pod, {"waiting": waiting}
        )
        return None

    def _node_pods(self, node_name: str) -> list[Obj]:
        _, pods = self.store.list(resources.POD)
        return [
            p.obj
            for p in pods
            if (p.obj.get("spec") or {}).get("nodeName") == node_name
        ]

    @staticmethod
    def _registered(node: Obj) -> dict[str, hami.DeviceInfo]:
        """The node's chips as its plugin registered them, by UUID."""
        devices: dict[str, hami.DeviceInfo] = {}
        for key, value in (node["metadata"].get("annotations") or {}).items():
            if key.startswith("hami.io/node-register-"):
                with contextlib.suppress(ValueError):
                    devices.update((d.id, d) for d in hami.parse_node_register(value))
        return devices

    @staticmethod
    def _make_ready(pod: Obj) -> Any:
        if podutil.phase(pod) != "Running" or podutil.is_terminating(pod):
            return False
        set_ready(pod, True, now_rfc3339())
        return None

    def _finish(self, pod: Obj) -> Any:
        if podutil.phase(pod) != "Running" or podutil.is_terminating(pod):
            return False
        # Every line is printed before the status says the container ended,
        # so a reader that sees the end has the whole log.
        uid = pod["metadata"].get("uid", "")
        names = [c.get("name", "") for c in pod["spec"].get("containers") or []]
        self.logs.flush(container_id(uid, name) for name in names)
        finish_pod(pod, jobs.read_job(pod))
        return None

    def _remove(self, key: PodKey, uid: str) -> None:
        with self.store.lock:
            found = self.store.get(resources.POD, key[0], key[1])
            if found is not None and found.obj["metadata"].get("uid") == uid:
                self.store.delete(resources.POD, key[0], key[1])
