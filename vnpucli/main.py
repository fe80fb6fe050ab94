"""The ``vnpu`` console script: its argument parser and entry point.

Messages go to stderr, prefixed ``vnpu:``; the job's log and what ``status``
and ``ls`` show go to stdout. Everything after a lone ``--`` is the job's
command (``vnpu run ... -- python train.py --epochs 3``).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any, NoReturn, TextIO

from vnpucli import exitcodes
from vnpucli.client import Client, PortalError
from vnpucli.commands import cmd_logs, cmd_ls, cmd_release, cmd_status, cmd_wait
from vnpucli.i18n import N_, _
from vnpucli.run import Interrupted, cmd_run

STATES = (
    "pending",
    "reserved",
    "admitted",
    "running",
    "succeeded",
    "failed",
    "cancelled",
    "expired",
)
DESCRIPTION = N_("""\
Run jobs on vNPUs through a vNPU Portal, from a CI pipeline or a shell.

The portal is VNPU_URL (or --url) and the token VNPU_TOKEN (or --token): an
API token the portal's `manage.py createtoken` or its Tokens page made,
limited to your queue. `vnpu run` submits a job, prints its state as it
changes, streams its log and exits with the job's exit code.""")
RUN_USAGE = """\
vnpu run --cluster C --namespace N [--queue Q] --chip-type T
                (--memory MB | --template NAME | --whole-card) --image IMG
                [--priority P] [--env K=V ...] [--time-limit S]
                [--grace-seconds S] [--idempotency-key KEY] [--timestamps] [-- CMD ARGS...]"""
RUN_DESCRIPTION = N_("""\
Submit a request for a vNPU that runs IMG with CMD ARGS (the words after --),
print its state as it changes (pending with its reason and position, reserved,
admitted, running on which node, chip and template), stream the job's log to
stdout and exit with the job's exit code.

Ctrl-C or SIGTERM (a cancelled CI job) releases the request before vnpu exits
(130). With --idempotency-key, the same command run again (a retried CI step)
reattaches to the request the key names instead of submitting a second one.
Messages go to stderr, the job's log to stdout.""")


def exit_codes() -> str:
    """The exit codes' table, as ``--help`` ends with it."""
    return (
        _("exit codes:")
        + "\n"
        + "\n".join(f"  {code:<8}{_(meaning)}" for code, meaning in exitcodes.TABLE)
    )


