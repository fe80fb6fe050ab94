"""``vnpu run``: submit a job, follow it to its end, exit with its exit code.

The steps: POST the request (a known ``--idempotency-key`` answers 200 with
the request it already names: ``vnpu run`` then reattaches to it); long-poll
it until it runs, printing each state change; follow its log until the
container ends, resuming a cut stream; long-poll until the request has ended;
exit with the job's code (``exitcodes.job_result``).

Ctrl-C or SIGTERM (a cancelled CI job) releases the request (``DELETE``)
before ``vnpu`` exits with 130: a CI job that is stopped never leaves its
vNPU booked.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any, TextIO

from vnpucli import exitcodes
from vnpucli.client import Client, PortalError
from vnpucli.commands import Note, wait_finished, watch
from vnpucli.i18n import _
from vnpucli.logs import LogPrinter, follow_log

SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Interrupted(BaseException):
    """Ctrl-C or SIGTERM arrived (a BaseException: nothing catches it by mistake)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


@contextmanager
def interruptible() -> Iterator[None]:
    """While inside, SIGINT and SIGTERM raise :class:`Interrupted` (a blocking
    read is interrupted too)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, _frame: FrameType | None) -> None:
        raise Interrupted(signum)

    previous = {signum: signal.signal(signum, stop) for signum in SIGNALS}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


@contextmanager
def uninterrupted() -> Iterator[None]:
    """While inside, SIGINT and SIGTERM are ignored (the release must finish)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {signum: signal.signal(signum, signal.SIG_IGN) for signum in SIGNALS}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def parse_env(items: list[str]) -> dict[str, str]:
    """``--env K=V`` (and ``--env K``: the value of K here, left out if unset)."""
    env: dict[str, str] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep:
            if name in os.environ:
                env[name] = os.environ[name]
            continue
        env[name] = value
    return env


def request_body(args: Any) -> dict[str, Any]:
    """The POST body of ``vnpu run``'s arguments (only what was given)."""
    workload: dict[str, Any] = {"image": args.image}
    if args.command:
        workload["command"] = list(args.command)
    env = parse_env(args.env or [])
    if env:
        workload["env"] = env
    if args.grace_seconds is not None:
        workload["grace_seconds"] = args.grace_seconds
    body: dict[str, Any] = {
        "cluster": args.cluster,
        "namespace": args.namespace,
        "chip_type": args.chip_type,
        "workload": workload,
    }
    if args.memory is not None:
        body["memory"] = args.memory
    elif args.template:
        body["template"] = args.template
    else:
        body["whole_card"] = True
    optional = {
        "queue": args.queue,
        "priority": args.priority,
        "time_limit_seconds": args.time_limit,
        "idempotency_key": args.idempotency_key,
    }
    body.update({key: value for key, value in optional.items() if value is not None})
    return body


def submit(client: Client, body: dict[str, Any], note: Note) -> dict[str, Any]:
    """POST the request; say whether it is new or an earlier one reattached."""
    answer = client.call("POST", "/api/requests/", what=_("the new request"), body=body)
    request: dict[str, Any] = answer.body
    if answer.status == 200:
        note(
            _("reattached to request %(id)s (idempotency key %(key)r), %(state)s")
            % {
                "id": request["id"],
                "key": body.get("idempotency_key"),
                "state": request.get("state"),
            }
        )
    else:
        note(
            _("submitted request %(id)s (cluster %(cluster)s, queue %(queue)s)")
            % {
                "id": request["id"],
                "cluster": body["cluster"],
                "queue": request.get("queue"),
            }
        )
    return request


def release(client: Client, rid: int | None, signum: int, note: Note) -> int:
    """After Ctrl-C or SIGTERM: release the request, say so, return 130."""
    name = signal.Signals(signum).name
    if rid is None:
        note(
            _("interrupted (%(signal)s) before the portal answered: nothing to release")
            % {"signal": name}
        )
        return exitcodes.INTERRUPTED
    with uninterrupted():
        try:
            answer = client.call(
                "DELETE",
                f"/api/requests/{rid}/",
                what=_("release of request %(id)s") % {"id": rid},
            )
        except PortalError as exc:
            note(
                _(
                    "interrupted (%(signal)s); could not release request %(id)s: %(problem)s"
                )
                % {"signal": name, "id": rid, "problem": exc.message}
            )
            return exitcodes.INTERRUPTED
    state = answer.body.get("state") if isinstance(answer.body, dict) else None
    note(
        _("interrupted (%(signal)s): released request %(id)s (now %(state)s)")
        % {"signal": name, "id": rid, "state": state}
    )
    return exitcodes.INTERRUPTED


def cmd_run(client: Client, args: Any, out: TextIO, note: Note) -> int:
    """``vnpu run``: submit, follow the state and the log, exit as the job did."""
    body = request_body(args)
    rid: int | None = None
    with interruptible():
        try:
            request = submit(client, body, note)
            rid = int(request["id"])
            request, _reached = watch(client, request, "running", note)
            printer = LogPrinter(out, timestamps=args.timestamps)
            follow_log(client, rid, printer, note=note)
            code, why = exitcodes.job_result(wait_finished(client, rid))
            note(why)
            return code
        except Interrupted as stop:
            return release(client, rid, stop.signum, note)
        except PortalError as exc:
            if rid is None:
                raise
            note(exc.message)
            note(
                _(
                    "request %(id)s may still be there: `vnpu release %(id)s` frees "
                    "it, and `vnpu run` with the same --idempotency-key reattaches to it"
                )
                % {"id": rid}
            )
            return exc.exit_code
