"""``vnpu wait``, ``logs``, ``release``, ``status`` and ``ls`` (``run`` is in ``run``).

Each command takes the client, its parsed arguments, the stream for its
output (stdout) and ``note`` for messages (stderr), and returns the exit code.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable
from typing import Any, TextIO

from vnpucli import exitcodes, show
from vnpucli.client import Client, PortalError
from vnpucli.i18n import _
from vnpucli.logs import LogPrinter, follow_log, log_pass

Note = Callable[[str], None]
#: The longest single long poll (the portal caps ``timeout`` at 300 s); a
#: state change in between is printed when the poll answers.
POLL_SECONDS = 10


def reached(request: dict[str, Any], target: str) -> bool:
    """``running``: the request runs or has already ended; ``finished``: it ended."""
    if exitcodes.is_finished(request):
        return True
    return target == "running" and request.get("state") == "running"


def watch(
    client: Client,
    request: dict[str, Any],
    target: str,
    note: Note,
    *,
    timeout: float | None = None,
    poll: int = POLL_SECONDS,
) -> tuple[dict[str, Any], bool]:
    """Long-poll the request until it reaches ``target``, printing each change
    of its state (with the reason and position while pending); returns the
    request and whether it was reached before ``timeout`` seconds."""
    rid = request["id"]
    deadline = None if timeout is None else time.monotonic() + timeout
    shown = None
    while True:
        if show.state_key(request) != shown:
            note(show.state_line(request))
            shown = show.state_key(request)
        if reached(request, target):
            return request, True
        left = None if deadline is None else deadline - time.monotonic()
        if left is not None and left <= 0:
            return request, False
        seconds = poll if left is None else max(1, min(poll, math.ceil(left)))
        request, said = client.wait(rid, target, seconds)
        if said is None and not reached(request, target):
            # a portal that does not long-poll answers at once: poll gently
            client.sleep(min(2.0, seconds))


def wait_finished(client: Client, rid: int) -> dict[str, Any]:
    """The request once it has ended (long polls, without printing)."""
    while True:
        request, said = client.wait(rid, "finished", 60)
        if exitcodes.is_finished(request):
            return request
        if said is None:
            client.sleep(2.0)


def cmd_wait(client: Client, args: Any, out: TextIO, note: Note) -> int:
    """``vnpu wait``: until the request runs or ends; exit as described in --help."""
    request = client.request(args.id)
    request, ok = watch(client, request, args.until, note, timeout=args.timeout)
    if not ok:
        note(
            _(
                "timed out after %(seconds)g s waiting for request %(id)s to be "
                "%(until)s (it is %(state)s)"
            )
            % {
                "seconds": args.timeout,
                "id": args.id,
                "until": args.until,
                "state": request.get("state"),
            }
        )
        return exitcodes.TIMED_OUT
    if exitcodes.is_finished(request):
        code, why = exitcodes.job_result(request)
        note(why)
        return code
    return exitcodes.OK


def cmd_logs(client: Client, args: Any, out: TextIO, note: Note) -> int:
    """``vnpu logs``: print the job's log (``-f``: follow it until the job ends)."""
    printer = LogPrinter(out, timestamps=args.timestamps)
    if args.follow:
        follow_log(client, args.id, printer, tail=args.tail, note=note)
        return exitcodes.OK

    def read() -> None:
        if not log_pass(client, args.id, printer, follow=False, tail=args.tail):
            raise PortalError(
                _("the log of request %(id)s was cut") % {"id": args.id},
                exitcodes.UNAVAILABLE,
                transient=True,
            )

    client.retrying(read)
    return exitcodes.OK


def cmd_release(client: Client, args: Any, out: TextIO, note: Note) -> int:
    """``vnpu release``: cancel the request, or release its vNPU if it runs."""
    answer = client.call(
        "DELETE",
        f"/api/requests/{args.id}/",
        what=_("release of request %(id)s") % {"id": args.id},
    )
    request = answer.body if isinstance(answer.body, dict) else {}
    note(
        _("released request %(id)s: %(state)s")
        % {"id": args.id, "state": request.get("state", "done")}
    )
    return exitcodes.OK


def cmd_status(client: Client, args: Any, out: TextIO, note: Note) -> int:
    """``vnpu status``: the request's state, placement and result."""
    request = client.request(args.id)
    if args.json:
        out.write(json.dumps(request, indent=2, sort_keys=True) + "\n")
    else:
        out.write(show.status_text(request) + "\n")
    return exitcodes.OK


def cmd_ls(client: Client, args: Any, out: TextIO, note: Note) -> int:
    """``vnpu ls``: the requests the token sees, newest first."""
    query: dict[str, Any] = {"state": args.state or None, "queue": args.queue}
    page = client.call(
        "GET", "/api/requests/", what=_("the requests"), query=query
    ).body
    requests: list[dict[str, Any]] = list(page.get("results", []))
    while page.get("next") and len(requests) < args.limit:
        page = client.call("GET", page["next"], what=_("the requests")).body
        requests += page.get("results", [])
    requests = requests[: args.limit]
    if args.json:
        out.write(json.dumps(requests, indent=2, sort_keys=True) + "\n")
    elif requests:
        out.write(show.table(requests) + "\n")
    else:
        note(_("no requests"))
    return exitcodes.OK
