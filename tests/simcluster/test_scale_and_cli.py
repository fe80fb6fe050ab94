"""The scale scenario, the command line and the benchmark entry point."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from kubernetes import client

from apps.inventory.hami.annotations import parse_node_register, parse_pod_devices
from simcluster import resources
from simcluster.server import SimCluster

ROOT = Path(__file__).resolve().parents[2]


def test_scale_scenario_is_consistent(sim_factory, tmp_path: Path) -> None:
    sim = sim_factory("scale", nodes=40, pods=1000, slice_pods=600)
    core = client.CoreV1Api(sim.kubernetes_client(tmp_path / "kc"))
    nodes = core.list_node().items
    assert len(nodes) == 40
    chips = {}
    for node in nodes:
        for key, value in node.metadata.annotations.items():
            if key.startswith("hami.io/node-register-"):
                chips.update({d.id: d for d in parse_node_register(value)})
    assert {d.type for d in chips.values()} == {"Ascend310P", "Ascend910B4"}
    response = core.list_pod_for_all_namespaces(_preload_content=False)
    pods = json.loads(response.data)["items"]
    used, mem = Counter(), Counter()
    slices = 0
    for pod in pods:
        for key, value in (pod["metadata"].get("annotations") or {}).items():
            if key.endswith("-devices-allocated"):
                slices += 1
                for device in parse_pod_devices(value)[0]:
                    used[device.uuid] += 1
                    mem[device.uuid] += device.usedmem
    assert slices == 600
    assert len(pods) == 1002
    for uuid, count in used.items():
        assert chips[uuid].health
        assert count <= chips[uuid].count
        assert mem[uuid] <= chips[uuid].devmem
    page = core.list_pod_for_all_namespaces(limit=500)
    assert len(page.items) == 500
    assert page.metadata.remaining_item_count == 502


@pytest.mark.slow
def test_the_full_scale_scenario_builds() -> None:
    # How long it takes is a benchmark's figure (bench/simcluster_list.py
    # prints the build time), not a test's: CI's machine is busy.
    sim = SimCluster("scale", port=0, tls=False, device_plugin=False)
    assert sim.store.count(resources.POD) == 30002  # + the two scheduler pods


@pytest.mark.processes
def test_cli_starts_writes_kubeconfig_and_stops_on_sigterm(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kc"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "simcluster",
            "--port",
            "0",
            "--kubeconfig",
            str(kubeconfig),
            "--scenario",
            "empty",
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        line = proc.stdout.readline() if proc.stdout else ""
        assert "listening on https://127.0.0.1:" in line
        proc.stdout.readline()  # the kubeconfig line
        result = subprocess.run(
            ["kubectl", "--kubeconfig", str(kubeconfig), "get", "ns", "-o", "name"],
            capture_output=True,
            text=True,
            timeout=20,
            check=False,
        )
        assert "namespace/default" in result.stdout, result.stderr
    finally:
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=10)
    assert proc.returncode == 0
    assert "stopped" in out
