"""One stream's watcher: list once, then watch from the last resourceVersion.

A watcher mirrors one target (one resource) of one cluster. It resumes from
the resourceVersion stored in its SyncCursor (a restarted worker picks up
where the last one stopped), relists after a 410, and backs off on errors and
timeouts while the cluster is shown stale. Events are applied in batches:
under load one transaction absorbs hundreds of events, when idle each event
is applied at once.

Every database call of a round sits inside the watcher's retry, the cursor
read at its start and the bookkeeping of its errors included: a database blip
(a restart, a failover) at any point costs a backoff, never the thread. A
watcher that dies anyway (a bug) is restarted by ``run_supervised``, counted
on its cursor (``crashes``, exported as ``vnpu_sync_watcher_crashes_total``).

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
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.db import close_old_connections, connection
from django.db.models import F
from django.db.utils import DatabaseError, InterfaceError, OperationalError
from django.utils import timezone

from apps.common.crashpoints import crash_point
from apps.common.gcpause import gc_paused
from apps.inventory.kube import (
    TRANSPORT_ERRORS,
    Gateway,
    KubeError,
    gateway_for,
    kube_error,
)
from apps.inventory.models import Cluster, SyncCursor
from apps.inventory.sync import kubeapi
from apps.inventory.sync.state import refresh_cluster_state
from apps.inventory.sync.targets import Target
from apps.inventory.sync.writer import ClusterWriter, UnreadableObject

log = logging.getLogger(__name__)

BATCH_MAX = 2000
# Skipped objects kept per stream (the newest); older ones only in the log.
SKIPPED_MAX = 20
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
    crashes: int = 0
    applied_at: list[float] = field(default_factory=list)


def _backoff(attempt: int) -> float:
    # 0.5, 1, 2, 4 ... 30 s, with jitter so many clusters do not retry in step.
    return min(30.0, 0.5 * 2**attempt) * (0.75 + random.random() / 2)  # noqa: S311


def _drop_connection() -> None:
    """Forget this thread's database connection (it is broken) so the next
    query opens a new one; closing a dead one may itself fail."""
    with contextlib.suppress(DatabaseError):
        close_old_connections()
    with contextlib.suppress(DatabaseError):
        connection.close()


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
        self.resource_version: str | None = None
        self.progressed = False
        self._resumed = False
        self._attempt = 0
        # Written to the cursor by the next round that reaches the database:
        # a crash or a 410 may come while it is away.
        self._unrecorded_crashes = 0
        self._unrecorded_relists = 0
        self._gateway: Gateway | None = None
        self._writer: ClusterWriter | None = None

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

    def _resume(self) -> None:
        """Take up the stream where its cursor says it stands."""
        cursor = self._cursor()
        self.resource_version = cursor.resource_version or None
        self.skipped = {
            (e.get("namespace", ""), e.get("name", "")): e
            for e in cursor.skipped_objects or []
            if isinstance(e, dict)
        }
        counts: dict[str, Any] = {}
        if self.resource_version:
            counts["restarts"] = F("restarts") + 1
        if self._unrecorded_crashes:
            counts["crashes"] = F("crashes") + self._unrecorded_crashes
        if counts:
            self._save_cursor(**counts)
        self._unrecorded_crashes = 0
        self._resumed = True

    def crashed(self) -> None:
        """``run`` raised: the next run resumes from the cursor and counts it."""
        self.stats.crashes += 1
        self._unrecorded_crashes += 1
        self._resumed = False
        self._close_gateway()

    # --- the loop ----------------------------------------------------------------------

    def run(self) -> None:
        """List and watch until stopped or the cluster is deleted.

        Database and API errors are recorded and retried with a backoff, never
        raised; anything else (a bug) is raised for ``run_supervised``.
        """
        try:
            while not self.stop.is_set():
                try:
                    if not self._round():
                        return  # the cluster was deleted
                except DB_ERRORS as exc:
                    # The database went away (restart, failover), in the round
                    # or while its errors were being recorded: retry on a new
                    # connection.
                    self._failed(exc, record=False)
                    _drop_connection()
        finally:
            self._close_gateway()

    def _round(self) -> bool:
        """One list-and-watch; False once the cluster no longer exists.

        Raises:
            OperationalError, InterfaceError: The database connection failed.
        """
        self.progressed = False
        try:
            if not self._resumed:
                self._resume()
            if self._gateway is None or self._writer is None:
                # Both at once: a writer that failed to build (the database
                # was cut while it read the chip types) left a client and no
                # writer, and the next round crashed the watcher.
                cluster = Cluster.objects.get(pk=self.cluster_id)
                self._writer = ClusterWriter(cluster)
                if self._gateway is None:
                    self._gateway = gateway_for(cluster)
            if not self.resource_version:
                self.resource_version = self.relist(self._gateway, self._writer)
            self.watch_once(self._gateway, self._writer, self.resource_version)
            self._attempt = 0
        except kubeapi.Gone:
            self.stats.gone += 1
            self._unrecorded_relists += 1
            log.info(
                "cluster %s %s: resourceVersion expired; relisting",
                self.cluster_id,
                self.target.key,
            )
            self.resource_version = None
        except Cluster.DoesNotExist:
            return False
        except DB_ERRORS:
            raise
        except (KubeError, *NETWORK_ERRORS, DatabaseError) as exc:
            self._api_failed(exc)
        return True

    def _api_failed(self, exc: BaseException) -> None:
        """The API server (or a write it fed) failed this round: record, back off."""
        gateway, writer = self._gateway, self._writer
        if (
            writer is not None
            and gateway is not None
            and not_served(gateway, self.target, exc)
        ):
            self._record_not_served(writer)
            return
        status = _status(exc)
        if self.progressed and status is None:
            # A stream cut after it delivered events: resume at once from
            # where it got to (a proxy or the server dropped the watch).
            self.stats.errors += 1
            self._attempt = 0
            return
        self._failed(exc)
        if status in (401, 403):
            # Credentials may have been rotated in the portal: the next
            # round reads the cluster again and builds a new gateway.
            self._close_gateway()

    def _close_gateway(self) -> None:
        if self._gateway is not None:
            self._gateway.close()
        self._gateway = None
        self._writer = None

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

    def _failed(self, exc: BaseException, *, record: bool = True) -> None:
        """Log and (when the database answers) record an error, then back off."""
        attempt = self._attempt
        self._attempt += 1
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
        counts: dict[str, Any] = {}
        if self._unrecorded_relists:
            counts["relists"] = F("relists") + self._unrecorded_relists
        self._save_cursor(
            **counts,
            resource_version=result.resource_version,
            last_list_at=now,
            last_success_at=now,
            last_error="",
            skipped_objects=list(self.skipped.values()),
            served=True,
        )
        self._unrecorded_relists = 0
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


def not_served(gateway: Gateway, target: Target, exc: BaseException) -> bool:
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


def run_supervised(watcher: TargetWatcher) -> None:
    """Run a watcher in its own thread until it is stopped, restarting it
    after a crash (logged once per crash, counted on its cursor) so that no
    error leaves its stream unwatched while the task that owns it runs."""
    try:
        while not watcher.stop.is_set():
            try:
                watcher.run()
            except Exception:
                watcher.crashed()
                log.exception(
                    "cluster %s: watcher %s crashed (crash %d); restarting it",
                    watcher.cluster_id,
                    watcher.target.key,
                    watcher.stats.crashes,
                )
                _drop_connection()
                watcher.stop.wait(_backoff(min(watcher.stats.crashes - 1, 6)))
            else:
                return
    finally:
        connection.close()  # each thread has its own database connection