class Parser(argparse.ArgumentParser):
    """argparse, but a usage error exits with 64 (EX_USAGE), not 2."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(exitcodes.USAGE, f"{self.prog}: error: {message}\n")


def whole_number(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            _("not a whole number: %(text)r") % {"text": text}
        ) from None
    if value < 0:
        raise argparse.ArgumentTypeError(
            _("must be 0 or more: %(text)r") % {"text": text}
        )
    return value


def positive_int(text: str) -> int:
    value = whole_number(text)
    if value < 1:
        raise argparse.ArgumentTypeError(
            _("must be 1 or more: %(text)r") % {"text": text}
        )
    return value


def env_item(text: str) -> str:
    if not text.partition("=")[0]:
        raise argparse.ArgumentTypeError(
            _("expected NAME=VALUE or NAME: %(text)r") % {"text": text}
        )
    return text


def _common(parser: argparse.ArgumentParser) -> None:
    """--url, --token, --retry-seconds: accepted before or after the subcommand."""
    group = parser.add_argument_group(_("portal"))
    group.add_argument(
        "--url",
        default=argparse.SUPPRESS,
        help=_("the portal's address (default: $VNPU_URL)"),
    )
    group.add_argument(
        "--token",
        default=argparse.SUPPRESS,
        help=_("an API token vnp_... (default: $VNPU_TOKEN)"),
    )
    group.add_argument(
        "--retry-seconds",
        type=float,
        default=argparse.SUPPRESS,
        help=_(
            "how long reads are tried again while the portal is unavailable (default: 60)"
        ),
    )


def _add_run(subs: Any) -> None:
    run = subs.add_parser(
        "run",
        help=_("submit a job, stream its log, exit with its exit code"),
        usage=RUN_USAGE,
        description=_(RUN_DESCRIPTION),
        epilog=exit_codes(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _common(run)
    where = run.add_argument_group(_("where it runs"))
    where.add_argument("--cluster", required=True, help=_("cluster id or name"))
    where.add_argument(
        "--namespace", required=True, help=_("namespace of the job's pod")
    )
    where.add_argument("--queue", help=_("the portal's queue (default: default)"))
    where.add_argument(
        "--chip-type",
        required=True,
        help=_("the chip type's commonWord, e.g. Ascend310P"),
    )
    size = run.add_mutually_exclusive_group(required=True)
    size.add_argument(
        "--memory",
        type=int,
        metavar="MB",
        help=_("vNPU memory in MB (the smallest template that fits)"),
    )
    size.add_argument(
        "--template", metavar="NAME", help=_("a vNPU template, e.g. vir02")
    )
    size.add_argument("--whole-card", action="store_true", help=_("a whole chip"))
    job = run.add_argument_group(_("the job"))
    job.add_argument("--image", required=True, help=_("the container image"))
    job.add_argument(
        "--priority", help=_("a PriorityClass of the cluster (default: its default)")
    )
    job.add_argument(
        "--env",
        action="append",
        type=env_item,
        metavar="K=V",
        help=_(
            "an environment variable of the job (repeatable; K alone passes this shell's $K)"
        ),
    )
    job.add_argument(
        "--time-limit",
        type=positive_int,
        metavar="S",
        help=_("seconds the job may run (then it is stopped: exit 124)"),
    )
    job.add_argument(
        "--grace-seconds",
        type=whole_number,
        metavar="S",
        help=_(
            "seconds the job has to stop after SIGTERM when it is released, "
            "preempted or drained (default: Kubernetes' 30)"
        ),
    )
    job.add_argument(
        "--idempotency-key",
        metavar="KEY",
        help=_("the same key again reattaches to the same request"),
    )
    job.add_argument(
        "--timestamps", action="store_true", help=_("print the log's timestamps")
    )


def _add_others(subs: Any) -> None:
    wait = subs.add_parser(
        "wait",
        help=_("wait until a request runs or ends"),
        description=_(
            "Wait (long-polling the portal) until request ID is running (--for running) "
            "or has ended (--for finished, the default), printing its state as it "
            "changes. Exits 0 once it runs; once it ended, with the job's exit code; "
            "75 if --timeout passes first."
        ),
        epilog=exit_codes(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    wait.add_argument("id", type=positive_int, help=_("the request's id"))
    wait.add_argument(
        "--for", dest="until", choices=("running", "finished"), default="finished"
    )
    wait.add_argument(
        "--timeout",
        type=float,
        metavar="S",
        help=_("give up after S seconds (exit 75)"),
    )
    logs = subs.add_parser(
        "logs",
        help=_("print a job's log"),
        description=_(
            "Print the log of request ID's job: live while its pod exists, the tail "
            "the portal kept once it has ended. -f follows it until the job ends "
            "(a cut stream is resumed without repeating or losing a line)."
        ),
    )
    logs.add_argument("id", type=positive_int, help=_("the request's id"))
    logs.add_argument(
        "-f",
        "--follow",
        action="store_true",
        help=_("follow the log until the job ends"),
    )
    logs.add_argument(
        "--tail", type=positive_int, metavar="N", help=_("only the last N lines")
    )
    logs.add_argument(
        "--timestamps", action="store_true", help=_("print each line's timestamp")
    )
    release = subs.add_parser(
        "release",
        help=_("cancel a request, or release its vNPU"),
        description=_(
            "Cancel request ID while it waits, or release its vNPU (delete its pod) while it runs."
        ),
    )
    release.add_argument("id", type=positive_int, help=_("the request's id"))
    status = subs.add_parser(
        "status",
        help=_("show a request's state and result"),
        description=_(
            "Show request ID: its state and reason, where it runs, its exit code and result."
        ),
    )
    status.add_argument("id", type=positive_int, help=_("the request's id"))
    status.add_argument(
        "--json", action="store_true", help=_("the portal's JSON as it is")
    )
    ls = subs.add_parser(
        "ls",
        help=_("list requests"),
        description=_("List the requests the token may see, newest first."),
    )
    ls.add_argument(
        "--state",
        action="append",
        choices=STATES,
        help=_("only this state (repeatable)"),
    )
    ls.add_argument("--queue", help=_("only this queue"))
    ls.add_argument(
        "--limit",
        type=positive_int,
        default=50,
        help=_("at most N requests (default: 50)"),
    )
    ls.add_argument("--json", action="store_true", help=_("the portal's JSON as it is"))
    for sub in (wait, logs, release, status, ls):
        _common(sub)


def build_parser() -> Parser:
    parser = Parser(
        prog="vnpu",
        description=_(DESCRIPTION),
        epilog=exit_codes(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _common(parser)
    subs = parser.add_subparsers(
        dest="subcommand", metavar="COMMAND", parser_class=Parser
    )
    _add_run(subs)
    _add_others(subs)
    return parser


HANDLERS: dict[str, Callable[[Client, Any, TextIO, Callable[[str], None]], int]] = {
    "run": cmd_run,
    "wait": cmd_wait,
    "logs": cmd_logs,
    "release": cmd_release,
    "status": cmd_status,
    "ls": cmd_ls,
}


def parse(argv: Sequence[str]) -> argparse.Namespace:
    """The arguments, with ``args.command`` the words after a lone ``--``."""
    argv = list(argv)
    command: list[str] = []
    if "--" in argv:
        cut = argv.index("--")
        argv, command = argv[:cut], argv[cut + 1 :]
    parser = build_parser()
    args = parser.parse_args(argv)
    if not args.subcommand:
        parser.error(_("a command is needed: run, wait, logs, release, status or ls"))
    if command and args.subcommand != "run":
        parser.error(_("only `vnpu run` takes a command after --"))
    args.command = command
    return args


def note(message: str) -> None:
    """A message of ``vnpu`` (not the job's output): one line on stderr."""
    sys.stderr.write(f"vnpu: {message}\n")
    sys.stderr.flush()


def main(argv: Sequence[str] | None = None) -> int:
    """The console script: run one subcommand and return its exit code."""
    args = parse(sys.argv[1:] if argv is None else argv)
    url = getattr(args, "url", None) or os.environ.get("VNPU_URL", "")
    token = getattr(args, "token", None) or os.environ.get("VNPU_TOKEN", "")
    if not url:
        note(_("no portal: set VNPU_URL or pass --url (e.g. http://127.0.0.1:8000)"))
        return exitcodes.USAGE
    client = Client(
        url, token, retry_seconds=getattr(args, "retry_seconds", 60.0), note=note
    )
    try:
        return HANDLERS[args.subcommand](client, args, sys.stdout, note)
    except PortalError as exc:
        note(exc.message)
        return exc.exit_code
    except (KeyboardInterrupt, Interrupted):
        note(_("interrupted"))
        return exitcodes.INTERRUPTED
    except BrokenPipeError:  # stdout closed early (`vnpu logs 42 | head`)
        # no second error when Python flushes stdout at exit
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return exitcodes.OK


if __name__ == "__main__":
    sys.exit(main())
