"""Fixtures: a simulated cluster per test, registered and synced once, and kubectl on it."""

from __future__ import annotations

import functools
import json
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from simcluster.server import SimCluster
from tests import polling

CM = ("hami-scheduler-device", "kube-system")


@pytest.fixture(autouse=True)
def _control_plane_settings(settings):
    # The guide scenario's object names, whatever the developer's environment
    # says (and settings.test missed them while base.py exported __all__ early).
    settings.VOLCANO_SCHEDULER_CONFIGMAP = "volcano-system/volcano-scheduler-configmap"
    settings.DEVICE_PLUGIN_DAEMONSET = "kube-system/hami-ascend-device-plugin"
    settings.WATCHED_DEPLOYMENTS = [
        "volcano-system/volcano-scheduler",
        "kube-system/hami-scheduler",
    ]
    settings.SYNC_STALE_AFTER_SECONDS = 90


@pytest.fixture
def kubeconfig(sim: SimCluster, tmp_path: Path) -> Path:
    return sim.write_kubeconfig(tmp_path / "kubeconfig")


@pytest.fixture
def kubectl(kubeconfig: Path) -> Callable[..., str]:
    """``kubectl(*args, stdin=None)``: run kubectl on the sim; fail the test on exit != 0."""

    def run(*args: str, stdin: str | None = None) -> str:
        done = subprocess.run(
            ["kubectl", "--kubeconfig", str(kubeconfig), *args],
            capture_output=True,
            text=True,
            input=stdin,
            timeout=30,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    return run


@pytest.fixture
def live_cm(kubectl: Callable[..., str]) -> Callable[[], dict[str, Any]]:
    """The device-config ConfigMap as ``kubectl get cm -o json`` shows it."""

    def read() -> dict[str, Any]:
        return json.loads(kubectl("get", "cm", CM[0], "-n", CM[1], "-o", "json"))

    return read


@pytest.fixture
def live_text(live_cm: Callable[[], dict[str, Any]]) -> Callable[[], str]:
    return lambda: live_cm()["data"]["device-config.yaml"]


@pytest.fixture
def hand_edit(kubectl: Callable[..., str]) -> Callable[[str], None]:
    """Replace the ConfigMap's text the way a person would, with ``kubectl patch``."""

    def edit(text: str) -> None:
        patch = json.dumps({"data": {"device-config.yaml": text}})
        kubectl("patch", "cm", CM[0], "-n", CM[1], "--type", "merge", "-p", patch)

    return edit


# Versions that read the wrapper shape of vnpus (Volcano v1.15.1 reads both).
WRAPPER_READERS = (
    (
        "daemonset/hami-ascend-device-plugin",
        "device-plugin",
        "projecthami/ascend-device-plugin:v1.3.0",
    ),
    ("deployment/hami-scheduler", "hami-scheduler", "projecthami/hami:v2.10.0"),
)


@pytest.fixture
def set_images(kubectl: Callable[..., str]) -> Callable[..., None]:
    """``set_images(readers)``: ``kubectl set image`` on each (workload, container, image).

    With no argument: the device plugin and HAMi scheduler versions that read
    the wrapper shape, as a cluster that has the wrapper runs them (the
    publish guard refuses to write a shape a running component cannot parse).
    """

    def run(readers: tuple[tuple[str, str, str], ...] = WRAPPER_READERS) -> None:
        for workload, container, image in readers:
            kubectl(
                "set", "image", workload, "-n", "kube-system", f"{container}={image}"
            )

    return run


@pytest.fixture
def connect(db, kubeconfig: Path) -> Callable[[], Any]:
    """Register the sim as cluster ``sim`` and sync it once (the first sync adopts)."""

    def make() -> Any:
        from apps.inventory import services
        from apps.inventory.choices import ConnectionKind
        from apps.inventory.sync.engine import sync_once

        cluster = services.cluster_create(
            actor=None,
            name="sim",
            connection=ConnectionKind.KUBECONFIG,
            kubeconfig=Path(kubeconfig).read_text(),
        )
        sync_once(cluster)
        cluster.refresh_from_db()
        return cluster

    return make


@pytest.fixture
def cluster(connect: Callable[[], Any]) -> Any:
    return connect()


@pytest.fixture
def resync(cluster: Any) -> Callable[[], None]:
    def run() -> None:
        from apps.inventory.sync.engine import sync_once

        sync_once(cluster)

    return run


@pytest.fixture
def url(cluster: Any) -> Callable[[str], str]:
    return lambda action: f"/api/clusters/{cluster.pk}/{action}/"


@pytest.fixture
def wait_until() -> Callable[..., Any]:
    """``wait_until(predicate, timeout=10)``: poll until truthy, else fail the test."""
    return functools.partial(polling.wait_for, timeout=10.0, interval=0.1)


@pytest.fixture
def later_second() -> Callable[[], None]:
    """Wait until the clock is in a later whole second than now: Kubernetes
    stamps whole seconds, so a change in the second a pod started is not after
    it. (Half a second on average, where a fixed sleep took more than one.)"""

    def wait() -> None:
        second = int(time.time())
        polling.wait_for(
            lambda: int(time.time()) > second,
            "a later whole second",
            timeout=5,
            interval=0.01,
        )

    return wait
