"""A request's job log: read live from its pod, kept when it ends, read either way.

While the request's pod exists its log is the API server's (``pods/log``,
streamed by the web: ``apps.scheduling.api.streaming``). When the request
ends, reconciliation keeps the tail of each container's log
(``REQUEST_LOG_KEEP_BYTES``, with timestamps) and the job's result
(``apps.scheduling.results``) *before* it deletes the pod, so a pipeline that
releases first and reads later, or whose pod was deleted at its time limit,
still gets both. Once kept, the kept copy is what every reader gets.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.dateparse import parse_datetime
from django.utils.translation import gettext as _

from apps.common.exceptions import ClusterUnavailable, DomainError, ValidationFailed
from apps.inventory.kube import KubeError
from apps.inventory.models import Cluster
from apps.inventory.podlogs import LogQuery, cut_tail, tail_query
from apps.scheduling.choices import FINAL_STATES, RequestState
from apps.scheduling.errors import LogNotReady, NoLog
from apps.scheduling.kube import ClusterOps
from apps.scheduling.models import Request, RequestLog
from apps.scheduling.pods import is_pod_of
from apps.scheduling.results import request_result

log = logging.getLogger(__name__)

#: Requests that ended longer ago than this are not looked at (nor are those
#: that ended before logs were kept).
KEEP_WINDOW = timedelta(days=1)
#: A log that cannot be read for this long (the cluster away) is given up,
#: so that the pod's deletion never waits for ever.
GIVE_UP_AFTER = timedelta(minutes=10)
#: Logs kept per reconciliation: a backlog is spread over passes.
KEEP_PER_PASS = 20
TRUNCATED = "[vnpu-portal] log truncated: only its last {limit} bytes were kept\n"


# --- keeping (reconciliation, before the pod is deleted) -------------------------------


def logs_keep(cluster: Cluster, ops: ClusterOps, now: datetime) -> list[int]:
    """Keep the log tail and the result of each request that ended; their ids.

    A request whose pod cannot be read yet (the cluster away) is tried again
    at the next pass, until :data:`GIVE_UP_AFTER`; a pod already gone is
    noted, so nobody waits for a log that cannot come.
    """
    kept = []
    for request in Request.objects.filter(
        cluster=cluster,
        state__in=FINAL_STATES,
        log_kept_at__isnull=True,
        finished_at__gte=now - KEEP_WINDOW,
    ).exclude(pod_name="")[:KEEP_PER_PASS]:
        give_up = request.finished_at is not None and (
            now - request.finished_at > GIVE_UP_AFTER
        )
        try:
            _keep(request, ops, now)
        except KubeError as exc:
            if exc.transient and not give_up:
                log.info("request %s: log not kept yet: %s", request.pk, exc)
                continue
            _note(request, "", f"the log could not be read: {exc.message}", now)
        kept.append(request.pk)
    return kept


def _keep(request: Request, ops: ClusterOps, now: datetime) -> None:
    pod = ops.get_pod(request.namespace, request.pod_name)
    if pod is None or not is_pod_of(pod, request.pk):
        _note(request, "", "its pod was gone before its log could be kept", now)
        return
    logs: list[RequestLog] = []
    keep_bytes = settings.REQUEST_LOG_KEEP_BYTES
    for container in (pod.get("spec") or {}).get("containers") or []:
        name = container.get("name", "")
        query = tail_query(name, keep_bytes)
        try:
            data = ops.pod_log(request.namespace, request.pod_name, query.params())
        except KubeError as exc:
            if exc.transient:
                raise
            logs.append(RequestLog(request=request, container=name, error=exc.message))
            continue
        text, truncated = cut_tail(data, query, keep_bytes)
        logs.append(
            RequestLog(request=request, container=name, text=text, truncated=truncated)
        )
    with transaction.atomic():
        RequestLog.objects.filter(request=request).delete()
        RequestLog.objects.bulk_create(logs)
        _record_result(request, pod, now)


def _note(request: Request, container: str, error: str, now: datetime) -> None:
    """Record that no log could be kept, and why (the result without a pod)."""
    with transaction.atomic():
        RequestLog.objects.update_or_create(
            request=request, container=container, defaults={"error": error}
        )
        _record_result(request, None, now)


def result_record_ended(request_id: int, pod: dict | None) -> None:
    """Keep the result of a request that just ended, from the pod read then.

    Keeping the log comes later and reads the pod again; a pod deleted in
    between (by its owner, or the cluster's garbage collection on a busy
    day) left the result without its exit code although the container's
    code had been seen. A result already kept is never replaced.
    """
    request = Request.objects.filter(pk=request_id, result__isnull=True).first()
    if request is None or pod is None or not is_pod_of(pod, request.pk):
        return
    finished = request.finished_at.isoformat() if request.finished_at else None
    result = request_result(RequestState(request.state), request.reason, pod, finished)
    if result["exit_code"] is None:
        return  # nothing the later read could not say as well
    Request.objects.filter(pk=request_id, result__isnull=True).update(
        result=result, exit_code=result["exit_code"]
    )


def _record_result(request: Request, pod: dict | None, now: datetime) -> None:
    fields: dict[str, object] = {"log_kept_at": now}
    if request.result is None:
        finished = request.finished_at.isoformat() if request.finished_at else None
        result = request_result(
            RequestState(request.state), request.reason, pod, finished
        )
        fields.update(result=result, exit_code=result["exit_code"])
    Request.objects.filter(pk=request.pk).update(**fields)


# --- reading ---------------------------------------------------------------------------


@dataclass(frozen=True)
class LiveLog:
    """Read it from the pod (``namespace``/``pod``) through the API server."""

    namespace: str
    pod: str


@dataclass(frozen=True)
class KeptLog:
    """The kept copy, already cut to what was asked."""

    text: str
    truncated: bool


def log_source(request: Request) -> LiveLog | None:
    """Where the request's log is read: its pod (LiveLog), or the kept copy (None).

    Raises:
        NoLog: It never had a pod.
    """
    if not request.pod_name:
        raise NoLog(
            _(
                "request %(request)s has no pod yet (%(state)s): there is no "
                "log to read until it is admitted"
            )
            % {"request": request.pk, "state": request.state},
            detail={"state": request.state},
        )
    if request.log_kept_at is not None:
        return None
    return LiveLog(request.namespace, request.pod_name)


def kept_log(request: Request, query: LogQuery) -> KeptLog:
    """The kept log, filtered as the API server filters a live one.

    Raises:
        NoLog: Nothing was kept (the pod went first; the message says why).
    """
    rows = RequestLog.objects.filter(request=request)
    row = (
        rows.filter(container=query.container).first()
        if query.container
        else rows.order_by("id").first()
    )
    if row is None or (row.error and not row.text):
        why = row.error if row is not None else _("none was kept")
        raise NoLog(
            _("request %(request)s has no kept log: %(why)s")
            % {"request": request.pk, "why": why}
        )
    lines = row.text.splitlines(keepends=True)
    since = _since(query)
    if since is not None:
        lines = [line for line in lines if (_stamp(line) or since) >= since]
    if query.tail_lines is not None:
        lines = lines[-query.tail_lines :] if query.tail_lines else []
    from_start = bool(lines) and lines[0] == row.text.splitlines(keepends=True)[0]
    if not query.timestamps:
        lines = [line.split(" ", 1)[1] if " " in line else line for line in lines]
    text = "".join(lines)
    if row.truncated and from_start:
        marker = TRUNCATED.format(limit=settings.REQUEST_LOG_KEEP_BYTES)
        stamp = row.text.split(" ", 1)[0] + " " if query.timestamps else ""
        text = stamp + marker + text
    return KeptLog(text, row.truncated)


def _since(query: LogQuery) -> datetime | None:
    if query.since_time:
        return parse_datetime(query.since_time)
    if query.since_seconds is not None:
        return timezone.now() - timedelta(seconds=query.since_seconds)
    return None


def _stamp(line: str) -> datetime | None:
    """The kubelet's RFC 3339 stamp before a line (nanoseconds cut to micro)."""
    head = line.split(" ", 1)[0]
    if "." in head:
        whole, _dot, fraction = head.rstrip("Z").partition(".")
        head = f"{whole}.{fraction[:6]}Z"
    return parse_datetime(head)


def log_refusal(exc: KubeError, cluster: str) -> DomainError:
    """What the API server's error on opening a live log means for its reader.

    A 400 names the container (none given in a pod of several, or not one of
    it) or says it has no log yet (waiting to start, or ended without one:
    a vNPU that was never made); anything else is the cluster's trouble.
    """
    if exc.status == 400:
        if "must be specified" in exc.message or "is not valid" in exc.message:
            return ValidationFailed(exc.message, detail={"container": [exc.message]})
        return LogNotReady(exc.message)
    return ClusterUnavailable(exc.described(cluster))
