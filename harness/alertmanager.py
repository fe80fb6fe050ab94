"""A real Alertmanager (Debian's ``prometheus-alertmanager``) for tests, the
demo and benchmarks.

``Alertmanager(directory, webhook_url=...).start()`` writes a configuration
that routes every alert to one webhook receiver (grouped by alert name and
cluster, sent within a second, resolved alerts too), keeps its data and log
in ``directory``, listens on a free port of 127.0.0.1 with clustering off,
and returns once it is ready. ``config`` replaces the whole configuration
(YAML text) when a test needs its own routes. ``alerts()`` and
``silences()`` read its v2 API; ``stop`` terminates it. Every failure to
start or to wait carries the end of its log.

``WebhookReceiver`` is the other end: a small HTTP server in a thread that
records each notification Alertmanager POSTs to it, with the time it came.

The pytest fixture ``alertmanager`` (tests/conftest.py) runs one per test,
sending to a ``WebhookReceiver`` (``alertmanager.receiver``).
"""

from __future__ import annotations

import json
import shutil
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from harness import processes
from harness.processes import ProcessError, WaitTimeout, free_port
from harness.servers import LoggedServer

DEBIAN_BINARY = "/usr/bin/prometheus-alertmanager"
LOG_TAIL = 4000


def binary() -> str | None:
    """The Alertmanager executable, or None when it is not installed (Debian
    names it ``prometheus-alertmanager``; upstream ``alertmanager``)."""
    for name in ("prometheus-alertmanager", "alertmanager"):
        found = shutil.which(name)
        if found:
            return found
    return DEBIAN_BINARY if Path(DEBIAN_BINARY).exists() else None


class AlertmanagerError(RuntimeError):
    """Alertmanager did not start, or did not answer as expected."""


def webhook_config(webhook_url: str) -> str:
    """A configuration sending every alert to ``webhook_url`` at once: no
    grouping wait, resolved alerts sent, nothing repeated within the hour."""
    return json.dumps(
        {
            "route": {
                "receiver": "webhook",
                "group_by": ["alertname", "cluster"],
                "group_wait": "0s",
                "group_interval": "1s",
                "repeat_interval": "1h",
            },
            "receivers": [
                {
                    "name": "webhook",
                    "webhook_configs": [{"url": webhook_url, "send_resolved": True}],
                }
            ],
        },
        indent=2,
    )  # JSON is YAML: no YAML writer needed


class Alertmanager(LoggedServer):
    """One Alertmanager process (see module docstring)."""

    def __init__(
        self,
        directory: Path,
        *,
        webhook_url: str | None = None,
        config: str | None = None,
        executable: str | None = None,
    ) -> None:
        if (webhook_url is None) == (config is None):
            raise ValueError("give webhook_url or config, not both")
        self.dir = directory
        self.config_text = (
            config if config is not None else webhook_config(webhook_url or "")
        )
        self.executable = executable or binary() or DEBIAN_BINARY
        self.port = 0
        self.proc: processes.Process | None = None
        self.log_path = directory / "alertmanager.log"
        self.config_path = directory / "alertmanager.yml"

    @property
    def url(self) -> str:
        """Base URL of its API and UI."""
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 30) -> Alertmanager:
        """Start it; return once it answers ``/-/ready``."""
        self.dir.mkdir(parents=True, exist_ok=True)
        self.config_path.write_text(self.config_text)
        # Another process may take the free port before Alertmanager binds it.
        for attempt in range(3):
            before = len(self.log())
            self._launch()
            try:
                processes.wait_for_http(
                    f"{self.url}/-/ready", timeout, status={200}, watched=[self.proc]
                )
                return self
            except (ProcessError, WaitTimeout) as exc:
                taken = "address already in use" in self.log()[before:]
                self.stop()
                if not taken or attempt == 2:
                    raise AlertmanagerError(
                        f"{exc}\n--- Alertmanager log ---\n{self.log(LOG_TAIL)}"
                    ) from None
        raise AssertionError("unreachable")  # pragma: no cover

    def _launch(self) -> None:
        self.port = free_port()
        data = self.dir / "data"
        data.mkdir(exist_ok=True)
        self.proc = processes.start(
            "alertmanager",
            [
                self.executable,
                f"--config.file={self.config_path}",
                f"--storage.path={data}",
                f"--web.listen-address=127.0.0.1:{self.port}",
                # No gossip port: one instance, and nothing else to bind.
                "--cluster.listen-address=",
            ],
            self.dir,
            cwd=self.dir,
        )

    # -- its API ----------------------------------------------------------------
    def alerts(self) -> list[dict[str, Any]]:
        """The alerts it holds now (``GET /api/v2/alerts``)."""
        found: list[dict[str, Any]] = self._get("/api/v2/alerts")
        return found

    def silences(self) -> list[dict[str, Any]]:
        """Its silences, expired ones included (``GET /api/v2/silences``)."""
        found: list[dict[str, Any]] = self._get("/api/v2/silences")
        return found

    def _get(self, path: str) -> Any:
        try:
            with urllib.request.urlopen(self.url + path, timeout=10) as reply:  # noqa: S310 - loopback
                return json.load(reply)
        except urllib.error.HTTPError as exc:
            raise AlertmanagerError(f"{path}: {exc.code} {exc.read()[:500]!r}") from exc


@dataclass(frozen=True)
class Notification:
    """One POST of Alertmanager's webhook: its JSON body and when it came
    (``time.time()``)."""

    body: dict[str, Any]
    received_at: float

    @property
    def status(self) -> str:
        """``firing`` or ``resolved`` (the group's status)."""
        return str(self.body.get("status", ""))

    @property
    def alerts(self) -> list[dict[str, Any]]:
        """The alerts of the group, each with ``labels`` and ``annotations``."""
        found: list[dict[str, Any]] = self.body.get("alerts", [])
        return found


class WebhookReceiver:
    """Records what Alertmanager's webhook sends (see module docstring)."""

    def __init__(self) -> None:
        self.notifications: list[Notification] = []
        self._lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                with receiver._lock:
                    receiver.notifications.append(Notification(body, time.time()))
                self.send_response(200)
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass  # the test's output is for the test

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="webhook-receiver", daemon=True
        )

    @property
    def url(self) -> str:
        """Where Alertmanager should POST."""
        return f"http://127.0.0.1:{self._server.server_address[1]}/"

    def start(self) -> WebhookReceiver:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def wait_for(
        self, matches: Callable[[Notification], bool], what: str, timeout: float = 60
    ) -> Notification:
        """The first notification that ``matches``, waiting up to ``timeout`` s."""

        def found() -> Notification | None:
            with self._lock:
                return next((n for n in self.notifications if matches(n)), None)

        result: Notification = processes.wait_until(found, what, timeout)
        return result
