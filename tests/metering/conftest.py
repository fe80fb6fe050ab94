"""A simulated cluster synced into the portal, for the usage and cost tests."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.management import call_command

from apps.inventory.choices import ConnectionKind
from apps.inventory.services import cluster_create


@pytest.fixture
def synced(sim, tmp_path, db):
    """Cluster ``sim`` (the guide's two nodes), synced once."""
    kubeconfig = sim.write_kubeconfig(tmp_path / "kubeconfig")
    cluster = cluster_create(
        actor=None,
        name="sim",
        connection=ConnectionKind.KUBECONFIG,
        kubeconfig=Path(kubeconfig).read_text(),
    )
    call_command("sync", "--cluster", "sim", "--once")
    return cluster
