"""A Prometheus configuration that scrapes simcluster's npu-exporters.

One job, ``npu-exporter``, finding its targets by HTTP service discovery at
the simulator's ``/exporter/targets`` (each target carries its ``node`` label,
scheme and metrics path). Over HTTPS both the discovery and the scrapes trust
the simulator's own certificate (``ca_file``), as a kubeconfig does.

Used by the test harness (``harness/prometheus.py``) and by the demo::

    python -m simcluster.promconfig --kubeconfig var/simcluster.kubeconfig \\
        --out var/prometheus.yml --scrape-interval 5s
"""

from __future__ import annotations

import argparse
import base64
import sys
from pathlib import Path
from typing import Any

import yaml

from simcluster.exporter import TARGETS_PATH

JOB = "npu-exporter"


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
) -> str:
    """The configuration text; ``sim_url`` is the simulator's base URL."""
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
    return yaml.safe_dump(config, sort_keys=False)


def from_kubeconfig(kubeconfig: Path, out: Path, scrape_interval: float) -> Path:
    """Write ``out`` (and the simulator's CA next to it) for the cluster of a
    kubeconfig simcluster wrote; returns ``out``."""
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
    args = parser.parse_args(argv)
    from_kubeconfig(args.kubeconfig, args.out, seconds(args.scrape_interval))
    return 0


if __name__ == "__main__":
    sys.exit(main())
