"""The CI templates of examples/ci and the ``vnpu`` command, run against the demo.

Each template's ``vnpu`` command is read from the template (not copied here)
and run as it is by bash, as the CI system would: with the template's own
variables, the variables the CI system provides (pipeline and job ids),
``VNPU_URL`` at this stack's portal and ``VNPU_TOKEN`` a token of role ``ci``
limited to queue ``ci`` (``manage.py createtoken``, as docs/pipelines.md
says). The stack is the demo of ``harness/stack.py``: simcluster's ``guide``
scenario (its pods play the job contract: ``SIMCLUSTER_RUN_SECONDS``,
``SIMCLUSTER_EXIT_CODE``, ``SIMCLUSTER_LOG``), a fresh database, sync and
uvicorn.

Proven here: a job that exits 3 makes ``vnpu run`` exit 3 and print its log;
success exits 0; the time limit exits 124 with the reason; Ctrl-C releases the
request and exits 130; a refusal names the field (65), a bad token is 77; the
same idempotency key reattaches; ``logs``, ``wait``, ``status``, ``ls`` and
``release`` on the same requests.
"""

from __future__ import annotations

import itertools
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml

from harness.stack import ROOT, Stack
from tests.polling import wait_for

CI = ROOT / "examples" / "ci"
TIMEOUT = 120.0
LOG = ["epoch 1/3 loss=0.61", "epoch 2/3 loss=0.42", "epoch 3/3 loss=0.30"]
RUN_IDS = itertools.count(1000)


@dataclass
class Template:
    """A template's ``vnpu`` commands and the environment its CI system gives them."""

    name: str
    commands: list[str]
    variables: dict[str, str]
    ci: dict[str, str] = field(default_factory=dict)

    def command(self) -> str:
        assert len(self.commands) == 1, (self.name, self.commands)
        return self.commands[0]


def gitlab() -> Template:
    doc = yaml.safe_load((CI / ".gitlab-ci.yml").read_text())
    script = doc["npu-test"]["script"]
    run_id = next(RUN_IDS)
    return Template(
        "gitlab",
        [line for line in script if "vnpu run" in line],
        {name: str(value) for name, value in doc["variables"].items()},
        {"CI_PIPELINE_ID": str(run_id), "CI_JOB_NAME": "npu-test"},
    )


def github() -> Template:
    doc = yaml.safe_load((CI / "github-actions.yml").read_text())
    job = doc["jobs"]["npu-test"]
    assert job["runs-on"]
    assert job["env"]["VNPU_TOKEN"] == "${{ secrets.VNPU_TOKEN }}"
    variables = {
        name: str(value)
        for name, value in job["env"].items()
        if "${{" not in str(value)  # the secret and the URL: set below
    }
    commands = [
        step["run"] for step in job["steps"] if "vnpu run" in step.get("run", "")
    ]
    run_id = next(RUN_IDS)
    return Template(
        "github",
        commands,
        variables,
        {
            "GITHUB_RUN_ID": str(run_id),
            "GITHUB_JOB": "npu-test",
            "GITHUB_RUN_ATTEMPT": "1",
        },
    )


def jenkins() -> Template:
    text = (CI / "Jenkinsfile").read_text()
    block = re.search(r"environment \{\n(.*?)\n\s*\}", text, re.DOTALL)
    assert block, "the Jenkinsfile has an environment block"
    variables: dict[str, str] = {}
    for name, value in re.findall(r"^\s*(\w+) = (.+)$", block.group(1), re.MULTILINE):
        if value.startswith("credentials("):
            assert name == "VNPU_TOKEN", name
        elif value.startswith('"'):
            variables[name] = json.loads(value)  # Groovy's "..." escapes: \n
        else:
            variables[name] = value.strip("'")
    commands = [
        s for s in re.findall(r"sh '''\n(.*?)'''", text, re.DOTALL) if "vnpu run" in s
    ]
    return Template(
        "jenkins",
        commands,
        variables,
        {"BUILD_TAG": f"jenkins-npu-test-{next(RUN_IDS)}"},
    )


TEMPLATES = {"gitlab": gitlab, "github": github, "jenkins": jenkins}


