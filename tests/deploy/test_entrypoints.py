"""The image's entrypoint scripts, run as scripts with stubbed python, uvicorn and celery.

Each stub appends its name and arguments to a log and exits (with STUB_EXIT, 0
by default), so a test sees the exact command lines an entrypoint runs, in order.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCKER = ROOT / "docker"
PRESTART = str(DOCKER / "prestart.py")
STUB = """#!/usr/bin/env bash
{ printf '%s' "$(basename "$0")"; for a in "$@"; do printf '\\t%s' "$a"; done; printf '\\n'; } >> "$STUB_LOG"
if [ "$(basename "$0")" = uvicorn ]; then
  printf 'env\\tPROMETHEUS_MULTIPROC_DIR=%s\\n' "${PROMETHEUS_MULTIPROC_DIR:-}" >> "$STUB_LOG"
  printf 'env\\tDATABASE_POOL_MAX_SIZE=%s\\n' "${DATABASE_POOL_MAX_SIZE:-}" >> "$STUB_LOG"
fi
if [ "$(basename "$0")" = python ] && [ "${2:-}" = "${STUB_FAIL_ON:-none}" ]; then exit 69; fi
exit "${STUB_EXIT:-0}"
"""
SECRET = "s" * 60
# What the scripts pass: a container listens on all its interfaces; /tmp is its own.
EVERYWHERE = "0.0.0.0"  # noqa: S104
BEAT_SCHEDULE = "/tmp/celerybeat-schedule"  # noqa: S108
UVICORN = [
    "uvicorn",
    "vnpuportal.asgi:application",
    "--host",
    EVERYWHERE,
    "--port",
    "8000",
    "--workers",
    "1",
    "--proxy-headers",
    "--forwarded-allow-ips",
    "127.0.0.1",
    "--no-server-header",
    "--timeout-graceful-shutdown",
    "20",
    "--access-log",
]
WORKER = [
    "celery",
    "-A",
    "vnpuportal",
    "worker",
    "--loglevel",
    "INFO",
    "--pool",
    "prefork",
    "--concurrency",
    "4",
    "--hostname",
    "worker@%h",
    "-O",
    "fair",
    "--without-gossip",
    "--without-mingle",
]


@pytest.fixture
def run(tmp_path: Path):
    stubs = tmp_path / "bin"
    stubs.mkdir()
    for name in ("python", "uvicorn", "celery"):
        (stubs / name).write_text(STUB)
        (stubs / name).chmod(0o755)
    log = tmp_path / "calls.log"
    one_cpu = tmp_path / "one-cpu.max"
    one_cpu.write_text("100000 100000\n")

    def call(script: str, *args: str, **env: str) -> tuple[int, list[list[str]], str]:
        log.write_text("")
        environment = {
            "PATH": f"{stubs}:/usr/bin:/bin",
            "STUB_LOG": str(log),
            "HOME": str(tmp_path),
            # a container limited to one CPU, whatever this machine has
            "CGROUP_CPU_MAX_FILE": str(one_cpu),
            **env,
        }
        done = subprocess.run(
            [str(DOCKER / script), *args],
            env=environment,
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
        calls = [line.split("\t") for line in log.read_text().splitlines()]
        return done.returncode, calls, done.stderr

    return call


def _prod(**extra: str) -> dict[str, str]:
    return {"DJANGO_SECRET_KEY": SECRET, "DJANGO_DEBUG": "false", **extra}


def test_web_waits_migrates_then_serves(run):
    code, calls, _ = run("entrypoint-web.sh", **_prod())
    assert code == 0
    assert calls == [
        ["python", PRESTART, "wait"],
        ["python", PRESTART, "migrate"],
        UVICORN,
        ["env", "PROMETHEUS_MULTIPROC_DIR="],
        ["env", "DATABASE_POOL_MAX_SIZE=4"],
    ]


def _uvicorn_workers(calls: list[list[str]]) -> str:
    uvicorn = next(call for call in calls if call[0] == "uvicorn")
    return uvicorn[uvicorn.index("--workers") + 1]


@pytest.mark.parametrize(
    ("cpu_max", "most", "expected"),
    [
        ("200000 100000\n", None, "2"),  # a 2-CPU limit
        ("150000 100000\n", None, "2"),  # 1.5 CPUs: rounded up
        ("50000 100000\n", None, "1"),  # half a CPU: one process
        ("800000 100000\n", None, "8"),  # a limit is followed, whatever the cap
    ],
)
def test_web_auto_concurrency_follows_the_cpu_limit(
    run, tmp_path, cpu_max, most, expected
):
    cgroup = tmp_path / "cpu.max"
    cgroup.write_text(cpu_max)
    code, calls, _ = run("entrypoint-web.sh", **_prod(CGROUP_CPU_MAX_FILE=str(cgroup)))
    assert code == 0
    assert _uvicorn_workers(calls) == expected


def test_web_auto_concurrency_without_a_limit_is_capped(run, tmp_path):
    cgroup = tmp_path / "cpu.max"
    cgroup.write_text("max 100000\n")
    cpus = len(os.sched_getaffinity(0))
    code, calls, _ = run(
        "entrypoint-web.sh",
        **_prod(CGROUP_CPU_MAX_FILE=str(cgroup), WEB_CONCURRENCY_MAX="1"),
    )
    assert code == 0
    assert _uvicorn_workers(calls) == "1"
    code, calls, _ = run(
        "entrypoint-web.sh",
        **_prod(CGROUP_CPU_MAX_FILE=str(tmp_path / "none"), WEB_CONCURRENCY_MAX="64"),
    )
    assert code == 0
    assert _uvicorn_workers(calls) == str(min(cpus, 64))


@pytest.mark.parametrize("value", ["0", "two", "-1", "2x"])
def test_web_refuses_a_concurrency_that_is_not_a_number(run, value):
    code, calls, stderr = run("entrypoint-web.sh", **_prod(WEB_CONCURRENCY=value))
    assert code == 78
    assert "WEB_CONCURRENCY must be a positive number or auto" in stderr
    assert not any(call[0] == "uvicorn" for call in calls)


def test_web_keeps_a_connection_pool_unless_told_otherwise(run):
    # The stub uvicorn logs the environment it was started with.
    code, calls, _ = run("entrypoint-web.sh", **_prod())
    assert code == 0
    assert ["env", "DATABASE_POOL_MAX_SIZE=4"] in calls
    code, calls, _ = run("entrypoint-web.sh", **_prod(DATABASE_POOL_MAX_SIZE="0"))
    assert ["env", "DATABASE_POOL_MAX_SIZE=0"] in calls


def test_web_options_from_the_environment(run, tmp_path):
    metrics_dir = tmp_path / "prom"
    metrics_dir.mkdir()
    (metrics_dir / "stale.db").write_text("old process")
    code, calls, _ = run(
        "entrypoint-web.sh",
        "--log-level",
        "debug",
        **_prod(
            MIGRATE_ON_START="false",
            WEB_CONCURRENCY="3",
            PORT="9000",
            FORWARDED_ALLOW_IPS="10.0.0.0/8",
            ACCESS_LOG="no",
            PROMETHEUS_MULTIPROC_DIR=str(metrics_dir),
        ),
    )
    assert code == 0
    assert calls[0] == ["python", PRESTART, "wait"]
    uvicorn = calls[1]
    assert uvicorn[uvicorn.index("--workers") + 1] == "3"
    assert uvicorn[uvicorn.index("--port") + 1] == "9000"
    assert uvicorn[uvicorn.index("--forwarded-allow-ips") + 1] == "10.0.0.0/8"
    assert "--no-access-log" in uvicorn
    assert uvicorn[-2:] == ["--log-level", "debug"]
    # several processes share the histogram through a directory emptied at start
    assert calls[2] == ["env", f"PROMETHEUS_MULTIPROC_DIR={metrics_dir}"]
    assert list(metrics_dir.iterdir()) == []


@pytest.mark.parametrize(
    "script", ["entrypoint-web.sh", "entrypoint-worker.sh", "entrypoint-beat.sh"]
)
@pytest.mark.parametrize("key", [None, "", "   "])
def test_production_refuses_to_start_without_a_secret_key(run, script, key):
    env = {"DJANGO_DEBUG": "false"}
    if key is not None:
        env["DJANGO_SECRET_KEY"] = key
    code, calls, stderr = run(script, **env)
    assert code == 78
    assert "DJANGO_SECRET_KEY is not set; refusing to start" in stderr
    assert calls == []  # nothing else ran: no migration, no server


def test_the_local_demo_needs_no_key(run):
    code, calls, _ = run("entrypoint-web.sh", DJANGO_DEBUG="True")
    assert code == 0
    assert calls[-3] == UVICORN


def test_a_service_that_never_answers_stops_the_start(run):
    code, calls, _ = run("entrypoint-web.sh", **_prod(STUB_FAIL_ON="wait"))
    assert code == 69
    assert calls == [["python", PRESTART, "wait"]]


def test_worker(run):
    code, calls, _ = run("entrypoint-worker.sh", **_prod())
    assert code == 0
    assert calls == [["python", PRESTART, "wait"], WORKER]


def test_worker_limited_to_queues_with_its_own_pool(run):
    code, calls, _ = run(
        "entrypoint-worker.sh",
        "--max-tasks-per-child",
        "100",
        **_prod(CELERY_QUEUES="sync", CELERY_POOL="threads", CELERY_CONCURRENCY="8"),
    )
    assert code == 0
    worker = calls[1]
    assert worker[worker.index("--pool") + 1] == "threads"
    assert worker[worker.index("--concurrency") + 1] == "8"
    assert worker[-4:] == ["--queues", "sync", "--max-tasks-per-child", "100"]


def test_beat(run):
    code, calls, _ = run("entrypoint-beat.sh", **_prod())
    assert code == 0
    assert calls == [
        ["python", PRESTART, "wait"],
        [
            "celery",
            "-A",
            "vnpuportal",
            "beat",
            "--loglevel",
            "INFO",
            "--schedule",
            BEAT_SCHEDULE,
            "--pidfile=",
        ],
    ]


def test_simcluster_for_the_demo(run):
    code, calls, _ = run("entrypoint-simcluster.sh")
    assert code == 0
    assert calls == [
        [
            "python",
            "-m",
            "simcluster",
            "--host",
            EVERYWHERE,
            "--advertise-host",
            "simcluster",
            "--port",
            "6443",
            "--kubeconfig",
            "/shared/simcluster.kubeconfig",
            "--scenario",
            "guide",
            "--workload",
        ]
    ]


@pytest.mark.parametrize(
    ("args", "first_call"),
    [
        ((), ["python", PRESTART, "wait"]),
        (("worker",), ["python", PRESTART, "wait"]),
        (("manage", "migrate", "--plan"), ["python", "manage.py", "migrate", "--plan"]),
    ],
)
def test_the_dispatching_entrypoint(run, args, first_call):
    code, calls, _ = run("entrypoint.sh", *args, **_prod())
    assert code == 0
    assert calls[0] == first_call


def test_the_dispatching_entrypoint_runs_anything_else(run):
    code, calls, _ = run("entrypoint.sh", "celery", "inspect", "ping")
    assert code == 0
    assert calls == [["celery", "inspect", "ping"]]


def test_scripts_are_executable_and_parse():
    for script in sorted(DOCKER.glob("*.sh")):
        if script.name != "common.sh":
            assert os.access(script, os.X_OK), script
        assert subprocess.run(["bash", "-n", str(script)], check=False).returncode == 0


def test_shellcheck_is_clean():
    # .ci/run installs Debian's shellcheck; a developer without it gets a clear failure.
    assert shutil.which("shellcheck"), (
        "install shellcheck (apt-get install -y shellcheck)"
    )
    scripts = [str(p) for p in sorted(DOCKER.glob("*.sh"))]
    done = subprocess.run(
        ["shellcheck", "-x", *scripts],
        cwd=DOCKER,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout
