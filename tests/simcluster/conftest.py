"""Fixtures: a fresh simulated cluster per test, its kubeconfig, clients and kubectl."""

from __future__ import annotations

import functools
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client

from tests import polling

# Without pytest-django nothing puts the repository root on sys.path.
ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from simcluster.server import SimCluster  # noqa: E402

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"


@pytest.fixture
def kubeconfig(sim: SimCluster, tmp_path: Path) -> Path:
    """Path of a kubeconfig for ``sim`` (contexts simcluster and readonly)."""
    return sim.write_kubeconfig(tmp_path / "kubeconfig")


@pytest.fixture
def api_client(sim: SimCluster, tmp_path: Path) -> client.ApiClient:
    """An admin ``ApiClient``."""
    return sim.kubernetes_client(tmp_path / "kc-admin")


@pytest.fixture
def core(api_client: client.ApiClient) -> client.CoreV1Api:
    """CoreV1Api as admin."""
    return client.CoreV1Api(api_client)


@pytest.fixture
def kubectl(kubeconfig: Path) -> Callable[..., subprocess.CompletedProcess[str]]:
    """Run kubectl against ``sim``; returns the completed process (check=False)."""

    def run(
        *args: str, timeout: float = 30, stdin: str | None = None
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["kubectl", "--kubeconfig", str(kubeconfig), *args],
            capture_output=True,
            text=True,
            timeout=timeout,
            input=stdin,
            check=False,
        )

    return run


@pytest.fixture
def wait_for() -> Callable[..., Any]:
    """``wait_for(predicate, timeout=30)``: poll until truthy; return it or fail.

    30 s, not the 5 s it was: a deadline is a failure only when the thing never
    happens, and on a busy CI machine the simulator's threads may wait seconds
    for a core (a wait that passes returns as soon as it is true)."""
    return functools.partial(polling.wait_for, timeout=30.0, interval=0.05)


@pytest.fixture
def raw(sim: SimCluster, api_client: client.ApiClient) -> Callable[..., Any]:
    """``raw(method, path, body=None, headers=None, token=None)`` → (status, JSON).

    Goes through the client's connection pool without retries (urllib3 would otherwise
    retry 429/503 answers that carry Retry-After).
    """

    def call(
        method: str,
        path: str,
        body: Any = None,
        headers: dict[str, str] | None = None,
        token: str | None = None,
    ) -> tuple[int, Any]:
        url = api_client.configuration.host + path
        all_headers = {
            "Authorization": f"Bearer {token or sim.tokens.admin}",
            "Content-Type": "application/json",
            **(headers or {}),
        }
        data = json.dumps(body) if body is not None else None
        response = api_client.rest_client.pool_manager.request(
            method,
            url,
            body=data,
            headers=all_headers,
            preload_content=True,
            retries=False,
        )
        text = response.data.decode()
        return response.status, (json.loads(text) if text.startswith("{") else text)

    return call
