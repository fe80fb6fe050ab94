"""Helpers of the exporter tests: slice pods with a workload, and a scrape."""

from __future__ import annotations

import ssl
import urllib.request
from collections.abc import Callable
from typing import Any

from kubernetes import client
from prometheus_client.parser import text_string_to_metric_families

from simcluster.profiles import WORKLOAD_ANNOTATION

NODE_310P = "npu-node-310p-01"
NODE_910B = "npu-node-910b-01"
CHIP0_310P = "52E6B438-F2A74DE4-269E0D37-6513270E-A6A3A450"  # the fixture's vir01
CHIP1_310P = "0C5C7FD0-128B2F33-D23F0824-892F902B-1818E811"
CHIP2_310P = "5D9DC9F8-9531985D-0ED90475-E8E25D94-81E74EF5"
VIR01, VIR02, VIR04 = 3072, 6144, 12288  # MB of the 310P3 templates

Sample = tuple[dict[str, str], float]


def slice_pod(
    name: str,
    workload: str | None,
    *,
    memory: int = VIR02,
    chip: str = CHIP1_310P,
    containers: int = 1,
) -> dict[str, Any]:
    """A 310P slice pod pinned to ``chip`` (HAMi's scheduler honours the pin)."""
    annotations = {"hami.io/use-Ascend310P-uuid": chip}
    if workload is not None:
        annotations[WORKLOAD_ANNOTATION] = workload
    limits = {"huawei.com/Ascend310P": "1", "huawei.com/Ascend310P-memory": str(memory)}
    return {
        "metadata": {"name": name, "annotations": annotations},
        "spec": {
            "schedulerName": "hami-scheduler",
            "containers": [
                {
                    "name": f"worker-{n}",
                    "image": "ascend:latest",
                    "resources": {"limits": limits, "requests": dict(limits)},
                }
                for n in range(containers)
            ],
        },
    }


def run_pod(
    core: client.CoreV1Api, wait_for: Callable[..., Any], body: dict[str, Any]
) -> client.V1Pod:
    """Create a pod in ``default`` and wait until it runs on its vNPU."""
    core.create_namespaced_pod("default", body)
    name = body["metadata"]["name"]

    def running() -> client.V1Pod | None:
        pod = core.read_namespaced_pod(name, "default")
        phase = (pod.metadata.annotations or {}).get("hami.io/bind-phase")
        return pod if pod.status.phase == "Running" and phase == "success" else None

    pod: client.V1Pod = wait_for(running)
    return pod


def scrape_text(sim: Any, path: str) -> tuple[int, str, str]:
    """GET ``path`` without a token: (status, content type, body)."""
    context = None
    if sim.certificate is not None:
        context = ssl.create_default_context(cadata=sim.certificate.cert_pem.decode())
    request = urllib.request.Request(sim.url + path)  # noqa: S310 - the sim
    try:
        with urllib.request.urlopen(request, timeout=5, context=context) as reply:  # noqa: S310
            return reply.status, reply.headers["Content-Type"], reply.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers["Content-Type"], exc.read().decode()


def scrape(sim: Any, node: str) -> dict[str, list[Sample]]:
    """A node's series, parsed as Prometheus' own client library parses them."""
    status, _, text = scrape_text(sim, f"/exporter/nodes/{node}/metrics")
    assert status == 200, text
    return {
        family.name: [(dict(s.labels), s.value) for s in family.samples]
        for family in text_string_to_metric_families(text)
    }


def of_pod(samples: list[Sample], pod: str) -> list[Sample]:
    """The samples of one pod."""
    return [s for s in samples if s[0].get("pod_name") == pod]


def of_chip(samples: list[Sample], index: int) -> list[Sample]:
    """The samples of one chip index."""
    return [s for s in samples if s[0]["id"] == str(index)]
