"""The harness (``harness/``): what the tests, kubestack and bench start
processes, find ports and wait with; and bench, kubestack and the harness
import no test module."""

from __future__ import annotations

import ast
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness import processes
from harness.processes import ProcessError, WaitTimeout

ROOT = Path(__file__).resolve().parents[1]


def _modules_imported(path: Path) -> set[str]:
    """Every module a file imports, at any depth of its code."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level == 0:
            names.add(node.module or "")
        elif isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
    return names


@pytest.mark.parametrize("package", ["bench", "harness", "kubestack"])
def test_bench_kubestack_and_the_harness_import_no_test_module(package):
    modules = sorted((ROOT / package).rglob("*.py"))
    assert modules, f"{package}/ has no modules: the test looks in the wrong place"
    found = {
        str(path.relative_to(ROOT)): sorted(
            m for m in _modules_imported(path) if m.split(".")[0] == "tests"
        )
        for path in modules
    }
    assert {path: names for path, names in found.items() if names} == {}


def test_the_check_sees_an_import_of_a_test_module(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("def f():\n    from tests.polling import wait_for\n")
    assert "tests.polling" in _modules_imported(module)


def _python(code: str) -> list[str]:
    return [sys.executable, "-c", code]


def _group_alive(pgid: int) -> bool:
    listed = subprocess.run(["pgrep", "-g", str(pgid)], capture_output=True, text=True)
    # a killed child may linger as a zombie until its new parent reaps it
    pids = listed.stdout.split()
    states = [
        Path(f"/proc/{pid}/stat").read_text().split()[2]
        for pid in pids
        if Path(f"/proc/{pid}/stat").exists()
    ]
    return any(state != "Z" for state in states)


def test_stop_ends_the_whole_group_even_a_child_that_ignores_sigterm(tmp_path):
    # given a process whose child ignores SIGTERM
    child = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); print('child', flush=True); time.sleep(60)"
    parent = (
        "import subprocess, sys, time; "
        f"subprocess.Popen([sys.executable, '-c', {child!r}]); time.sleep(60)"
    )
    process = processes.start("parent", _python(parent), tmp_path)
    processes.wait_until(
        lambda: "child" in process.output(), "the child", 20, watched=[process]
    )
    # when it is stopped
    processes.stop(process, grace=5)
    # then the parent got SIGTERM and the child, which ignored it, is gone too
    assert process.returncode == -signal.SIGTERM
    processes.wait_until(
        lambda: not _group_alive(process.pid), "the group to be gone", 10
    )


def test_stop_kills_a_process_that_outlasts_its_grace(tmp_path):
    stubborn = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); print('up', flush=True); time.sleep(60)"
    process = processes.start("stubborn", _python(stubborn), tmp_path)
    processes.wait_until(lambda: "up" in process.output(), "it to start", 20)
    started = time.monotonic()
    processes.stop(process, grace=0.5)
    assert process.returncode == -signal.SIGKILL
    assert time.monotonic() - started < 10


def test_a_restart_appends_to_the_log_and_output_is_this_run_only(tmp_path):
    first = processes.start("job", _python("print('one')"), tmp_path)
    first.popen.wait(20)
    second = processes.start("job", _python("print('two')"), tmp_path)
    second.popen.wait(20)
    assert (tmp_path / "job.log").read_text().split() == ["one", "two"]
    assert second.output().split() == ["two"]


def test_wait_until_returns_the_truthy_value():
    answers = iter([None, 0, "ready"])
    assert processes.wait_until(lambda: next(answers), "an answer", 5, 0.01) == "ready"


def test_wait_until_names_what_it_waited_for_and_the_last_error():
    def refused() -> bool:
        raise ConnectionRefusedError("nobody home")

    with pytest.raises(WaitTimeout) as failure:
        processes.wait_until(
            refused, "the server", 0.3, 0.05, ignore=(ConnectionRefusedError,)
        )
    assert "timed out after 0.3 s waiting for the server" in str(failure.value)
    assert "nobody home" in str(failure.value)


def test_wait_until_asks_a_callable_what_at_the_failure():
    seen = []

    def what() -> str:
        return f"3 rows (saw {len(seen)})"

    with pytest.raises(WaitTimeout, match=r"waiting for 3 rows \(saw [1-9]\d*\)"):
        processes.wait_until(lambda: seen.append(1), what, 0.2, 0.05)


def test_wait_until_lets_an_unexpected_error_through():
    with pytest.raises(ZeroDivisionError):
        processes.wait_until(lambda: 1 / 0, "a division", 5)


def test_wait_until_fails_at_once_when_a_watched_process_dies(tmp_path):
    dying = processes.start("dying", _python("print('bad config'); exit(3)"), tmp_path)
    started = time.monotonic()
    with pytest.raises(ProcessError) as failure:
        processes.wait_until(lambda: False, "readiness", 60, watched=[dying])
    assert time.monotonic() - started < 30
    message = str(failure.value)
    assert "dying exited (code 3) while waiting for readiness" in message
    assert "bad config" in message


def test_wait_for_http_and_port(tmp_path):
    port = processes.free_port()
    server = processes.start(
        "web",
        [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"],
        tmp_path,
    )
    try:
        processes.wait_for_port(port, watched=[server])
        assert processes.wait_for_http(f"http://127.0.0.1:{port}/", 20) == 200
        assert processes.wait_for_http(f"http://127.0.0.1:{port}/absent", 20) == 404
        with pytest.raises(WaitTimeout, match=r"status \[200\]"):
            processes.wait_for_http(
                f"http://127.0.0.1:{port}/absent", 0.5, status={200}
            )
    finally:
        processes.stop(server)


def test_the_celery_command_lines():
    worker = processes.celery_command("worker", concurrency=8, name="w1@%h")
    assert worker[:6] == [sys.executable, "-m", "celery", "-A", "vnpuportal", "worker"]
    assert " ".join(worker[6:]) == (
        "--pool threads --concurrency 8 --without-gossip --without-mingle "
        "-n w1@%h --loglevel INFO"
    )
    beat = processes.celery_command("beat", schedule="var/beat")
    assert " ".join(beat[5:]) == "beat --schedule var/beat --pidfile= --loglevel INFO"
    with_beat = processes.celery_command("worker", beat=True, schedule="var/beat")
    assert "--beat" in with_beat
    assert with_beat[with_beat.index("--schedule") + 1] == "var/beat"
    with pytest.raises(ValueError, match="worker or beat"):
        processes.celery_command("flower")


def test_the_http_client_posts_json_with_its_token_over_one_connection():
    """harness.portal.HttpClient, what bench.burst's pipelines POST with to a
    deployed portal: APIClient's post(), a bearer token, a kept-alive socket."""
    import json
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from harness.portal import HttpClient

    seen: list[tuple[str, str, str, dict, tuple]] = []

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as uvicorn answers

        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            seen.append(
                (
                    self.path,
                    self.headers["Authorization"],
                    self.headers["Content-Type"],
                    body,
                    self.client_address,
                )
            )
            answer = json.dumps({"id": len(seen)}).encode()
            self.send_response(201 if body.get("ok") else 400)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        client = HttpClient(f"http://127.0.0.1:{server.server_port}", "s3cret")
        first = client.post("/api/requests/", {"ok": True}, format="json")
        second = client.post("/api/requests/", {"ok": False})
        client.close()
        with pytest.raises(ValueError, match="JSON only"):
            client.post("/api/requests/", {}, format="multipart")
    finally:
        server.shutdown()
        server.server_close()
    assert (first.status_code, first.json()) == (201, {"id": 1})
    assert (second.status_code, second.json()) == (400, {"id": 2})
    assert [s[:4] for s in seen] == [
        ("/api/requests/", "Bearer s3cret", "application/json", {"ok": True}),
        ("/api/requests/", "Bearer s3cret", "application/json", {"ok": False}),
    ]
    assert seen[0][4] == seen[1][4], "each POST opened a connection of its own"
