"""The sync loop: for each target, list once, then watch from the last resourceVersion.

One thread per target, each holding the lock ``sync:<cluster>:<target>`` for as
long as it runs, so any number of workers never watch the same stream twice;
the lock dies with its holder. A watcher resumes from the resourceVersion stored
in its SyncCursor (a restarted worker picks up where the last one stopped),
relists after a 410, and backs off on errors and timeouts while the cluster is
shown stale. Events are applied in batches: under load one transaction absorbs
hundreds of events, when idle each event is applied at once.

An object whose handler fails (a device config nested 5,000 levels deep, or
any object the writer cannot take) is skipped, not retried: it is recorded on
the stream's cursor (``skipped_objects``: kind, name, resourceVersion, reason)
and in the cluster's ``last_sync_error``, the resourceVersion moves past it and
the stream goes on. Retrying it replayed the same event for ever, so no later
change, not even the restored good object, was ever applied. The entry goes
away when a later version of the object applies or it is deleted.
"""

from __future__ import annotations

import contextlib
import logging
import queue
import random
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import close_old_connections, connection
from django.db.models import F
from django.db.utils import DatabaseError, InterfaceError, OperationalError
from django.utils import timezone

from apps.common import locks
from apps.common.crashpoints import crash_point
from apps.common.gcpause import collector_for_streams, gc_paused
from apps.inventory.choices import SyncState
from apps.inventory.kube import (
    TRANSPORT_ERRORS,
    Gateway,
    KubeError,
    gateway_for,
    kube_error,
)
from apps.inventory.models import Cluster, SyncCursor
from apps.inventory.sync import kubeapi
from apps.inventory.sync.targets import Target, targets_for
from apps.inventory.sync.writer import ClusterWriter, UnreadableObject
from apps.live.events import Event, cluster_payload
from apps.live.realtime import broadcast, cluster_group

log = logging.getLogger(__name__)

BATCH_MAX = 2000
# Skipped objects kept per stream (the newest); older ones only in the log.
SKIPPED_MAX = 20
# How often a sync task checks that it still holds its watch locks. A
# PostgreSQL restart or failover drops advisory locks without telling their
# holder; beat's next task then took them and the cluster had two watchers
# per stream (18 watches instead of 9) until the first task ended.
LOCK_CHECK_SECONDS = 2.0
# What a call to the API server raises (the gateway's one list, translated by
# kube_error into a status and a reason).
NETWORK_ERRORS = TRANSPORT_ERRORS
DB_ERRORS = (OperationalError, InterfaceError)
# How often a watcher asks again for a resource the cluster did not serve
# (Volcano installed later starts being mirrored within this time).
NOT_SERVED_RETRY_SECONDS = 60.0


@dataclass
class WatchStats:
    """What one watcher did (for logs, tests and the benchmark)."""

    lists: int = 0
    events: int = 0
    batches: int = 0
    errors: int = 0
    gone: int = 0
    skipped: int = 0
    applied_at: list[float] = field(default_factory=list)


def _backoff(attempt: int) -> float:
    # 0.5, 1, 2, 4 ... 30 s, with jitter so many clusters do not retry in step.
    return min(30.0, 0.5 * 2**attempt) * (0.75 + random.random() / 2)  # noqa: S311


