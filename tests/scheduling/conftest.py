"""Fixtures of the scheduling tests: a small cluster in the database, a fake API server.

Nothing here is autouse: the allocator's pure tests (tests/scheduling/allocator)
share this directory and must not load Django fixtures.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.scheduling.helpers import FakeOps, World


@pytest.fixture
def isolated(settings, tmp_path):
    """Locks in a private directory; throttle counters reset; no auto-approval."""
    from django.core.cache import cache

    settings.LOCK_DIR = str(tmp_path / "locks")
    settings.PREEMPTION_AUTO_APPROVE_PRIORITY_GAP = None
    settings.REQUEST_PENDING_TTL = 0
    cache.clear()
    return settings


@pytest.fixture
def fake_ops(monkeypatch) -> FakeOps:
    """Every cluster call of scheduling goes to one FakeOps."""
    ops = FakeOps()
    monkeypatch.setattr("apps.scheduling.kube.ops_for", lambda cluster: ops)
    return ops


@pytest.fixture
def world(guide_cluster, isolated) -> World:
    """The guide's chip types, three priority classes, no chips yet.

    The default queue lets pods run in ``ci``, the namespace of ``World.request``
    (the pod policy's default is ``default`` only).
    """
    w = World(guide_cluster)
    w.priority_classes()
    w.queue("default", namespaces=("ci", "default"))
    return w


@pytest.fixture
def no_auto_pass(monkeypatch):
    """Submissions and cancels do not start a pass on commit (the test runs them).

    Needed with ``transaction=True``: there every commit runs its callbacks,
    and eager Celery would run the pass inside ``request_create``.
    """
    monkeypatch.setattr(
        "apps.scheduling.services.followups.pass_after_commit", lambda cluster_id: None
    )
    monkeypatch.setattr(
        "apps.scheduling.services.followups.reconcile_after_commit",
        lambda cluster_id: None,
    )


@pytest.fixture
def sim_core(sim, tmp_path):
    """A CoreV1Api on the simulator (admin)."""
    from kubernetes import client

    return client.CoreV1Api(sim.kubernetes_client(tmp_path / "kc-test"))


@pytest.fixture
def live(sim, tmp_path, isolated):
    """Cluster ``sim`` in the database, synced once, with a World to build on."""
    from apps.inventory.choices import ConnectionKind
    from apps.inventory.services import cluster_create
    from apps.inventory.sync.engine import sync_once

    kubeconfig = sim.write_kubeconfig(tmp_path / "kubeconfig")
    cluster = cluster_create(
        actor=None,
        name="sim",
        connection=ConnectionKind.KUBECONFIG,
        kubeconfig=Path(kubeconfig).read_text(),
    )
    sync_once(cluster)
    return World(cluster)
