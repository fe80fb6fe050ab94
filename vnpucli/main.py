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
EXIT_CODES = "exit codes:\n" + "\n".join(
    f"  {code:<8}{meaning}" for code, meaning in exitcodes.TABLE
)
DESCRIPTION = """\
Run jobs on vNPUs through a vNPU Portal, from a CI pipeline or a shell.

The portal is VNPU_URL (or --url) and the token VNPU_TOKEN (or --token): an
API token the portal's `manage.py createtoken` or its Tokens page made,
limited to your queue. `vnpu run` submits a job, prints its state as it
changes, streams its log and exits with the job's exit code."""
RUN_USAGE = """\
vnpu run --cluster C --namespace N [--queue Q] --chip-type T
                (--memory MB | --template NAME | --whole-card) --image IMG
                [--priority P] [--env K=V ...] [--time-limit S]
                [--idempotency-key KEY] [--timestamps] [-- CMD ARGS...]"""
RUN_DESCRIPTION = """\
Submit a request for a vNPU that runs IMG with CMD ARGS (the words after --),
print its state as it changes (pending with its reason and position, reserved,
admitted, running on which node, chip and template), stream the job's log to
stdout and exit with the job's exit code.

Ctrl-C or SIGTERM (a cancelled CI job) releases the request before vnpu exits
(130). With --idempotency-key, the same command run again (a retried CI step)
reattaches to the request the key names instead of submitting a second one.
Messages go to stderr, the job's log to stdout."""


class Parser(argparse.ArgumentParser):
    """argparse, but a usage error exits with 64 (EX_USAGE), not 2."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(exitcodes.USAGE, f"{self.prog}: error: {message}\n")


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more: {text!r}")
    return value


def env_item(text: str) -> str:
    if not text.partition("=")[0]:
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE or NAME: {text!r}")
    return text


def _common(parser: argparse.ArgumentParser) -> None:
    """--url, --token, --retry-seconds: accepted before or after the subcommand."""
    group = parser.add_argument_group("portal")
    group.add_argument(
        "--url",
        default=argparse.SUPPRESS,
        help="the portal's address (default: $VNPU_URL)",
    )
    group.add_argument(
        "--token",
        default=argparse.SUPPRESS,
        help="an API token vnp_... (default: $VNPU_TOKEN)",
    )
    group.add_argument(
        "--retry-seconds",
        type=float,
        default=argparse.SUPPRESS,
        help="how long reads are tried again while the portal is unavailable (default: 60)",
    )


def _add_run(subs: Any) -> None:
    run = subs.add_parser(
        "run",
        help="submit a job, stream its log, exit with its exit code",
        usage=RUN_USAGE,
        description=RUN_DESCRIPTION,
        epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _common(run)
    where = run.add_argument_group("where it runs")
    where.add_argument("--cluster", required=True, help="cluster id or name")
    where.add_argument("--namespace", required=True, help="namespace of the job's pod")
    where.add_argument("--queue", help="the portal's queue (default: default)")
    where.add_argument(
        "--chip-type", required=True, help="the chip type's commonWord, e.g. Ascend310P"
    )
    size = run.add_mutually_exclusive_group(required=True)
    size.add_argument(
        "--memory",
        type=int,
        metavar="MB",
        help="vNPU memory in MB (the smallest template that fits)",
    )
    size.add_argument("--template", metavar="NAME", help="a vNPU template, e.g. vir02")
    size.add_argument("--whole-card", action="store_true", help="a whole chip")
    job = run.add_argument_group("the job")
    job.add_argument("--image", required=True, help="the container image")
    job.add_argument(
        "--priority", help="a PriorityClass of the cluster (default: its default)"
    )
    job.add_argument(
        "--env",
        action="append",
        type=env_item,
        metavar="K=V",
        help="an environment variable of the job (repeatable; K alone passes this shell's $K)",
    )
    job.add_argument(
        "--time-limit",
        type=positive_int,
        metavar="S",
        help="seconds the job may run (then it is stopped: exit 124)",
    )
    job.add_argument(
        "--idempotency-key",
        metavar="KEY",
        help="the same key again reattaches to the same request",
    )
    job.add_argument(
        "--timestamps", action="store_true", help="print the log's timestamps"
    )


def _add_others(subs: Any) -> None:
    wait = subs.add_parser(
        "wait",
        help="wait until a request runs or ends",
        description=(
            "Wait (long-polling the portal) until request ID is running (--for running) "
            "or has ended (--for finished, the default), printing its state as it "
            "changes. Exits 0 once it runs; once it ended, with the job's exit code; "
            "75 if --timeout passes first."
        ),
        epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    wait.add_argument("id", type=positive_int, help="the request's id")
    wait.add_argument(
        "--for", dest="until", choices=("running", "finished"), default="finished"
    )
    wait.add_argument(
        "--timeout", type=float, metavar="S", help="give up after S seconds (exit 75)"
    )
    logs = subs.add_parser(
        "logs",
        help="print a job's log",
        description=(
            "Print the log of request ID's job: live while its pod exists, the tail "
            "the portal kept once it has ended. -f follows it until the job ends "
            "(a cut stream is resumed without repeating or losing a line)."
        ),
    )
    logs.add_argument("id", type=positive_int, help="the request's id")
    logs.add_argument(
        "-f", "--follow", action="store_true", help="follow the log until the job ends"
    )
    logs.add_argument(
        "--tail", type=positive_int, metavar="N", help="only the last N lines"
    )
    logs.add_argument(
        "--timestamps", action="store_true", help="print each line's timestamp"
    )
    release = subs.add_parser(
        "release",
        help="cancel a request, or release its vNPU",
        description="Cancel request ID while it waits, or release its vNPU (delete its pod) while it runs.",
    )
    release.add_argument("id", type=positive_int, help="the request's id")
    status = subs.add_parser(
        "status",
        help="show a request's state and result",
        description="Show request ID: its state and reason, where it runs, its exit code and result.",
    )
    status.add_argument("id", type=positive_int, help="the request's id")
    status.add_argument(
        "--json", action="store_true", help="the portal's JSON as it is"
    )
    ls = subs.add_parser(
        "ls",
        help="list requests",
        description="List the requests the token may see, newest first.",
    )
    ls.add_argument(
        "--state", action="append", choices=STATES, help="only this state (repeatable)"
    )
    ls.add_argument("--queue", help="only this queue")
    ls.add_argument(
        "--limit",
        type=positive_int,
        default=50,
        help="at most N requests (default: 50)",
    )
    ls.add_argument("--json", action="store_true", help="the portal's JSON as it is")
    for sub in (wait, logs, release, status, ls):
        _common(sub)


def build_parser() -> Parser:
    parser = Parser(
        prog="vnpu",
        description=DESCRIPTION,
        epilog=EXIT_CODES,
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
        parser.error("a command is needed: run, wait, logs, release, status or ls")
    if command and args.subcommand != "run":
        parser.error("only `vnpu run` takes a command after --")
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
        note("no portal: set VNPU_URL or pass --url (e.g. http://127.0.0.1:8000)")
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
        note("interrupted")
        return exitcodes.INTERRUPTED
    except BrokenPipeError:  # stdout closed early (`vnpu logs 42 | head`)
        # no second error when Python flushes stdout at exit
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return exitcodes.OK


if __name__ == "__main__":
    sys.exit(main())