class TargetWatcher:
    """Keeps one target of one cluster mirrored until ``stop`` is set."""

    def __init__(
        self,
        cluster_id: int,
        target: Target,
        stop: threading.Event,
        *,
        watch_timeout: int = 60,
    ) -> None:
        self.cluster_id = cluster_id
        self.target = target
        self.stop = stop
        self.watch_timeout = watch_timeout
        self.stats = WatchStats()
        # (namespace, name) -> entry of skipped_objects, as on the cursor
        self.skipped: dict[tuple[str, str], dict[str, Any]] = {}

    # --- cursor bookkeeping --------------------------------------------------------

    def _cursor(self) -> SyncCursor:
        cursor, _ = SyncCursor.objects.get_or_create(
            cluster_id=self.cluster_id, resource=self.target.key
        )
        return cursor

    def _save_cursor(self, **fields: Any) -> None:
        SyncCursor.objects.filter(
            cluster_id=self.cluster_id, resource=self.target.key
        ).update(**fields)

    # --- the loop ----------------------------------------------------------------------

    def run(self) -> None:
        """List and watch until stopped; never raises (errors are recorded and retried)."""
        attempt = 0
        gateway: Gateway | None = None
        writer: ClusterWriter | None = None
        cursor = self._cursor()
        self.resource_version = cursor.resource_version or None
        self.skipped = {
            (e.get("namespace", ""), e.get("name", "")): e
            for e in cursor.skipped_objects or []
            if isinstance(e, dict)
        }
        if self.resource_version:
            SyncCursor.objects.filter(
                cluster_id=self.cluster_id, resource=self.target.key
            ).update(restarts=F("restarts") + 1)
        while not self.stop.is_set():
            self.progressed = False
            try:
                if gateway is None or writer is None:
                    # Both at once: a writer that failed to build (the database
                    # was cut while it read the chip types) left a client and no
                    # writer, and the next round crashed the watcher.
                    cluster = Cluster.objects.get(pk=self.cluster_id)
                    writer = ClusterWriter(cluster)
                    if gateway is None:
                        gateway = gateway_for(cluster)
                if not self.resource_version:
                    self.resource_version = self.relist(gateway, writer)
                self.watch_once(gateway, writer, self.resource_version)
                attempt = 0
            except kubeapi.Gone:
                self.stats.gone += 1
                log.info(
                    "cluster %s %s: resourceVersion expired; relisting",
                    self.cluster_id,
                    self.target.key,
                )
                SyncCursor.objects.filter(
                    cluster_id=self.cluster_id, resource=self.target.key
                ).update(relists=F("relists") + 1)
                self.resource_version = None
            except Cluster.DoesNotExist:
                if gateway is not None:
                    gateway.close()
                return
            except DB_ERRORS as exc:
                # The database went away (restart, failover): drop the connection and retry.
                self._failed(exc, attempt, record=False)
                close_old_connections()
                connection.close()
                attempt += 1
            except (KubeError, *NETWORK_ERRORS, DatabaseError) as exc:
                if (
                    writer is not None
                    and gateway is not None
                    and _not_served(gateway, self.target, exc)
                ):
                    self._record_not_served(writer)
                    continue
                status = _status(exc)
                if self.progressed and status is None:
                    # A stream cut after it delivered events: resume at once from
                    # where it got to (a proxy or the server dropped the watch).
                    self.stats.errors += 1
                    attempt = 0
                    continue
                self._failed(exc, attempt)
                attempt += 1
                if status in (401, 403) and gateway is not None:
                    # Credentials may have been rotated in the portal: the next
                    # round reads the cluster again and builds a new gateway.
                    gateway.close()
                    gateway = None
        if gateway is not None:
            gateway.close()

    def _record_not_served(self, writer: ClusterWriter) -> None:
        """The cluster does not serve this optional resource: say so, ask again later."""
        self.target.apply_full(writer, [])
        self.resource_version = None
        self._save_cursor(
            served=False,
            resource_version="",
            last_error="",
            last_success_at=timezone.now(),
        )
        refresh_cluster_state(self.cluster_id)
        self.stop.wait(NOT_SERVED_RETRY_SECONDS)

    def _failed(self, exc: Exception, attempt: int, *, record: bool = True) -> None:
        self.stats.errors += 1
        message = _describe(exc)
        log.warning(
            "cluster %s %s: %s (retry %d)",
            self.cluster_id,
            self.target.key,
            message,
            attempt + 1,
        )
        if record:
            try:
                self._save_cursor(
                    last_error=message[:2000], last_error_at=timezone.now()
                )
                refresh_cluster_state(self.cluster_id)
            except DatabaseError:
                close_old_connections()
        self.stop.wait(_backoff(attempt))

    def relist(self, gateway: Gateway, writer: ClusterWriter) -> str:
        """Replace the stored state of this target with a full list."""
        with gc_paused():  # until it is written (apps.common.gcpause)
            result = gateway.list_all(
                self.target.path,
                field_selector=self.target.field_selector,
                keep=self.target.keep,
            )
            outcomes = apply_list(self.target, writer, result.items)
        # A full list says everything about this stream: skipped now is
        # exactly what failed in it.
        self.skipped = {}
        self._note_outcomes(outcomes)
        now = timezone.now()
        self._save_cursor(
            resource_version=result.resource_version,
            last_list_at=now,
            last_success_at=now,
            last_error="",
            skipped_objects=list(self.skipped.values()),
            served=True,
        )
        self.stats.lists += 1
        refresh_cluster_state(self.cluster_id)
        return result.resource_version

    def watch_once(
        self, gateway: Gateway, writer: ClusterWriter, resource_version: str
    ) -> str:
        """Follow one watch stream to its end; returns the last resourceVersion seen."""
        events: queue.Queue[Any] = queue.Queue(maxsize=50_000)
        stream = gateway.watch(
            self.target.path,
            resource_version=resource_version,
            field_selector=self.target.field_selector,
            timeout_seconds=self.watch_timeout,
        )
        reader = threading.Thread(
            target=kubeapi.pump, args=(stream.events(), events, self.stop), daemon=True
        )
        reader.start()
        try:
            return self._consume(writer, events, resource_version)
        finally:
            stream.close()

    def _consume(
        self, writer: ClusterWriter, events: queue.Queue[Any], resource_version: str
    ) -> str:
        # An open, quiet stream proves the API server is there: record success
        # often enough that a healthy cluster is never shown stale.
        heartbeat = max(0.5, min(5.0, settings.SYNC_STALE_AFTER_SECONDS / 3))
        last_saved = 0.0
        while not self.stop.is_set():
            try:
                batch = [events.get(timeout=heartbeat / 2)]
            except queue.Empty:
                batch = []
            while batch and len(batch) < BATCH_MAX:
                try:
                    batch.append(events.get_nowait())
                except queue.Empty:
                    break
            end = next((x for x in batch if isinstance(x, BaseException)), None)
            changes = []
            for event in batch:
                if isinstance(event, BaseException):
                    break
                meta = (event.get("object") or {}).get("metadata") or {}
                if event.get("type") != "BOOKMARK":
                    changes.append((event["type"], event["object"]))
                if meta.get("resourceVersion"):
                    resource_version = meta["resourceVersion"]
            if changes:
                self._apply_events(writer, changes)
                self.stats.events += len(changes)
                self.stats.batches += 1
                self.stats.applied_at.append(time.monotonic())
                # The worst moment to die: applied, resourceVersion not saved.
                crash_point("after_sync_batch")
            # Only now is the batch in the database: a failure before this
            # point replays it from the previous resourceVersion.
            if resource_version != self.resource_version:
                self.resource_version = resource_version
                self.progressed = True
            now = time.monotonic()
            if changes or now - last_saved >= heartbeat:
                extra: dict[str, Any] = {}
                if changes:
                    extra = {
                        "last_event_at": timezone.now(),
                        "events": F("events") + len(changes),
                    }
                self._save_cursor(
                    resource_version=resource_version,
                    last_success_at=timezone.now(),
                    last_error="",
                    **extra,
                )
                if now - last_saved >= heartbeat:
                    refresh_cluster_state(self.cluster_id)
                    last_saved = now
            if end is not None:
                if isinstance(end, StopIteration):
                    return resource_version
                if isinstance(end, TRANSPORT_ERRORS):
                    raise kube_error(end) from end
                raise end
        return resource_version

    def _apply_events(
        self, writer: ClusterWriter, changes: list[tuple[str, Any]]
    ) -> None:
        """Apply a batch of watch events; objects whose handler fails are skipped.

        The batch goes in one transaction; when it fails for anything but the
        database connection, each event is applied on its own so that one bad
        object costs only itself.
        """
        outcomes: list[tuple[Any, BaseException | None]]
        try:
            self.target.apply_events(writer, changes)
        except DB_ERRORS:
            raise
        except Exception as exc:
            if len(changes) == 1:
                outcomes = [(changes[0][1], exc)]
            else:
                outcomes = [
                    (obj, _try(self.target.apply_events, writer, [(kind, obj)]))
                    for kind, obj in changes
                ]
        else:
            if not self.skipped:
                return  # the usual case: nothing skipped before, nothing now
            outcomes = [(obj, None) for _, obj in changes]
        if self._note_outcomes(outcomes):
            self._save_cursor(skipped_objects=list(self.skipped.values()))
            refresh_cluster_state(self.cluster_id)

    def _note_outcomes(self, outcomes: list[tuple[Any, BaseException | None]]) -> bool:
        """Update ``self.skipped`` from applied/failed objects, in stream order.

        Returns whether the skipped list changed.
        """
        changed = False
        for obj, error in outcomes:
            key = _object_ref(obj)
            if error is None:
                changed |= self.skipped.pop(key, None) is not None
                continue
            entry = skipped_entry(self.target, obj, error)
            self.stats.skipped += 1
            log.warning(
                "cluster %s %s: skipped %s %s/%s at resourceVersion %s: %s",
                self.cluster_id,
                self.target.key,
                entry["kind"],
                entry["namespace"],
                entry["name"],
                entry["resource_version"],
                entry["reason"],
                exc_info=not isinstance(error, UnreadableObject),
            )
            self.skipped.pop(key, None)  # re-insert: newest last
            self.skipped[key] = entry
            while len(self.skipped) > SKIPPED_MAX:
                self.skipped.pop(next(iter(self.skipped)))
            changed = True
        return changed


