"""The documented pipeline example, run verbatim with real curl against the demo.

The ``bash`` block of "Request a vNPU over REST" in docs/pipelines.md (the
example the README sends a newcomer to) is read from the page (not copied
here) and each of its commands is run by bash, as a person pasting it
would, against the demo as ``manage.py demo`` sets it up on simcluster's
``guide`` scenario (``harness/stack.py``: a fresh database, sync, uvicorn).
Only two things are filled in: the token that ``createtoken`` prints goes
where the block says ``vnp_...``, and the id the first POST answers replaces
the example's ``42``. ``PORTAL`` points at this stack's port (the block keeps
a value already set). A ``.curlrc`` makes curl print the HTTP status after
each body, so the commands stay as written.

Issue 15: this example once failed on the demo with queue ``ci`` unknown,
then for good with ``namespaces "ci" not found``.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.stack import ROOT, Stack
from tests.polling import wait_for

PAGE = ROOT / "docs" / "pipelines.md"
SECTION = "## Request a vNPU over REST"
TIMEOUT = 90.0


def example_block() -> str:
    """The first ```bash block of the page's "Request a vNPU over REST" section."""
    text = PAGE.read_text()
    section = text.split(f"\n{SECTION}\n", 1)[1].split("\n## ", 1)[0]
    return section.split("```bash\n", 1)[1].split("\n```", 1)[0]


def split_commands(block: str) -> list[tuple[str, list[str]]]:
    """Shell commands of the block, each with the comment lines that follow it.

    A command goes on while a line ends with a backslash or a quote is open
    (the JSON body spans lines inside single quotes).
    """
    commands: list[tuple[str, list[str]]] = []
    current = ""
    for line in block.splitlines():
        if not current and (not line.strip() or line.lstrip().startswith("#")):
            if commands and line.lstrip().startswith("#"):
                commands[-1][1].append(line.lstrip("# "))
            continue
        current = f"{current}\n{line}" if current else line
        if current.endswith("\\"):
            continue
        try:
            shlex.split(current, comments=True)
        except ValueError:  # a quote still open
            continue
        commands.append((current, []))
        current = ""
    assert not current, f"unterminated command in docs/pipelines.md: {current!r}"
    return commands


class Shell:
    """Runs commands with bash, carrying exported variables from one to the next."""

    def __init__(self, env: dict[str, str], workdir: Path) -> None:
        self.env = env
        self.envfile = workdir / "shell.env"

    def run(self, command: str) -> str:
        script = (
            f"{command}\n"
            '__rc=$?; env -0 > "$__ENVFILE"; exit $__rc\n'  # keep what it exported
        )
        result = subprocess.run(
            ["bash", "-c", script],
            cwd=ROOT,
            env={**self.env, "__ENVFILE": str(self.envfile)},
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert result.returncode == 0, (command, result.stdout, result.stderr)
        carried = self.envfile.read_text().split("\0")
        self.env = dict(item.split("=", 1) for item in carried if "=" in item)
        self.env.pop("__ENVFILE", None)
        return result.stdout


def curl_answer(output: str) -> tuple[int, dict]:
    """(status, JSON body) from curl's output and the .curlrc's status line."""
    body, _, status = output.rpartition("\n")
    return int(status), json.loads(body)


def shown_fields(comments: list[str], request_id: int) -> dict[str, object]:
    """The ``"key": value`` pairs a comment of the example shows (elided values left out)."""
    text = " ".join(comments).replace("42", str(request_id))
    fields: dict[str, object] = {}
    for key, raw in re.findall(r'"(\w+)": ("[^"]*"|\d+)', text):
        value = json.loads(raw)
        if isinstance(value, str) and "..." in value:
            continue
        fields[key] = value
    return fields


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> Iterator[Stack]:
    stack = Stack(
        "guide",
        sim_options={"ready_delay": 0.1, "pod_shutdown_seconds": 0.3},
        workdir=tmp_path_factory.mktemp("pipeline-demo"),
    )
    stack.start(wait_for_chips=4)
    try:
        yield stack
    finally:
        stack.stop()


def test_the_documented_pipeline_example_runs_verbatim_on_the_demo(demo, tmp_path):
    # Never skipped: without curl this fails and says so.
    assert shutil.which("curl"), (
        "the pipeline example needs curl (apt-get install curl)"
    )
    commands = split_commands(example_block())
    curlrc = tmp_path / ".curlrc"
    curlrc.write_text('write-out = "\\n%{http_code}"\n')
    env = {
        **demo.env(),
        "CURL_HOME": str(tmp_path),
        "PORTAL": demo.url,
        # `python manage.py ...` is this interpreter (the page assumes the venv).
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
    }
    shell = Shell(env, tmp_path)
    request_id: int | None = None
    seen: list[str] = []
    for command, comments in commands:
        if request_id is not None:
            command = command.replace("/requests/42/", f"/requests/{request_id}/")
        if command.startswith("export TOKEN="):
            assert "vnp_..." in command
            command = command.replace("vnp_...", shell.env["__TOKEN"])
        if "manage.py createtoken" in command:
            token = shell.run(command).strip().splitlines()[-1]
            assert token.startswith("vnp_"), token
            shell.env["__TOKEN"] = token
            seen.append("createtoken")
            continue
        if not command.startswith("curl"):
            shell.run(command)
            continue
        if "-X POST" in command and "/api/requests/" in command:
            status, body = curl_answer(shell.run(command))
            assert status == 201, body
            assert body["state"] == "pending"
            assert body["queue"] == "ci"
            assert body["namespace"] == "ci"
            request_id = body["id"]
            # "the same call again (a retried step): 200 and request 42"
            status, again = curl_answer(shell.run(command))
            assert status == 200, again
            assert again["id"] == request_id
            seen.append("post")
        elif "-X DELETE" in command:
            status, body = curl_answer(shell.run(command))
            assert status == 200, body
            assert body["state"] == "cancelled", body
            pod = f"vnpu-req-{request_id}"
            _wait(
                lambda pod=pod: pod not in demo.kubectl("get", "pods", "-n", "ci"), pod
            )
            seen.append("delete")
        else:  # the GET: poll it until the request runs, as a pipeline does
            expected = shown_fields(comments, request_id)
            assert expected.get("state") == "running", comments

            last: list[dict] = []

            def running(command: str = command, last: list = last) -> dict | None:
                status, body = curl_answer(shell.run(command))
                assert status == 200, body
                assert body["state"] not in ("failed", "cancelled", "expired"), body
                last[:] = [body]
                return body if body["state"] == "running" else None

            try:
                body = _wait(running, f"request {request_id} running")
            except AssertionError as late:
                # What the portal and the cluster said, for a failure seen in CI
                # only: the request's state and reason, the pods, the logs.
                raise AssertionError(
                    f"{late}\nrequest: {last[-1] if last else None}\npods:\n"
                    f"{demo.kubectl('get', 'pods', '-A', '-o', 'wide')}\n"
                    f"--- sync\n{demo.logs('sync')}\n--- web\n{demo.logs('web')}"
                ) from None
            assert {key: body[key] for key in expected} == expected
            pods = json.loads(demo.kubectl("get", "pods", "-n", "ci", "-o", "json"))
            names = [p["metadata"]["name"] for p in pods["items"]]
            assert body["pod_name"] in names
            seen.append("get")
    assert seen == ["createtoken", "post", "get", "delete"]


def _wait(predicate, what: str):
    return wait_for(predicate, what, timeout=TIMEOUT, interval=0.5)
