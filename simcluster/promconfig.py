"""A Prometheus configuration that scrapes simcluster's npu-exporters.

One job, ``npu-exporter``, finding its targets by HTTP service discovery at
the simulator's ``/exporter/targets`` (each target carries its ``node`` label,
scheme and metrics path). Over HTTPS both the discovery and the scrapes trust
the simulator's own certificate (``ca_file``), as a kubeconfig does.

Optionally the portal too, as a deployment's Prometheus sees it: a second job,
``vnpu-portal``, scraping the portal's ``/metrics`` with the bearer token in
``metrics_token_file`` (``METRICS_TOKEN``), the alert rules of ``rule_files``
evaluated, and alerts sent to the Alertmanager at ``alertmanager_url``.

Used by the test harness (``harness/prometheus.py``) and by the demo::

    python -m simcluster.promconfig --kubeconfig var/simcluster.kubeconfig \\
        --out var/prometheus.yml --scrape-interval 5s \\
        --portal-url http://127.0.0.1:8000 --metrics-token-file var/metrics-token \\
        --rule-file var/vnpu-alerts.rules.yml --alertmanager-url http://127.0.0.1:9093
"""

from __future__ import annotations

import argparse
import base64
import sys
import urllib.parse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from simcluster.exporter import TARGETS_PATH

JOB = "npu-exporter"
PORTAL_JOB = "vnpu-portal"


def seconds(text: str) -> float:
    """``5s``, ``1m``, ``500ms`` or a plain number of seconds, as a float."""
    for suffix, factor in (("ms", 0.001), ("s", 1.0), ("m", 60.0)):
        if text.endswith(suffix):
            return float(text[: -len(suffix)]) * factor
    return float(text)


def duration(value: float) -> str:
    """Seconds as a Prometheus duration (``1s``, ``500ms``)."""
    millis = round(value * 1000)
    return f"{millis // 1000}s" if millis % 1000 == 0 else f"{millis}ms"


def render(
    sim_url: str,
    *,
    ca_file: str | Path | None = None,
    scrape_interval: float = 1.0,
    refresh_interval: float = 1.0,
    portal_url: str | None = None,
    metrics_token_file: str | Path | None = None,
    rule_files: Sequence[str | Path] = (),
    alertmanager_url: str | None = None,
) -> str:
    """The configuration text; ``sim_url`` is the simulator's base URL, and
    the portal's job, rules and Alertmanager come when given (see the module
    docstring); rules are evaluated as often as targets are scraped."""
    tls: dict[str, Any] = {"ca_file": str(ca_file)} if ca_file else {}
    discovery: dict[str, Any] = {
        "url": sim_url.rstrip("/") + TARGETS_PATH,
        "refresh_interval": duration(refresh_interval),
    }
    job: dict[str, Any] = {"job_name": JOB, "http_sd_configs": [discovery]}
    if tls:
        discovery["tls_config"] = tls
        job["tls_config"] = dict(tls)  # a copy: no YAML anchor in the file
    config = {
        "global": {
            "scrape_interval": duration(scrape_interval),
            # Prometheus refuses a timeout longer than the interval.
            "scrape_timeout": duration(min(scrape_interval, 10.0)),
            "evaluation_interval": duration(scrape_interval),
        },
        "scrape_configs": [job],
    }
    if portal_url:
        config["scrape_configs"].append(_portal_job(portal_url, metrics_token_file))
    if rule_files:
        config["rule_files"] = [str(path) for path in rule_files]
    if alertmanager_url:
        config["alerting"] = {"alertmanagers": [_static(alertmanager_url)]}
    return yaml.safe_dump(config, sort_keys=False)


def _static(url: str) -> dict[str, Any]:
    """A scheme and one static target (``host:port``) from a base URL."""
    parts = urllib.parse.urlsplit(url)
    found: dict[str, Any] = {
        "scheme": parts.scheme or "http",
        "static_configs": [{"targets": [parts.netloc]}],
    }
    if parts.path.strip("/"):
        found["path_prefix"] = parts.path
    return found


def _portal_job(url: str, token_file: str | Path | None) -> dict[str, Any]:
    """The portal's ``/metrics``, with its bearer token read from a file
    (never written into the configuration)."""
    job: dict[str, Any] = {"job_name": PORTAL_JOB, "metrics_path": "/metrics"}
    job.update(_static(url))
    job.pop("path_prefix", None)
    if token_file:
        job["authorization"] = {"type": "Bearer", "credentials_file": str(token_file)}
    return job


def from_kubeconfig(
    kubeconfig: Path, out: Path, scrape_interval: float, **portal: Any
) -> Path:
    """Write ``out`` (and the simulator's CA next to it) for the cluster of a
    kubeconfig simcluster wrote; returns ``out``. ``portal``: the portal's
    keyword arguments of :func:`render`."""
    document = yaml.safe_load(kubeconfig.read_text())
    cluster = document["clusters"][0]["cluster"]
    ca_file: Path | None = None
    if cluster.get("certificate-authority-data"):
        ca_file = out.with_name(out.stem + "-simcluster-ca.pem")
        ca_file.write_bytes(base64.b64decode(cluster["certificate-authority-data"]))
    out.write_text(
        render(
            cluster["server"],
            ca_file=ca_file.resolve() if ca_file else None,
            scrape_interval=scrape_interval,
            refresh_interval=scrape_interval,
            **portal,
        )
    )
    return out


def main(argv: list[str] | None = None) -> int:
    """Command line: write the configuration for a kubeconfig's simulator."""
    parser = argparse.ArgumentParser(
        prog="python -m simcluster.promconfig",
        description="Write a Prometheus configuration scraping a simcluster.",
    )
    parser.add_argument("--kubeconfig", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--scrape-interval", default="5s")
    parser.add_argument("--portal-url", help="scrape the portal's /metrics too")
    parser.add_argument(
        "--metrics-token-file", type=Path, help="a file holding METRICS_TOKEN"
    )
    parser.add_argument(
        "--rule-file", action="append", default=[], type=Path, help="repeatable"
    )
    parser.add_argument("--alertmanager-url", help="where alerts are sent")
    args = parser.parse_args(argv)
    from_kubeconfig(
        args.kubeconfig,
        args.out,
        seconds(args.scrape_interval),
        portal_url=args.portal_url,
        metrics_token_file=(
            args.metrics_token_file.resolve() if args.metrics_token_file else None
        ),
        rule_files=[path.resolve() for path in args.rule_file],
        alertmanager_url=args.alertmanager_url,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