def _try(apply: Callable[..., None], *args: Any) -> BaseException | None:
    """Run one handler; its error (not a lost database connection) or None."""
    try:
        apply(*args)
    except DB_ERRORS:
        raise
    except Exception as exc:
        return exc
    return None


def _object_ref(obj: Any) -> tuple[str, str]:
    meta = (obj.get("metadata") if isinstance(obj, Mapping) else None) or {}
    return str(meta.get("namespace") or ""), str(meta.get("name") or "")


def skipped_entry(target: Target, obj: Any, error: BaseException) -> dict[str, Any]:
    """The record of a skipped object, as stored in ``SyncCursor.skipped_objects``."""
    meta = (obj.get("metadata") if isinstance(obj, Mapping) else None) or {}
    kind = (obj.get("kind") if isinstance(obj, Mapping) else None) or target.kind
    reason = str(error) if isinstance(error, UnreadableObject) else _describe(error)
    return {
        "kind": str(kind or target.key),
        "namespace": str(meta.get("namespace") or ""),
        "name": str(meta.get("name") or ""),
        "resource_version": str(meta.get("resourceVersion") or ""),
        "reason": reason[:500],
        "at": timezone.now().isoformat(),
    }


def apply_list(
    target: Target, writer: ClusterWriter, items: Sequence[Mapping[str, Any]]
) -> list[tuple[Any, BaseException | None]]:
    """Replace a target's stored state with a full list, skipping bad objects.

    The list goes in at once; when that fails for anything but the database
    connection, each item is tried on its own, and the list is stored again
    without the ones that failed. A single-object target (a ConfigMap) whose
    only item fails keeps what was stored before: the last good version.

    Returns:
        (item, error or None) for every item, in list order.
    """
    try:
        target.apply_full(writer, items)
    except DB_ERRORS:
        raise
    except Exception:
        outcomes = [
            (item, _try(target.apply_events, writer, [("ADDED", item)]))
            for item in items
        ]
        good = [item for item, error in outcomes if error is None]
        if good or target.name is None:
            target.apply_full(writer, good)
        return outcomes
    return [(item, None) for item in items]


