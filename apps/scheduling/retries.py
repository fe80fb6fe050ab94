"""A request whose pod fails before it runs gets another pod, up to a limit.

A pod can end without its job ever starting: the node refused it at
admission (``UnexpectedAdmissionError``), it was evicted or deleted before
starting, its node went away (the pod garbage collector deletes it), or its
vNPU could not be created (``StartError``: on a hard-split chip a terminating
pod may still hold the room Volcano gave away). None of these says anything
about the job, so the request goes back to Pending, keeps its place, and is
admitted again with a new pod (``attempts`` + 1; the pod of each attempt has
its own name). Each failure is kept on the request (``pod_failures``) and
audited, so the earlier attempts stay visible.

After ``REQUEST_MAX_POD_FAILURES`` such failures the request fails with the
last reason. A chip on which this request's pods failed ``AVOID_AFTER``
times is not offered to it again: the chip, not the moment, is then the
likelier cause.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from django.conf import settings

from apps.audit.services import audit_record
from apps.inventory.hami.messages import N_
from apps.scheduling import states
from apps.scheduling.choices import RequestState
from apps.scheduling.models import Request
from apps.scheduling.pods import pod_problem

log = logging.getLogger(__name__)

#: Failures on one chip before the request avoids that chip.
AVOID_AFTER = 2


def failure_reason(pod: Mapping[str, Any] | None) -> str:
    """Why a pod ended before it ran, in a few words."""
    if pod is None:
        return N_("the pod was deleted before it ran (or its node went away)")
    if (pod.get("metadata") or {}).get("deletionTimestamp"):
        return N_("the pod was deleted before it ran")
    problem = pod_problem(pod)
    if not problem:
        return N_("the pod failed before it ran: no reason given")
    return N_("the pod failed before it ran: %(problem)s", problem=problem)


def avoided_chips(request: Request) -> frozenset[str]:
    """Allocator ids of the chips this request's pods failed on ``AVOID_AFTER`` times."""
    counts = Counter(
        f["chip_id"] for f in request.pod_failures or [] if f.get("chip_id")
    )
    return frozenset(str(chip) for chip, n in counts.items() if n >= AVOID_AFTER)


def pod_failed_before_running(
    request: Request,
    pod: Mapping[str, Any] | None,
    from_state: RequestState,
    now: datetime,
) -> bool:
    """Record that ``request``'s pod ended before it ran, and give the request
    another pod or, past the limit, fail it. True when the request moved.

    The caller has deleted the pod (or found it gone): the room it was booked
    goes back with the move.
    """
    reason = failure_reason(pod)
    node = ((pod or {}).get("spec") or {}).get("nodeName") or request.node
    failure = {
        "pod": request.pod_name,
        "attempt": request.attempts + 1,
        "chip_uuid": request.chip_uuid,
        "chip_id": request.chip_id,
        "node": node,
        "reason": reason,
        "at": now.isoformat(),
    }
    failures = [*(request.pod_failures or []), failure]
    limit = settings.REQUEST_MAX_POD_FAILURES
    shown = (
        N_("%(pod)s on chip %(chip)s", pod=request.pod_name, chip=request.chip_uuid)
        if request.chip_uuid
        else request.pod_name
    )
    if len(failures) >= limit:
        moved = states.request_move(
            request.pk,
            from_states=[from_state],
            to=RequestState.FAILED,
            drop_reservation=True,
            finished_at=now,
            pod_failures=failures,
            reason=N_(
                "%(count)s pods failed before running (REQUEST_MAX_POD_FAILURES "
                "is %(limit)s); the last, %(pod)s: %(why)s",
                count=len(failures),
                limit=limit,
                pod=shown,
                why=reason,
            ),
        )
    else:
        moved = states.request_requeue(
            request.pk,
            from_states=[from_state],
            pod_failures=failures,
            reason=N_(
                "pod %(pod)s: %(why)s; it will be tried again with a new pod "
                "(attempt %(attempt)s; %(count)s of %(limit)s failures allowed)",
                pod=shown,
                why=reason,
                attempt=request.attempts + 2,
                count=len(failures),
                limit=limit,
            ),
        )
    if moved:
        audit_record(
            actor=None,
            actor_name="reconcile",
            action="request.pod_failed",
            target=request,
            cluster=request.cluster,
            after=failure,
        )
        log.info("request %s: %s (%s)", request.pk, reason, request.pod_name)
    return moved
