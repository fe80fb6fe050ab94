"""Fixtures of the fault tests: a simulated cluster registered in the portal, and callers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from simcluster.server import SimCluster


@pytest.fixture(autouse=True)
def _control_plane_and_counters(settings):
    # The guide scenario's object names, whatever the environment says.
    settings.VOLCANO_SCHEDULER_CONFIGMAP = "volcano-system/volcano-scheduler-configmap"
    settings.DEVICE_PLUGIN_DAEMONSET = "kube-system/hami-ascend-device-plugin"
    settings.WATCHED_DEPLOYMENTS = [
        "volcano-system/volcano-scheduler",
        "kube-system/hami-scheduler",
    ]
    from django.core.cache import cache

    cache.clear()


@pytest.fixture
def sim_options() -> dict:
    return {"seed": 7}  # the same faults every run


@pytest.fixture
def kubeconfig(sim: SimCluster, tmp_path: Path) -> Path:
    return sim.write_kubeconfig(tmp_path / "kubeconfig")


@pytest.fixture
def sim_cluster(db, kubeconfig: Path) -> Any:
    """The sim registered as cluster ``sim`` and synced once (its config adopted)."""
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