@dataclass
class Job:
    """A ``vnpu`` command running under bash: its exit code, stdout and stderr,
    read as they come (stdout lines with the time each arrived)."""

    process: subprocess.Popen[str]
    err_lines: list[str] = field(default_factory=list)
    out_lines: list[tuple[float, str]] = field(default_factory=list)

    def __post_init__(self) -> None:
        assert self.process.stdout is not None
        assert self.process.stderr is not None
        self._readers = [
            threading.Thread(target=self._read, args=(stream, sink), daemon=True)
            for stream, sink in (
                (self.process.stdout, self._out),
                (self.process.stderr, self.err_lines.append),
            )
        ]
        for reader in self._readers:
            reader.start()

    def _out(self, line: str) -> None:
        self.out_lines.append((time.monotonic(), line))

    @staticmethod
    def _read(stream, sink) -> None:
        for line in stream:
            sink(line)

    @property
    def err(self) -> str:
        return "".join(self.err_lines)

    @property
    def out(self) -> str:
        return "".join(line for _, line in self.out_lines)

    def finish(self, timeout: float = TIMEOUT) -> Job:
        try:
            self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
            raise AssertionError(
                f"still running after {timeout} s:\n{self.err}"
            ) from None
        for reader in self._readers:
            reader.join(timeout=10)
        return self

    @property
    def code(self) -> int:
        assert self.process.returncode is not None
        return self.process.returncode

    def request_id(self) -> int:
        found = re.search(r"request (\d+)", self.err)
        assert found, self.err
        return int(found.group(1))