def _not_served(gateway: Gateway, target: Target, exc: BaseException) -> bool:
    """True when ``exc`` is a 404 on the optional ``target`` and API discovery
    confirms the server does not serve it (a restarting API server answers 404
    for a CRD it has not loaded yet: that is an error to retry, not absence)."""
    if not (target.optional and _status(exc) == 404):
        return False
    try:
        return not gateway.discovered(target.path)
    except KubeError:
        return False


def _kube(exc: BaseException) -> KubeError | None:
    """The gateway's error for a failed call (None for a database error)."""
    if isinstance(exc, KubeError):
        return exc
    return kube_error(exc) if isinstance(exc, TRANSPORT_ERRORS) else None


def _status(exc: BaseException) -> int | None:
    """The API server's answer to a failed call; None when it gave none."""
    error = _kube(exc)
    return error.status if error is not None else None


def _describe(exc: BaseException) -> str:
    error = _kube(exc)
    if error is not None and error.status is not None:
        return f"API server answered {error.status} {error.reason}".strip()
    if error is not None:
        return error.message[:500]  # already "<type>: <what>"
    return f"{type(exc).__name__}: {exc}"[:500]


def refresh_cluster_state(cluster_id: int) -> None:
    """Derive the cluster's sync state from its cursors, and broadcast it when it changes."""
    cluster = Cluster.objects.filter(pk=cluster_id).first()
    if cluster is None:
        return
    # A resource the cluster does not serve is neither an error nor stale.
    cursors = list(SyncCursor.objects.filter(cluster_id=cluster_id, served=True))
    now = timezone.now()
    stale_after = timedelta(seconds=settings.SYNC_STALE_AFTER_SECONDS)
    successes = [c.last_success_at for c in cursors if c.last_success_at]
    errors = [
        c
        for c in cursors
        if c.last_error
        and (
            not c.last_success_at
            or (c.last_error_at and c.last_error_at > c.last_success_at)
        )
    ]
    if not successes:
        state = SyncState.ERROR if errors else SyncState.NEVER
    elif errors or any(
        not c.last_success_at or now - c.last_success_at > stale_after for c in cursors
    ):
        state = SyncState.STALE
    else:
        state = SyncState.OK
    last_success = max(successes) if successes else None
    lag = (now - min(successes)).total_seconds() if successes else None
    # Skipped objects do not make the cluster stale (their streams go on), but
    # the admin must see them: the last error used to stay empty.
    skipped = [
        f"{c.resource}: skipped {e.get('kind')} "
        f"{'/'.join(filter(None, (e.get('namespace'), e.get('name'))))}"
        f" (resourceVersion {e.get('resource_version') or '?'}): {e.get('reason')}"
        for c in cursors
        for e in c.skipped_objects or []
        if isinstance(e, dict)
    ]
    error_text = "; ".join(
        [*(f"{c.resource}: {c.last_error}" for c in errors), *skipped]
    )[:2000]
    changed = (cluster.sync_state, cluster.last_sync_error) != (state, error_text)
    Cluster.objects.filter(pk=cluster_id).update(
        sync_state=state,
        last_sync_at=last_success,
        last_sync_error=error_text,
        sync_lag_seconds=lag,
    )
    if changed:
        broadcast(
            cluster_group(cluster_id),
            Event.CLUSTER,
            cluster_payload(cluster_id, state, error_text, last_success),
        )


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
                if not _not_served(gateway, target, listed):
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


