"""Private, throw-away PostgreSQL and Redis servers for the restart tests and
bench.rest.

The machine's shared PostgreSQL (5432) and Redis (6379) are never touched:
each test session that needs them gets its own ``initdb`` cluster in a temp
directory and its own ``redis-server``, on free ports of 127.0.0.1, which it
may restart at will and which are removed at the end.
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from harness.processes import Process, free_port, port_open, start, wait_for_port
from harness.requires import missing


def production_env(
    secret_prefix: str, database_url: str, redis_url: str
) -> dict[str, str]:
    """The environment of a portal process set up as in production (DEBUG off),
    on the given database and Redis; callers add what their test needs."""
    return {
        **{
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("DJANGO_", "CELERY_"))
        },
        "DJANGO_SETTINGS_MODULE": "vnpuportal.settings.base",
        "DJANGO_SECRET_KEY": secret_prefix + "k" * 60,
        "DJANGO_DEBUG": "false",
        "DJANGO_SECURE": "false",
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        "DATABASE_URL": database_url,
        "REDIS_URL": redis_url,
    }


def _as_postgres(args: list[str]) -> list[str]:
    # initdb and postgres refuse to run as root.
    if os.geteuid() == 0:
        return ["runuser", "-u", "postgres", "--", *args]
    return args


class PrivatePostgres:
    """A PostgreSQL cluster of its own (trust auth on 127.0.0.1)."""

    def __init__(self) -> None:
        binaries = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
        if not binaries or (shutil.which("runuser") is None and os.geteuid() == 0):
            missing("no PostgreSQL server binaries here")
        self.bin = Path(binaries[-1]).parent
        self.root = Path(tempfile.mkdtemp(prefix="vnpu-pg-"))
        self.data = self.root / "data"
        self.port = free_port()
        if os.geteuid() == 0:
            shutil.chown(self.root, "postgres", "postgres")
        subprocess.run(
            _as_postgres(
                [
                    str(self.bin / "initdb"),
                    "-D",
                    str(self.data),
                    "-U",
                    "postgres",
                    "-A",
                    "trust",
                    "--no-sync",
                ]
            ),
            check=True,
            capture_output=True,
        )
        self.start()

    def _ctl(self, *args: str) -> None:
        subprocess.run(
            _as_postgres(
                [
                    str(self.bin / "pg_ctl"),
                    "-D",
                    str(self.data),
                    "-l",
                    str(self.root / "log"),
                    "-w",
                    "-o",
                    f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off",
                    *args,
                ]
            ),
            check=True,
            capture_output=True,
            timeout=60,
        )

    def start(self) -> None:
        self._ctl("start")
        wait_for_port(self.port)

    def restart(self) -> None:
        """``pg_ctl restart -m fast``: every connection is cut."""
        self._ctl("restart", "-m", "fast")
        wait_for_port(self.port)

    def server_pid(self) -> int:
        """The postmaster's pid (postmaster.pid): a restart changes it."""
        return int((self.data / "postmaster.pid").read_text().split()[0])

    def halt(self) -> None:
        """``pg_ctl stop -m fast``, keeping the data for ``start()``."""
        self._ctl("stop", "-m", "fast")

    def stop(self) -> None:
        try:
            # already stopped (halt()) is fine
            with contextlib.suppress(subprocess.CalledProcessError):
                self._ctl("stop", "-m", "immediate")
        finally:
            shutil.rmtree(self.root, ignore_errors=True)

    def url(self, database: str) -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/{database}"

    def create_database(self, name: str) -> str:
        subprocess.run(
            _as_postgres(
                [
                    str(self.bin / "createdb"),
                    "-h",
                    "127.0.0.1",
                    "-p",
                    str(self.port),
                    "-U",
                    "postgres",
                    name,
                ]
            ),
            check=True,
            capture_output=True,
        )
        return self.url(name)


class PrivateRedis:
    """A redis-server of its own; with ``appendonly`` its queue survives a restart."""

    def __init__(self, *, appendonly: bool = True) -> None:
        if shutil.which("redis-server") is None:
            missing("no redis-server here")
        self.dir = Path(tempfile.mkdtemp(prefix="vnpu-redis-"))
        self.port = free_port()
        self.appendonly = appendonly
        self.process: Process | None = None
        self.start()

    def start(self) -> None:
        self.process = start(
            "redis",
            [
                "redis-server",
                "--bind",
                "127.0.0.1",
                "--port",
                str(self.port),
                "--dir",
                str(self.dir),
                "--save",
                "",
                "--appendonly",
                "yes" if self.appendonly else "no",
                "--appendfsync",
                "always",
            ],
            self.dir,
        )
        wait_for_port(self.port, watched=[self.process])

    def shutdown(self) -> None:
        """``redis-cli shutdown nosave`` (the AOF, if on, keeps what was queued)."""
        subprocess.run(
            ["redis-cli", "-p", str(self.port), "shutdown", "nosave"],
            capture_output=True,
            check=False,
        )
        if self.process is not None:
            self.process.popen.wait(timeout=10)
            self.process = None

    def restart(self) -> None:
        self.shutdown()
        self.start()

    def stop(self) -> None:
        self.shutdown()
        shutil.rmtree(self.dir, ignore_errors=True)

    def url(self, db: int = 0) -> str:
        return f"redis://127.0.0.1:{self.port}/{db}"

    def listening(self) -> bool:
        """Whether a connection to its port is accepted now."""
        return port_open(self.port)
