"""The job contract on KWOK's nodes: containers that print, end and exit with a code.

A pod states what its "job" does (``simcluster/jobs.py``: run seconds, exit
code and log lines, in its first container's env or the pod's annotations).
On simcluster its kubelet plays that; here the kubelet is KWOK, which starts
pods (stage ``pod-ready``) but runs nothing. :class:`JobPlayer` plays the rest,
beside the simulated device plugin, against the real API server:

- **the output** (a container runtime's part): each container's lines go to a
  log file in the CRI format the kubelet reads (``<RFC3339Nano> stdout F
  <line>``; ``/var/log/pods/<ns>_<pod>_<uid>/<container>/0.log`` on a node,
  ``pod-logs/`` in the stack's folder here), each line written when it is due
  (start + i * run / n) and stamped with that time, so ``kubectl logs -f``
  sees them arrive. A KWOK ``Logs`` object (same name as the pod, owned by it,
  so the garbage collector removes it with the pod) points KWOK's kubelet
  server at those files; it is made when the pod is first seen, long before
  its container starts, so a reader never finds KWOK without it. Pods without
  lines get KWOK's ``ClusterLogs`` default, an empty file (kubestack/kwok.py).
  Timestamps of one container are strictly increasing (lines due at the same
  instant are a nanosecond apart), which lets the kubelet front
  (kubestack/kubeletfront.py) tell the last line from an equal earlier one.
- **the end** (the kubelet's part): at start + run seconds every line is in
  its file, then each container is ``terminated`` with its exit code (reason
  Completed or Error) and the pod Succeeded or Failed, written through
  pods/status by simcluster's own ``finish_pod``, so both clusters finish a
  job by one set of rules. A pod being deleted is not finished: KWOK's
  ``pod-delete`` removes it at its deletionTimestamp, as a container that
  ignores SIGTERM is killed when its grace period ends.

Why a player and not a KWOK Stage for the end (a Kubernetes engineer reaches
for a Stage first; KWOK's delay can even come from an expression): a Stage
would hold a second reading of the contract, in jq and Go templates, beside
simcluster's Python one (env over annotation even when empty, codes modulo
256, per-container codes), and the two would drift. KWOK also plans a delayed
stage again from *now* on every change of the pod, so the end would have to
be anchored on ``startedAt``, which the API keeps to the second (a 0.5 s job
would end anywhere within a second). And the last lines must be in the file
before anyone sees the container terminated, as a process's output is
written before it exits: a Stage and a separate writer race; one player
writes, then ends. KWOK's stage ``pod-complete`` (Job pods end at once) is
told to leave pods with a run length to the player (kubestack/kwok.py).
"""

from __future__ import annotations

import contextlib
import copy
import json
import logging
import shutil
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from kubestack import kwok
from simcluster import jobs
from simcluster.controllers.kubelet import finish_pod
from simcluster.podlogs import kubelet_timestamp

log = logging.getLogger("kubestack.jobplayer")

KWOK_GROUP, KWOK_VERSION, LOGS_PLURAL = "kwok.x-k8s.io", "v1alpha1", "logs"
# A watch event whose line holds none of these states no job (cheap to skip:
# the scale scenario's 30,000 pods).
MARKERS = (jobs.RUN_ENV, jobs.EXIT_ENV, jobs.LOG_ENV, "simcluster.io/")
EMPTY_LOG = "empty.log"
NS = 1_000_000_000


@dataclass
class _Play:
    """One pod's job as played here."""

    namespace: str
    name: str
    uid: str
    folder: Path
    containers: list[str]
    job: jobs.Job
    # Lines still to write, in time order: (due ns, container, text).
    pending: list[tuple[int, str, str]] = field(default_factory=list)
    finish_at: int | None = None
    started: bool = False
    finished: bool = False
    gone: bool = False
    last_stamp: dict[str, str] = field(default_factory=dict)

    def next_due(self) -> int | None:
        dues = [self.pending[0][0]] if self.pending else []
        if self.finish_at is not None and not self.finished:
            dues.append(self.finish_at)
        return min(dues) if dues else None

    def file(self, container: str) -> Path:
        return self.folder / container / "0.log"


def has_job(job: jobs.Job) -> bool:
    """Whether a pod's contract asks for anything (an end or some output)."""
    return job.run_seconds is not None or any(job.lines.values())


