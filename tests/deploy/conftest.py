"""Fixtures for the deployment tests: a simulated cluster and kubectl on it."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from simcluster.server import SimCluster

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
DOCKER = ROOT / "docker"


@pytest.fixture
def kubectl(
    sim: SimCluster, tmp_path: Path
) -> Callable[..., subprocess.CompletedProcess[str]]:
    """``kubectl(*args)`` against ``sim`` as its admin; returns the finished process."""
    kubeconfig = sim.write_kubeconfig(tmp_path / "kubeconfig")

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["kubectl", "--kubeconfig", str(kubeconfig), *args],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )

    return run