@dataclass
class Pipeline:
    """Runs shell commands as a CI job would, against the demo."""

    stack: Stack
    token: str

    def env(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        env = {
            key: value
            for key, value in os.environ.items()
            if not key.startswith(("VNPU_", "SIMCLUSTER_"))
        }
        env.update(extra or {})
        env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
        env.setdefault("VNPU_URL", self.stack.url)
        env.setdefault("VNPU_TOKEN", self.token)
        return env

    def start(self, script: str, extra: dict[str, str] | None = None) -> Job:
        # A session of its own: Ctrl-C goes to the whole foreground group.
        process = subprocess.Popen(
            ["bash", "-c", script],
            cwd=self.stack.workdir,
            env=self.env(extra),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        return Job(process)

    def run(self, script: str, extra: dict[str, str] | None = None) -> Job:
        return self.start(script, extra).finish()

    def template(self, template: Template, **overrides: str) -> Job:
        # VNPU_URL and VNPU_TOKEN are the CI system's settings: this demo's
        variables = {k: v for k, v in template.variables.items() if k != "VNPU_URL"}
        env = {**variables, **template.ci, **overrides}
        return self.start(template.command(), env)

    def vnpu(self, *args: str, extra: dict[str, str] | None = None) -> Job:
        return self.run(" ".join(_quote(a) for a in ("vnpu", *args)), extra)

    def request(self, rid: int) -> dict:
        status, body = self.stack.api().call("GET", f"/api/requests/{rid}/")
        assert status == 200, body
        return body


def _quote(word: str) -> str:
    return shlex.quote(word)


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> Iterator[Stack]:
    stack = Stack(
        "guide",
        sim_options={"ready_delay": 0.1, "pod_shutdown_seconds": 0.3},
        workdir=tmp_path_factory.mktemp("ci-demo"),
    )
    stack.start(wait_for_chips=4)
    try:
        # The demo's Celery beat runs a scheduling pass every few seconds
        # (time limits are enforced there); this stack has no worker: a loop.
        stack.processes.launch(
            "schedule",
            [
                sys.executable,
                "manage.py",
                "schedule",
                "--cluster",
                "demo",
                "--loop",
                "1",
            ],
        )
        yield stack
    finally:
        stack.stop()


@pytest.fixture(scope="module")
def pipeline(demo: Stack) -> Pipeline:
    assert shutil.which("vnpu", path=str(Path(sys.executable).parent)), (
        "the vnpu console script is not installed: pip install -e . (scripts/_venv.sh does)"
    )
    token = demo.manage("createtoken", "ci-bot", "--role", "ci", "--queue", "ci")
    token = token.strip().splitlines()[-1]
    assert token.startswith("vnp_"), token
    return Pipeline(demo, token)


def _diagnose(job: Job, demo: Stack) -> str:
    return f"code {job.code}\n--- stdout\n{job.out}\n--- stderr\n{job.err}\n--- web\n{demo.logs('web')[-3000:]}"


@pytest.mark.parametrize("name", sorted(TEMPLATES))
def test_each_template_runs_its_job_prints_its_log_and_passes(pipeline, demo, name):
    template = TEMPLATES[name]()
    job = pipeline.template(template).finish()
    assert job.code == 0, _diagnose(job, demo)
    assert job.out.splitlines() == LOG, _diagnose(job, demo)
    rid = job.request_id()
    assert f"submitted request {rid} (cluster demo, queue ci)" in job.err
    assert re.search(rf"request {rid} running on node \S+", job.err), job.err
    assert job.err.rstrip().endswith(f"request {rid} succeeded (exit code 0)"), job.err
    request = pipeline.request(rid)
    assert request["state"] == "succeeded"
    assert request["workload"]["command"] == ["python", "train.py"]


def test_a_job_that_exits_3_fails_the_step_with_3_and_its_log(pipeline, demo):
    job = pipeline.template(gitlab(), SIMCLUSTER_EXIT_CODE="3").finish()
    assert job.code == 3, _diagnose(job, demo)
    assert job.out.splitlines() == LOG
    rid = job.request_id()
    assert f"request {rid} failed: exit code 3" in job.err

    # the other commands on the same request
    logs = pipeline.vnpu("logs", str(rid))
    assert (logs.code, logs.out.splitlines()) == (0, LOG), logs.err
    tail = pipeline.vnpu("logs", str(rid), "--tail", "1", "--timestamps")
    assert tail.code == 0, tail.err
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\S+Z epoch 3/3 loss=0.30\n", tail.out), (
        tail.out
    )
    wait = pipeline.vnpu("wait", str(rid))
    assert wait.code == 3, wait.err
    status = pipeline.vnpu("status", str(rid))
    assert status.code == 0, status.err
    assert re.search(r"^state:\s+failed$", status.out, re.MULTILINE), status.out
    assert re.search(r"^exit code:\s+3$", status.out, re.MULTILINE), status.out
    as_json = json.loads(pipeline.vnpu("status", str(rid), "--json").out)
    assert (as_json["id"], as_json["exit_code"]) == (rid, 3)
    listed = pipeline.vnpu("ls", "--queue", "ci", "--state", "failed")
    assert listed.code == 0, listed.err
    assert str(rid) in [row.split()[0] for row in listed.out.splitlines()[1:]]


def test_a_retried_step_with_the_same_key_reattaches_to_its_request(pipeline, demo):
    template = github()
    first = pipeline.template(template).finish()
    again = pipeline.template(template).finish()
    assert (first.code, again.code) == (0, 0), _diagnose(again, demo)
    rid = first.request_id()
    assert f"reattached to request {rid}" in again.err, again.err
    assert again.out.splitlines() == LOG  # the kept log, printed again
    key = f"github-{template.ci['GITHUB_RUN_ID']}-npu-test"
    status, page = demo.api().call("GET", f"/api/requests/?idempotency_key={key}")
    assert status == 200, page
    assert [r["id"] for r in page["results"]] == [rid]


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_ctrl_c_or_a_cancelled_ci_job_releases_the_request_and_exits_130(
    pipeline, demo, signum
):
    # a job that runs until it is deleted; CI systems send SIGTERM to a
    # cancelled job, a person at a terminal Ctrl-C (SIGINT)
    job = pipeline.template(gitlab(), SIMCLUSTER_RUN_SECONDS="600")
    wait_for(lambda: " running on " in job.err, "vnpu says running", timeout=TIMEOUT)
    os.killpg(job.process.pid, signum)
    job.finish()
    rid = job.request_id()
    assert job.code == 130, _diagnose(job, demo)
    name = signal.Signals(signum).name
    assert f"interrupted ({name}): released request {rid}" in job.err
    assert pipeline.request(rid)["state"] == "cancelled"


def test_wait_gives_up_with_75_while_the_request_stays_pending(pipeline, demo):
    api = demo.api()
    status, page = api.call("GET", "/api/queues/?name=ci")
    assert status == 200, page
    (queue,) = [q for q in page["results"] if q["name"] == "ci"]
    url = f"/api/queues/{queue['id']}/"
    # the queue may hold no 310P for now: whatever is asked waits
    held = [{"chip_type": "Ascend310P", "slots_limit": 0}]
    status, body = api.call("PATCH", url, {"quotas": held})
    assert status == 200, body
    status, submitted = api.call(
        "POST",
        "/api/requests/",
        {
            "cluster": "demo",
            "namespace": "ci",
            "chip_type": "Ascend310P",
            "memory": 3000,
            "priority": "batch-medium",
            "queue": "ci",
            "workload": {"image": "busybox"},
            "idempotency_key": "held-1",
        },
    )
    assert status == 201, submitted
    rid = submitted["id"]
    try:
        started = time.monotonic()
        waited = pipeline.vnpu("wait", str(rid), "--for", "running", "--timeout", "2")
        took = time.monotonic() - started
        assert waited.code == 75, _diagnose(waited, demo)
        assert "timed out after 2 s" in waited.err, waited.err
        assert took < 30
        assert pipeline.request(rid)["state"] == "pending"
    finally:
        status, body = api.call("PATCH", url, {"quotas": queue["quotas"]})
        assert status == 200, body
        pipeline.vnpu("release", str(rid))


def test_the_time_limit_exits_124_with_the_reason(pipeline, demo):
    job = pipeline.vnpu(
        *("run", "--cluster", "demo", "--namespace", "ci", "--queue", "ci"),
        *("--chip-type", "Ascend310P", "--memory", "5000", "--image", "busybox"),
        *("--priority", "batch-medium"),
        *("--time-limit", "2", "--env", "SIMCLUSTER_RUN_SECONDS=60"),
        *("--env", "SIMCLUSTER_LOG=started", "--", "sleep", "60"),
    )
    assert job.code == 124, _diagnose(job, demo)
    assert "started" in job.out.splitlines()
    assert re.search(r"request \d+ hit its time limit of 2 s", job.err), job.err
    assert pipeline.request(job.request_id())["state"] == "expired"


def test_release_by_another_step_ends_the_run_without_an_exit_code(pipeline, demo):
    job = pipeline.template(jenkins(), SIMCLUSTER_RUN_SECONDS="600")
    wait_for(lambda: " running on " in job.err, "vnpu says running", timeout=TIMEOUT)
    rid = job.request_id()
    released = pipeline.vnpu("release", str(rid))
    assert released.code == 0, released.err
    assert f"released request {rid}" in released.err
    job.finish()
    assert job.code == 1, _diagnose(job, demo)
    assert f"request {rid} cancelled" in job.err


def test_the_portals_refusals_have_their_own_exit_codes(pipeline, demo):
    run = (
        *("run", "--cluster", "demo", "--queue", "ci", "--chip-type", "Ascend310P"),
        *("--memory", "5000", "--image", "busybox", "--priority", "batch-medium"),
    )
    refused = pipeline.vnpu(*run, "--namespace", "no-such-namespace")
    assert refused.code == 65, refused.err
    assert re.search(
        r"^vnpu: the portal refused the new request \(400\): namespace: ",
        refused.err,
        re.M,
    ), refused.err
    assert len(refused.err.splitlines()) == 1

    bad_token = pipeline.vnpu(
        *run, "--namespace", "ci", extra={"VNPU_TOKEN": "vnp_not-a-token"}
    )
    assert bad_token.code == 77, bad_token.err
    assert "the portal refused the token (401)" in bad_token.err

    missing = pipeline.vnpu("status", "999999")
    assert missing.code == 66, missing.err
    usage = pipeline.vnpu(*run)  # no --namespace
    assert usage.code == 64, usage.err
    assert "--namespace" in usage.err
    away = pipeline.vnpu(
        "ls", "--retry-seconds", "1", extra={"VNPU_URL": "http://127.0.0.1:9"}
    )
    assert away.code == 69, away.err
    assert "cannot reach the portal at http://127.0.0.1:9" in away.err


def test_a_follower_sees_the_lines_as_they_come(pipeline, demo):
    # the log is streamed, not printed at the end: the lines come out over
    # the job's 8 s, the first one well before the job ends
    lines = [f"step {n}" for n in range(1, 6)]
    job = pipeline.template(
        github(), SIMCLUSTER_RUN_SECONDS="8", SIMCLUSTER_LOG="\n".join(lines)
    ).finish()
    assert job.code == 0, _diagnose(job, demo)
    assert job.out.splitlines() == lines
    (first, _), (last, _) = job.out_lines[0], job.out_lines[-1]
    assert last - first > 4, job.out_lines


def test_a_web_restart_during_the_follow_loses_and_repeats_no_line(pipeline, demo):
    # the web process goes away while vnpu follows the log, and comes back:
    # vnpu reads on from its last line (since_time), printing each line once
    lines = [f"line {n:02d}" for n in range(1, 13)]
    job = pipeline.template(
        gitlab(), SIMCLUSTER_RUN_SECONDS="12", SIMCLUSTER_LOG="\n".join(lines)
    )
    wait_for(
        lambda: len(job.out_lines) >= 2, "the first lines printed", timeout=TIMEOUT
    )
    demo.stop_web()
    time.sleep(1)
    demo.start_web()
    job.finish()
    assert job.code == 0, _diagnose(job, demo)
    assert job.out.splitlines() == lines, _diagnose(job, demo)
    assert "reading on from the last line printed" in job.err, job.err