def started_ns(pod: dict[str, Any], now_ns: int) -> int | None:
    """When the first container started (wall ns), or None if it is not running.

    ``startedAt`` has whole seconds: seen within that second the start is
    now; seen later (a watch that was cut), the end of that second.
    """
    statuses = (pod.get("status") or {}).get("containerStatuses") or []
    running = (
        ((statuses[0].get("state") or {}).get("running") or {}) if statuses else {}
    )
    text = running.get("startedAt")
    if not text:
        return None
    second = int(datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp())
    return max(second * NS, min(now_ns, second * NS + NS - 1))


def schedule(job: jobs.Job, start: int) -> list[tuple[int, str, str]]:
    """Every container's lines with their due times (strictly increasing per
    container), all containers together in time order."""
    out: list[tuple[int, str, str]] = []
    for container, lines in job.lines.items():
        last = -1
        for at, text in jobs.schedule(lines, job.run_seconds, start):
            last = max(at, last + 1)
            out.append((last, container, text))
    out.sort(key=lambda item: item[0])
    return out


class JobPlayer:
    """Plays every job on the stack's nodes (see module docstring)."""

    def __init__(self, api_client: Any, log_root: Path) -> None:
        from kubernetes import client

        self.core = client.CoreV1Api(api_client)
        self.custom = client.CustomObjectsApi(api_client)
        self.log_root = log_root
        log_root.mkdir(parents=True, exist_ok=True)
        (log_root / EMPTY_LOG).touch()
        self._plays: dict[str, _Play] = {}
        self._cond = threading.Condition(threading.Lock())
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._watch: Any = None  # the open watch response
        self.finished = 0

    @property
    def empty_log(self) -> Path:
        """The file of every container that prints nothing (KWOK's ClusterLogs)."""
        return self.log_root / EMPTY_LOG

    def start(self) -> None:
        for target, name in ((self._watch_loop, "watch"), (self._play_loop, "play")):
            thread = threading.Thread(target=target, name=f"jobs-{name}", daemon=True)
            thread.start()
            self._threads.append(thread)

    def stop(self) -> None:
        self._stop.set()
        with self._cond:
            self._cond.notify_all()
        # Cut the watch rather than wait up to its 30 s for the next event.
        with contextlib.suppress(Exception):
            if self._watch is not None:
                self._watch.shutdown()
        for thread in self._threads:
            thread.join(timeout=5)

    def last_stamp(self, uid: str, container: str) -> str | None:
        """The timestamp of the last line written for a container (kubelet
        format), or None: no line yet, or a pod this player does not play."""
        with self._cond:
            play = self._plays.get(uid)
            return play.last_stamp.get(container) if play else None

    def wait_logs_served(self, kwok_port: int, timeout: float = 120.0) -> float:
        """Wait until KWOK reads the file of a Logs object made now; the
        seconds waited.

        KWOK learns Logs objects from an informer. After API-server restarts
        its reflector backs off (client-go's 0.8 s doubling to 30 s, jitter
        included), and a pod created meanwhile has its container followed on
        the ClusterLogs default, an empty file, until KWOK catches up (the
        kubelet front then reads the rest at the end: one chunk, not a
        stream). A real kubelet reads its container's own file. A test that
        follows a live log waits here first: once KWOK serves this probe, its
        watch is live again and serves every Logs object made after it.
        """
        import urllib.request

        name = f"kubestack-probe-{time.time_ns()}"
        path = self.log_root / "probes" / name / "0.log"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"{kubelet_timestamp(time.time_ns())} stdout F {name}\n")
        args = (KWOK_GROUP, KWOK_VERSION, "default", LOGS_PLURAL)
        body = {
            "apiVersion": f"{KWOK_GROUP}/{KWOK_VERSION}",
            "kind": "Logs",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"logs": [{"containers": ["probe"], "logsFile": str(path)}]},
        }
        url = f"http://127.0.0.1:{kwok_port}/containerLogs/default/{name}/probe"
        started = time.monotonic()
        self.custom.create_namespaced_custom_object(*args, body)
        try:
            while True:
                with (
                    contextlib.suppress(OSError),
                    urllib.request.urlopen(url, timeout=5) as answer,
                ):
                    if name.encode() in answer.read():
                        return time.monotonic() - started
                if time.monotonic() - started > timeout:
                    raise TimeoutError(
                        f"KWOK did not serve a new Logs object in {timeout:.0f} s"
                    )
                time.sleep(0.2)  # KWOK offers no event to wait on
        finally:
            with contextlib.suppress(Exception):
                self.custom.delete_namespaced_custom_object(*args, name)
            shutil.rmtree(path.parent, ignore_errors=True)

    # -- the pods ------------------------------------------------------------

    def _watch_loop(self) -> None:
        resource_version = ""
        while not self._stop.is_set():
            try:
                if not resource_version:
                    resource_version = self._list()
                resource_version = self._follow(resource_version)
            except Exception as error:
                resource_version = ""
                if not self._stop.is_set():
                    log.warning("job watch restarted: %s", error)
                    time.sleep(0.5)

    def _list(self) -> str:
        response = self.core.list_pod_for_all_namespaces(_preload_content=False)
        found = json.loads(response.data)
        for pod in found.get("items") or []:
            self._observe(pod)
        return str((found.get("metadata") or {}).get("resourceVersion", ""))

    def _follow(self, resource_version: str) -> str:
        """Pods' events from ``resource_version`` for up to 30 s; where to go on
        from ("" to list again)."""
        from kubernetes.watch.watch import iter_resp_lines

        response = self.core.list_pod_for_all_namespaces(
            watch=True,
            resource_version=resource_version,
            allow_watch_bookmarks=True,
            timeout_seconds=30,
            _request_timeout=40,
            _preload_content=False,
        )
        self._watch = response
        try:
            for line in iter_resp_lines(response):
                if self._stop.is_set():
                    break
                if line.startswith('{"type":"ERROR"'):
                    return ""  # 410 Gone: list again
                if not any(marker in line for marker in MARKERS):
                    found = line.find('"resourceVersion":"')
                    if found >= 0:
                        start = found + len('"resourceVersion":"')
                        resource_version = line[start : line.index('"', start)]
                    continue
                event = json.loads(line)
                pod = event.get("object") or {}
                meta = pod.get("metadata") or {}
                resource_version = meta.get("resourceVersion", resource_version)
                if event.get("type") == "DELETED":
                    self._forget(meta.get("uid", ""))
                elif event.get("type") in ("ADDED", "MODIFIED"):
                    self._observe(pod)
        finally:
            response.release_conn()
        return resource_version

    def _observe(self, pod: dict[str, Any]) -> None:
        """A pod was seen: open its logs the first time, play its job once it runs."""
        meta = pod.get("metadata") or {}
        uid = meta.get("uid", "")
        if (meta.get("labels") or {}).get(kwok.STARTED_BY_CREATOR) == "true":
            return
        job = jobs.read_job(pod)
        if not uid or not has_job(job):
            return
        with self._cond:
            play = self._plays.get(uid)
            new = play is None
            if play is None:
                containers = [
                    str(c.get("name", ""))
                    for c in (pod.get("spec") or {}).get("containers") or []
                ]
                folder = self.log_root / f"{meta['namespace']}_{meta['name']}_{uid}"
                play = _Play(
                    meta["namespace"], meta["name"], uid, folder, containers, job
                )
                self._plays[uid] = play
        if new and any(job.lines.values()):
            self._open_logs(play)
        start = started_ns(pod, time.time_ns())
        if start is None or (pod.get("status") or {}).get("phase") != "Running":
            return
        with self._cond:
            if play.started or play.gone:
                return
            play.started = True
            play.pending = schedule(play.job, start)
            if play.job.run_seconds is not None:
                play.finish_at = start + round(play.job.run_seconds * NS)
            self._cond.notify_all()

    def _forget(self, uid: str) -> None:
        """The pod is gone: its logs go with it (its Logs object by the GC)."""
        with self._cond:
            play = self._plays.pop(uid, None)
            if play is None:
                return
            play.gone = True
        shutil.rmtree(play.folder, ignore_errors=True)

    def _open_logs(self, play: _Play) -> None:
        """An empty log file for every container, and the Logs object naming them."""
        for container in play.containers:
            path = play.file(container)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.touch()
        body = {
            "apiVersion": f"{KWOK_GROUP}/{KWOK_VERSION}",
            "kind": "Logs",
            "metadata": {
                "name": play.name,
                "namespace": play.namespace,
                "ownerReferences": [
                    {
                        "apiVersion": "v1",
                        "kind": "Pod",
                        "name": play.name,
                        "uid": play.uid,
                    }
                ],
            },
            "spec": {
                "logs": [
                    {"containers": [c], "logsFile": str(play.file(c)), "follow": True}
                    for c in play.containers
                ]
            },
        }
        try:
            self._put_logs(play, body)
        except Exception as error:
            log.warning("Logs for %s/%s: %s", play.namespace, play.name, error)

    def _put_logs(self, play: _Play, body: dict[str, Any]) -> None:
        """Create the Logs object; one left by an earlier pod of that name is
        replaced (the garbage collector may not have removed it yet)."""
        from kubernetes.client.rest import ApiException

        args = (KWOK_GROUP, KWOK_VERSION, play.namespace, LOGS_PLURAL)
        try:
            self.custom.create_namespaced_custom_object(*args, body)
        except ApiException as error:
            if error.status != 409:
                raise
            old = self.custom.get_namespaced_custom_object(*args, play.name)
            body["metadata"]["resourceVersion"] = old["metadata"]["resourceVersion"]
            self.custom.replace_namespaced_custom_object(*args, play.name, body)

    # -- the jobs ------------------------------------------------------------

    def _play_loop(self) -> None:
        while not self._stop.is_set():
            with self._cond:
                now = time.time_ns()
                dues = [
                    (due, play)
                    for play in self._plays.values()
                    if (due := play.next_due()) is not None
                ]
                ready = [play for due, play in dues if due <= now]
                if not ready:
                    soonest = min((due for due, _ in dues), default=now + NS)
                    self._cond.wait(min(1.0, max(0.0, (soonest - now) / NS)))
                    continue
            for play in ready:
                try:
                    self._advance(play, now)
                except Exception as error:
                    log.warning("job of %s/%s: %s", play.namespace, play.name, error)

    def _advance(self, play: _Play, now: int) -> None:
        """Write the lines due by ``now``; at the end, every line, then the end."""
        with self._cond:
            ending = (
                not play.finished
                and play.finish_at is not None
                and play.finish_at <= now
            )
            play.finished = play.finished or ending
            due = [p for p in play.pending if ending or p[0] <= now]
            del play.pending[: len(due)]
        self._write(play, due)
        if ending and not play.gone:
            self._finish(play)

    def _write(self, play: _Play, lines: list[tuple[int, str, str]]) -> None:
        """Append lines to their files (each in one write: a reader never sees half)."""
        for at, container, text in lines:
            stamp = kubelet_timestamp(at)
            try:
                with play.file(container).open("a", encoding="utf-8") as out:
                    out.write(f"{stamp} stdout F {text}\n")
            except FileNotFoundError:
                return  # the pod is gone, its folder removed
            with self._cond:
                play.last_stamp[container] = stamp

    def _finish(self, play: _Play) -> None:
        """Write the terminated status (simcluster's ``finish_pod``), once the
        pod still runs as this pod; a write that raced another is done again."""
        from kubernetes.client.rest import ApiException

        for _ in range(5):
            try:
                response = self.core.read_namespaced_pod(
                    play.name, play.namespace, _preload_content=False
                )
            except ApiException as error:
                if error.status == 404:
                    return
                raise
            pod = json.loads(response.data)
            meta = pod["metadata"]
            running = (pod.get("status") or {}).get("phase") == "Running"
            if (
                meta.get("uid") != play.uid
                or not running
                or meta.get("deletionTimestamp")
            ):
                return
            ended = copy.deepcopy(pod)
            finish_pod(ended, play.job)
            status = ended["status"]
            patch = {
                "metadata": {"resourceVersion": meta["resourceVersion"]},
                "status": {
                    key: status[key]
                    for key in ("phase", "conditions", "containerStatuses")
                },
            }
            try:
                self.core.patch_namespaced_pod_status(
                    play.name,
                    play.namespace,
                    patch,
                    _content_type="application/merge-patch+json",
                    _preload_content=False,
                ).drain_conn()
            except ApiException as error:
                if error.status == 409:
                    continue
                raise
            self.finished += 1
            return
