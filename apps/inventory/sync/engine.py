"""Sync tasks: list a cluster once, or keep every stream of it watched.

``sync_once`` lists every target into the database. ``sync_run`` is what the
periodic sync task runs: a watcher thread (``apps.inventory.sync.watcher``)
per target whose lock ``sync:<cluster>:<target>`` the task gets, for as long
as it runs, so any number of workers never watch the same stream twice; the
lock dies with its holder.

Locks are checked per stream, every ``LOCK_CHECK_SECONDS``: a PostgreSQL
restart or failover drops advisory locks without telling their holder, so a
task takes each lost lock back, or stops that stream's watcher when another
task took it meanwhile; and it adopts every stream whose lock is free (its
holder ended or lost it). Two tasks racing for the locks after a blip thus
split the streams between them, and none is left unwatched for longer than a
check: stopping a whole task at its first lost lock left the streams it had
taken back unwatched until beat's next task.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from django.db.utils import DatabaseError
from django.utils import timezone

from apps.common import locks
from apps.common.gcpause import collector_for_streams, gc_paused
from apps.inventory.kube import Gateway, KubeError, gateway_for
from apps.inventory.models import Cluster, SyncCursor
from apps.inventory.sync import kubeapi
from apps.inventory.sync.state import refresh_cluster_state
from apps.inventory.sync.targets import Target, targets_for
from apps.inventory.sync.watcher import (
    NETWORK_ERRORS,
    SKIPPED_MAX,
    TargetWatcher,
    WatchStats,
    apply_list,
    not_served,
    run_supervised,
    skipped_entry,
)
from apps.inventory.sync.writer import ClusterWriter

log = logging.getLogger(__name__)

# How often a sync task checks that it still holds its watch locks, and
# tries to take the free ones. A PostgreSQL restart or failover drops
# advisory locks without telling their holder; beat's next task then took
# them and the cluster had two watchers per stream (18 watches instead of 9)
# until the first task ended.
LOCK_CHECK_SECONDS = 2.0

__all__ = ["LOCK_CHECK_SECONDS", "sync_once", "sync_run"]


def sync_once(cluster: Cluster) -> dict[str, int]:
    """List every target once into the database (no watch). Returns objects per target.

    Raises:
        KubeError: A list failed (``kubeapi.Gone`` for a 410).
    """
    gateway = gateway_for(cluster)
    counts: dict[str, int] = {}
    # The device config first: slices need its templates for AICore/AICPU.
    ordered = sorted(
        targets_for(cluster), key=lambda t: t.key != "configmap:device-config"
    )
    # Until every list is written, not only parsed (apps.common.gcpause).
    with contextlib.ExitStack() as stack:
        stack.enter_context(gc_paused())
        stack.callback(gateway.close)
        writer = ClusterWriter(cluster)
        for target, listed in _lists_one_ahead(gateway, ordered):
            if isinstance(listed, KubeError):
                if not not_served(gateway, target, listed):
                    raise listed
                target.apply_full(writer, [])
                SyncCursor.objects.update_or_create(
                    cluster=cluster,
                    resource=target.key,
                    defaults={
                        "served": False,
                        "resource_version": "",
                        "last_error": "",
                        "last_success_at": timezone.now(),
                    },
                )
                counts[target.key] = 0
                continue
            outcomes = apply_list(target, writer, listed.items)
            now = timezone.now()
            SyncCursor.objects.update_or_create(
                cluster=cluster,
                resource=target.key,
                defaults={
                    "resource_version": listed.resource_version,
                    "last_list_at": now,
                    "last_success_at": now,
                    "last_error": "",
                    "served": True,
                    "skipped_objects": [
                        skipped_entry(target, item, error)
                        for item, error in outcomes
                        if error is not None
                    ][-SKIPPED_MAX:],
                },
            )
            counts[target.key] = len(listed.items)
    refresh_cluster_state(cluster.pk)
    return counts


def _lists_one_ahead(
    gateway: Gateway, targets: Sequence[Target]
) -> Iterator[tuple[Target, kubeapi.ListResult | KubeError]]:
    """Each target's full list (or the KubeError it met), in order, fetched
    one target ahead of the caller.

    While the caller writes one list, the next downloads and parses in a
    thread: a write spends much of its time waiting on PostgreSQL (COPY,
    usage recount, commit), with the interpreter free, and the next list
    fills that wait. Only one list is ever fetched ahead, so at most two are
    held at once. Any other error (the network) is raised to the caller when
    its turn comes, as if it had been met there.
    """

    def fetch(target: Target) -> kubeapi.ListResult | KubeError:
        try:
            return gateway.list_all(
                target.path, field_selector=target.field_selector, keep=target.keep
            )
        except KubeError as exc:
            return exc

    if not targets:
        return
    with ThreadPoolExecutor(1, thread_name_prefix="sync-list") as pool:
        ahead = pool.submit(fetch, targets[0])
        try:
            for index, target in enumerate(targets):
                current = ahead
                if index + 1 < len(targets):
                    ahead = pool.submit(fetch, targets[index + 1])
                yield target, current.result()
        finally:
            # The caller stopped early (an error, or it was closed): a list
            # not yet started is not wanted; the running one ends on its own.
            ahead.cancel()


@dataclass
class _Stream:
    """A watched stream of this task: its watcher, thread and lock."""

    watcher: TargetWatcher
    lock: locks.Lock
    thread: threading.Thread | None = None


class _TaskStreams:
    """The streams one sync task watches, one watcher thread per lock it holds."""

    def __init__(
        self, cluster_id: int, targets: Sequence[Target], watch_timeout: int
    ) -> None:
        self.cluster_id = cluster_id
        self.watch_timeout = watch_timeout
        # Device config first, so the first slices already see the templates.
        self.targets = sorted(targets, key=lambda t: t.key != "configmap:device-config")
        self.running: dict[str, _Stream] = {}
        self.ended: list[_Stream] = []
        # Every watcher this task ran, the last one per stream (its stats).
        self.watchers: dict[str, TargetWatcher] = {}

    def adopt(self) -> list[_Stream]:
        """Take every free lock of a stream this task does not watch yet.

        Returns the new streams, not yet started.
        """
        new = []
        for target in self.targets:
            if target.key in self.running:
                continue
            try:
                lock = locks.try_acquire(f"sync:{self.cluster_id}:{target.key}")
            except DatabaseError:
                return new  # the database is away: the next check tries again
            if lock is None:
                continue
            watcher = TargetWatcher(
                self.cluster_id,
                target,
                threading.Event(),
                watch_timeout=self.watch_timeout,
            )
            stream = _Stream(watcher, lock)
            self.running[target.key] = stream
            self.watchers[target.key] = watcher
            new.append(stream)
        return new

    def start(self, streams: Sequence[_Stream]) -> None:
        for stream in streams:
            stream.thread = threading.Thread(
                target=run_supervised,
                args=(stream.watcher,),
                name=f"sync-{self.cluster_id}-{stream.watcher.target.key}",
                daemon=True,
            )
            stream.thread.start()

    def check(self) -> None:
        """Stop the watcher of every lock lost to another task, adopt the free ones."""
        for key, stream in list(self.running.items()):
            if stream.lock.ensure():
                continue
            log.warning(
                "cluster %s: lost the sync lock %s (its database session is gone "
                "and another worker holds it, or the database is away); "
                "stopping this stream's watcher",
                self.cluster_id,
                stream.lock.name,
            )
            self._end(key)
        self.start(self.adopt())

    def _end(self, key: str) -> None:
        stream = self.running.pop(key)
        stream.watcher.stop.set()
        stream.lock.release()
        self.ended.append(stream)

    def close(self) -> None:
        """Stop every watcher, wait for its thread, release every lock."""
        for key in list(self.running):
            stream = self.running[key]
            stream.watcher.stop.set()
            self.ended.append(self.running.pop(key))
        for stream in self.ended:
            if stream.thread is not None:
                stream.thread.join(timeout=self.watch_timeout + 20)
            stream.lock.release()


def sync_run(
    cluster_id: int,
    *,
    seconds: float,
    watch_timeout: int = 60,
    stop: threading.Event | None = None,
    on_start: Callable[[list[TargetWatcher]], None] | None = None,
) -> dict[str, WatchStats]:
    """Mirror one cluster for ``seconds`` (or until ``stop`` is set).

    Starts a thread per target whose lock this call gets, adopts streams
    whose locks free up while it runs, and returns the stats of every stream
    it watched (empty when other workers held every lock at the start: the
    task then leaves at once).
    """
    cluster = Cluster.objects.get(pk=cluster_id)
    stop = stop or threading.Event()
    streams = _TaskStreams(cluster_id, targets_for(cluster), watch_timeout)
    first = streams.adopt()
    if not first:
        # Another worker watches every stream: leave at once. Waiting out
        # ``seconds`` here held a worker thread for nothing (SYNC_TASK_SECONDS,
        # 600 s by default) while beat queued the next sync every 30 s, until
        # every worker thread was stuck and scheduling and usage stopped.
        return {}
    watchers = [stream.watcher for stream in first]
    _prime_device_config(watchers)
    if on_start:
        on_start(watchers)
    with collector_for_streams():  # apps.common.gcpause
        try:
            streams.start(first)
            _hold(streams, stop, seconds)
        finally:
            streams.close()
    return {key: w.stats for key, w in streams.watchers.items()}


def _hold(streams: _TaskStreams, stop: threading.Event, seconds: float) -> None:
    """Wait ``seconds`` (or until ``stop``), checking the locks every few seconds.

    Ends early once the task holds no lock at all (other tasks took them).
    """
    deadline = time.monotonic() + seconds
    while not stop.wait(max(0.0, min(LOCK_CHECK_SECONDS, deadline - time.monotonic()))):
        if time.monotonic() >= deadline:
            return
        streams.check()
        if not streams.running:
            return


def _prime_device_config(watchers: list[TargetWatcher]) -> None:
    """List the device config before the other streams start.

    Chips take their AICPU, and slices their AICore/AICPU, from the chip types
    the first device config brings; listing it first means the first nodes and
    pods written already see them.
    """
    for watcher in watchers:
        if watcher.target.key != "configmap:device-config":
            continue
        gateway: Gateway | None = None
        try:
            if (
                SyncCursor.objects.filter(
                    cluster_id=watcher.cluster_id, resource=watcher.target.key
                )
                .exclude(resource_version="")
                .exists()
            ):
                return
            cluster = Cluster.objects.get(pk=watcher.cluster_id)
            gateway = gateway_for(cluster)
            watcher._cursor()
            watcher.relist(gateway, ClusterWriter(cluster))
        except (KubeError, *NETWORK_ERRORS, kubeapi.Gone, DatabaseError):
            log.warning(
                "cluster %s: first list of the device config failed; its watcher retries",
                watcher.cluster_id,
            )
        finally:
            if gateway is not None:
                gateway.close()