def sync_run(
    cluster_id: int,
    *,
    seconds: float,
    watch_timeout: int = 60,
    stop: threading.Event | None = None,
    on_start: Callable[[list[TargetWatcher]], None] | None = None,
) -> dict[str, WatchStats]:
    """Mirror one cluster for ``seconds`` (or until ``stop`` is set).

    Starts a thread per target whose lock this call gets, and returns the
    stats of those targets (empty when other workers hold every lock).
    """
    cluster = Cluster.objects.get(pk=cluster_id)
    stop = stop or threading.Event()
    watchers: list[TargetWatcher] = []
    threads: list[threading.Thread] = []
    held: list[locks.Lock] = []
    # Device config first, so the first slices already see the templates.
    for target in sorted(
        targets_for(cluster), key=lambda t: t.key != "configmap:device-config"
    ):
        lock = locks.try_acquire(f"sync:{cluster_id}:{target.key}")
        if lock is None:
            continue
        held.append(lock)
        watcher = TargetWatcher(cluster_id, target, stop, watch_timeout=watch_timeout)
        watchers.append(watcher)
    if not watchers:
        # Another worker watches every stream: leave at once. Waiting out
        # ``seconds`` here held a worker thread for nothing (SYNC_TASK_SECONDS,
        # 600 s by default) while beat queued the next sync every 30 s, until
        # every worker thread was stuck and scheduling and usage stopped.
        return {}
    _prime_device_config(watchers)
    if on_start:
        on_start(watchers)
    with collector_for_streams():  # apps.common.gcpause
        for watcher in watchers:
            thread = threading.Thread(
                target=_run_in_thread,
                args=(watcher,),
                name=f"sync-{cluster_id}-{watcher.target.key}",
                daemon=True,
            )
            thread.start()
            threads.append(thread)
        try:
            _hold(cluster_id, held, stop, seconds)
        finally:
            stop.set()
            for thread in threads:
                thread.join(timeout=watch_timeout + 20)
            for lock in held:
                lock.release()
    return {w.target.key: w.stats for w in watchers}


def _hold(
    cluster_id: int, held: list[locks.Lock], stop: threading.Event, seconds: float
) -> None:
    """Wait ``seconds`` (or until ``stop``), checking that every lock is still held.

    A lock lost and not taken back at once (another worker has it, or the
    database is still away) ends the task: its watchers stop, so no stream is
    ever watched twice for longer than one check; beat starts a new task.
    """
    deadline = time.monotonic() + seconds
    while not stop.wait(max(0.0, min(LOCK_CHECK_SECONDS, deadline - time.monotonic()))):
        if time.monotonic() >= deadline:
            return
        # Stop at the first lock lost: every check of a lost one takes time.
        lost = next((lock.name for lock in held if not lock.ensure()), None)
        if lost is not None:
            log.warning(
                "cluster %s: lost the sync lock %s (its database session is gone "
                "and another worker holds it, or the database is away); "
                "stopping this task's watchers",
                cluster_id,
                lost,
            )
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
        try:
            watcher._cursor()
            watcher.relist(gateway, ClusterWriter(cluster))
        except (KubeError, *NETWORK_ERRORS, kubeapi.Gone, DatabaseError):
            log.warning(
                "cluster %s: first list of the device config failed; its watcher retries",
                cluster.pk,
            )
        finally:
            gateway.close()


def _run_in_thread(watcher: TargetWatcher) -> None:
    try:
        watcher.run()
    except Exception:
        log.exception("watcher %s crashed", watcher.target.key)
    finally:
        connection.close()  # each thread has its own database connection
