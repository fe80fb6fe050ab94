"""Exit codes of ``vnpu`` and the one a finished request gives.

The job's own exit code comes first (``vnpu run`` ends as the job did). The
portal's own failures get codes of BSD's ``sysexits.h`` so that a pipeline can
tell "my test failed" from "the portal refused": a job could exit with one of
them too, and the line ``vnpu`` prints on stderr says which it was.
"""

from __future__ import annotations

from typing import Any

from vnpucli.i18n import N_, _

OK = 0
#: The job ended without an exit code (evicted, cancelled by someone else,
#: its pod never started, it expired while pending).
NO_EXIT_CODE = 1
#: The job hit its time limit (``--time-limit``).
TIME_LIMIT = 124
#: Bad arguments (EX_USAGE).
USAGE = 64
#: The portal refused the input: a 400 or 409, naming the field (EX_DATAERR).
REFUSED = 65
#: Not found: an unknown request, or no log (EX_NOINPUT).
NOT_FOUND = 66
#: The portal or its cluster is unavailable: 5xx, 429, no connection (EX_UNAVAILABLE).
UNAVAILABLE = 69
#: ``vnpu wait --timeout`` ran out (EX_TEMPFAIL).
TIMED_OUT = 75
#: Bad or missing token, or a role or queue the token may not use (EX_NOPERM).
AUTH = 77
#: Interrupted by Ctrl-C or SIGTERM (after releasing the request).
INTERRUPTED = 130

FINISHED_STATES = frozenset({"succeeded", "failed", "cancelled", "expired"})
TIME_LIMIT_REASON = "DeadlineExceeded"

#: The table of ``vnpu --help`` and docs/pipelines.md, in one place.
#: (The meanings are translated where they are shown: ``main.exit_codes``.)
TABLE = (
    ("0..255", N_("the job's own exit code, when it ran and has one")),
    (
        str(NO_EXIT_CODE),
        N_("the job ended without an exit code (evicted, cancelled, never started)"),
    ),
    (str(TIME_LIMIT), N_("the job hit its time limit (--time-limit)")),
    (str(USAGE), N_("usage error (bad arguments)")),
    (str(REFUSED), N_("the portal refused the input (400 or 409; the field is named)")),
    (str(NOT_FOUND), N_("not found (unknown request, or no log)")),
    (
        str(UNAVAILABLE),
        N_("the portal or the cluster is unavailable (5xx, 429, no connection)"),
    ),
    (str(TIMED_OUT), N_("timed out waiting (vnpu wait --timeout)")),
    (str(AUTH), N_("bad or missing token, or not allowed (401, 403)")),
    (
        str(INTERRUPTED),
        N_("interrupted (Ctrl-C or SIGTERM), after releasing the request"),
    ),
)


def is_finished(request: dict[str, Any]) -> bool:
    """The request has ended (its final state)."""
    return request.get("state") in FINISHED_STATES


def job_result(request: dict[str, Any]) -> tuple[int, str]:
    """The exit code ``vnpu`` ends with for a finished request, and why.

    The time limit wins over any exit code (the pod was killed for it); then
    the job's own code; a request that ended without one gives 1, and so does a
    failed request whose container said 0 (a pipeline must not pass on it).
    """
    rid = request.get("id")
    state = request.get("state")
    words: dict[str, Any] = {"id": rid, "state": state}
    result = request.get("result") or {}
    said = result.get("exit_code", request.get("exit_code"))
    code = said if isinstance(said, int) and not isinstance(said, bool) else None
    reason = result.get("reason") or request.get("reason") or ""
    if result.get("reason") == TIME_LIMIT_REASON or (
        state == "expired" and request.get("running_at")
    ):
        words.update(limit=request.get("time_limit_seconds"), reason=reason)
        if words["limit"]:
            said = _("request %(id)s hit its time limit of %(limit)s s (%(reason)s)")
        else:
            said = _("request %(id)s hit its time limit (%(reason)s)")
        return TIME_LIMIT, said % words
    if state == "succeeded":
        code = OK if code is None else code
        return code, _("request %(id)s succeeded (exit code %(code)s)") % {
            **words,
            "code": code,
        }
    if state == "failed" and code is not None and code != OK:
        return code, _("request %(id)s failed: exit code %(code)s (%(reason)s)") % {
            **words,
            "code": code,
            "reason": reason,
        }
    words["why"] = reason or _("no reason given")
    if state == "expired":
        return NO_EXIT_CODE, _("request %(id)s expired before it ran: %(why)s") % words
    return (
        NO_EXIT_CODE,
        _("request %(id)s %(state)s without an exit code: %(why)s") % words,
    )
