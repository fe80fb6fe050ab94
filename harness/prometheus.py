"""A real Prometheus (Debian's ``prometheus`` binary) scraping a simcluster.

``Prometheus(sim, directory).start()`` writes a configuration with one job
that finds the simulator's node exporters by HTTP service discovery
(``simcluster.promconfig``), keeps its TSDB and log in ``directory``, listens
on a free port of 127.0.0.1, and returns once it is ready and has scraped
every target once. ``query`` runs an instant query through the HTTP API;
``stop`` terminates it (then kills it). Every failure to start or to wait
carries the end of its log.

With ``portal=PortalTarget(url, token)`` it scrapes the portal's ``/metrics``
too (bearer ``METRICS_TOKEN``), evaluates the alert rules of ``rules`` (the
text of a rules file) at each scrape interval and sends the alerts to
``alertmanager_url``: a deployment's monitoring, in small.

The pytest fixture ``prometheus`` (tests/conftest.py) runs one per test on
the ``sim`` fixture's simulator.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import ssl
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness import processes
from harness.processes import ProcessError, WaitTimeout, free_port
from harness.servers import LoggedServer
from simcluster import promconfig

DEBIAN_BINARY = "/usr/bin/prometheus"
LOG_TAIL = 4000


def binary() -> str | None:
    """The ``prometheus`` executable, or None when it is not installed."""
    found = shutil.which("prometheus")
    if found:
        return found
    return DEBIAN_BINARY if Path(DEBIAN_BINARY).exists() else None


class PrometheusError(RuntimeError):
    """Prometheus did not start, or did not do what was waited for."""


@dataclass(frozen=True)
class PortalTarget:
    """The portal to scrape: its base URL and its ``METRICS_TOKEN``."""

    url: str
    token: str


class Prometheus(LoggedServer):
    """One Prometheus process scraping ``sim``'s exporters (see module docstring)."""

    def __init__(
        self,
        sim: Any,
        directory: Path,
        *,
        scrape_interval: float = 1.0,
        executable: str | None = None,
        portal: PortalTarget | None = None,
        rules: str | None = None,
        alertmanager_url: str | None = None,
    ) -> None:
        self.sim = sim
        self.portal = portal
        self.rules = rules
        self.alertmanager_url = alertmanager_url
        self.dir = directory
        self.scrape_interval = scrape_interval
        self.executable = executable or binary() or DEBIAN_BINARY
        self.port = 0
        self.proc: processes.Process | None = None
        self.log_path = directory / "prometheus.log"
        self.config_path = directory / "prometheus.yml"

    @property
    def url(self) -> str:
        """Base URL of its HTTP API and UI."""
        return f"http://127.0.0.1:{self.port}"

    # -- lifecycle ------------------------------------------------------------
    def start(self, timeout: float = 30) -> Prometheus:
        """Start it; return once it is ready and has scraped every target."""
        self.dir.mkdir(parents=True, exist_ok=True)
        self._write_config()
        # Another process may take the free port before Prometheus binds it.
        for attempt in range(3):
            before = len(self.log())
            self._launch()
            try:
                self._wait(self._ready, "Prometheus to be ready", timeout)
                break
            except PrometheusError:
                taken = "address already in use" in self.log()[before:]
                self.stop()
                if not taken or attempt == 2:
                    raise
        self.wait_for_scrape(timeout)
        return self

    def _write_config(self) -> None:
        ca_file = None
        if self.sim.certificate is not None:
            ca_file = self.dir / "simcluster-ca.pem"
            ca_file.write_bytes(self.sim.certificate.cert_pem)
        token_file = rule_file = None
        if self.portal is not None:
            token_file = self.dir / "metrics-token"
            token_file.write_text(self.portal.token)
            token_file.chmod(0o600)
        if self.rules is not None:
            rule_file = self.dir / "rules.yml"
            rule_file.write_text(self.rules)
        self.config_path.write_text(
            promconfig.render(
                self.sim.url,
                ca_file=ca_file,
                scrape_interval=self.scrape_interval,
                refresh_interval=1.0,
                portal_url=self.portal.url if self.portal else None,
                metrics_token_file=token_file,
                rule_files=[rule_file] if rule_file else [],
                alertmanager_url=self.alertmanager_url,
            )
        )

    def _launch(self) -> None:
        self.port = free_port()
        tsdb = self.dir / "tsdb"
        tsdb.mkdir(exist_ok=True)
        self.proc = processes.start(
            "prometheus",
            [
                self.executable,
                f"--config.file={self.config_path}",
                f"--storage.tsdb.path={tsdb}",
                f"--web.listen-address=127.0.0.1:{self.port}",
                "--storage.tsdb.retention.time=1d",
            ],
            self.dir,
            cwd=self.dir,
        )

    # -- waiting --------------------------------------------------------------
    def _wait(self, check: Any, what: str, timeout: float) -> Any:
        try:
            return processes.wait_until(
                check, what, timeout, watched=[self.proc] if self.proc else []
            )
        except (ProcessError, WaitTimeout) as exc:
            raise PrometheusError(
                f"{exc}\n--- Prometheus log ---\n{self.log(LOG_TAIL)}"
            ) from None

    def _ready(self) -> bool:
        try:
            with urllib.request.urlopen(f"{self.url}/-/ready", timeout=2) as reply:  # noqa: S310 - loopback
                return bool(reply.status == 200)
        except (OSError, urllib.error.URLError):
            return False

    def targets(self) -> list[dict[str, Any]]:
        """The simulator's service-discovery document, as Prometheus reads it."""
        context = None
        if self.sim.certificate is not None:
            context = ssl.create_default_context(
                cadata=self.sim.certificate.cert_pem.decode()
            )
        url = self.sim.url + "/exporter/targets"
        with urllib.request.urlopen(url, timeout=5, context=context) as reply:  # noqa: S310 - the sim
            found: list[dict[str, Any]] = json.load(reply)
            return found

    def wait_for_scrape(self, timeout: float = 30) -> None:
        """Wait until every node's exporter (and the portal, when scraped) was
        scraped successfully (``up`` 1)."""
        nodes = {t["labels"]["node"] for t in self.targets()}
        portal = self.portal is not None

        def all_up() -> bool:
            with contextlib.suppress(PrometheusError, OSError):
                up = self.query(f'up{{job="{promconfig.JOB}"}}')
                exporters = {
                    r["metric"].get("node") for r in up if r["value"][1] == "1"
                } >= nodes
                if not portal:
                    return exporters
                mine = self.query(f'up{{job="{promconfig.PORTAL_JOB}"}} == 1')
                return exporters and bool(mine)
            return False

        what = f"a first scrape of {sorted(nodes)}" + (
            " and the portal" if portal else ""
        )
        self._wait(all_up, what, timeout)

    def wait_until(self, expr: str, timeout: float = 30) -> list[dict[str, Any]]:
        """Wait until the instant query ``expr`` has a result; return it."""
        found: list[dict[str, Any]] = self._wait(
            lambda: self.query(expr), f"a result for {expr}", timeout
        )
        return found

    # -- queries --------------------------------------------------------------
    def query(self, expr: str, at: float | None = None) -> list[dict[str, Any]]:
        """An instant query (at ``at``, epoch seconds, else now): the vector's
        samples, each ``{"metric": {...}, "value": [t, "v"]}``."""
        params = {"query": expr}
        if at is not None:
            params["time"] = f"{at:.3f}"
        url = f"{self.url}/api/v1/query?{urllib.parse.urlencode(params)}"
        try:
            with urllib.request.urlopen(url, timeout=10) as reply:  # noqa: S310 - loopback
                answer = json.load(reply)
        except urllib.error.HTTPError as exc:
            raise PrometheusError(f"{expr}: {exc.code} {exc.read()[:500]!r}") from exc
        if answer.get("status") != "success":
            raise PrometheusError(f"{expr}: {answer}")
        result: list[dict[str, Any]] = answer["data"]["result"]
        return result
