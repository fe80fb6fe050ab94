"""Fixtures of the tests that run against the real control plane (kubestack).

One stack per test session (starting one takes about 20 s): etcd, the real
kube-apiserver, kube-controller-manager, kube-scheduler, Volcano v1.15.1, KWOK
and the simulated device plugin, with the guide's two nodes. Tests leave it as
they found it: the pods they create are deleted by ``cleanup``.

These tests never skip: without the built binaries they fail naming the
command that builds them (``python -m kubestack build``, which
``scripts/test.sh`` runs first).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kubestack.stack import KubeStack

pytestmark = pytest.mark.realstack


@pytest.fixture(scope="session")
def kube_stack() -> Iterator[KubeStack]:
    """The guide's cluster on the real control plane, for the whole session."""
    # KUBESTACK_KEEP=DIR keeps the stack's logs and data there, to read after a failure.
    keep = os.environ.get("KUBESTACK_KEEP")
    stack = KubeStack(
        scenario="guide", seed=7, workdir=Path(keep) if keep else None, keep=bool(keep)
    ).start()
    yield stack
    stack.stop()


@pytest.fixture
def live_logs(kube_stack: KubeStack) -> float:
    """KWOK serves new pods' log files again (after an earlier test restarted
    the API server, its Logs informer may still be backing off: a follow
    would then get the whole log at the end); the seconds it took."""
    return kube_stack.wait_logs_served()


@pytest.fixture
def kube_core(kube_stack: KubeStack) -> Any:
    """CoreV1Api as the stack's admin."""
    from kubernetes import client

    return client.CoreV1Api(kube_stack.kubernetes_client())


@pytest.fixture
def stack_kubeconfig(kube_stack: KubeStack, tmp_path: Path) -> Path:
    """The admin kubeconfig, written for this test."""
    return kube_stack.write_kubeconfig(tmp_path / "kubeconfig")


@pytest.fixture
def cleanup(kube_stack: KubeStack) -> Iterator[list[tuple[str, str]]]:
    """Pods (namespace, name) to delete after the test, with the portal's own."""
    created: list[tuple[str, str]] = []
    yield created
    for namespace, name in created:
        kube_stack.kubectl(
            "delete",
            "pod",
            "-n",
            namespace,
            name,
            "--grace-period=0",
            "--force",
            "--ignore-not-found",
            "--wait=false",
            check=False,
        )
    _delete_portal_pods(kube_stack)
    _lift_node_locks(kube_stack)


def _delete_portal_pods(kube_stack: KubeStack) -> None:
    """Force-delete every pod the portal made (label ``vnpu-portal/request``)."""
    kube_stack.kubectl(
        "delete",
        "pods",
        "-A",
        "-l",
        "vnpu-portal/request",
        "--grace-period=0",
        "--force",
        "--wait=false",
        check=False,
    )


def _lift_node_locks(kube_stack: KubeStack) -> None:
    """Remove the node locks that pods deleted mid-allocation left behind.

    A scheduler locks a node while it writes a pod's devices: HAMi under
    ``hami.io/mutex.lock`` (the device plugin frees it after Allocate),
    Volcano under the chip type's name (``Ascend310P: <time>``). A pod
    force-deleted in between leaves the lock, and the scheduler then places
    nothing on that node for five minutes: on a busy machine the tests after
    it met such a lock and timed out (two at once in one CI run: the four
    fillers and the binpack test, on the 310P node). Between tests every pod
    is settled, so any lock left is stale.
    """
    from kubernetes import client

    from apps.inventory.hami.annotations import node_locks

    core = client.CoreV1Api(kube_stack.kubernetes_client())
    for node in core.list_node().items:
        stale = node_locks(node.metadata.annotations or {})
        if stale:
            core.patch_node(
                node.metadata.name,
                {"metadata": {"annotations": dict.fromkeys(stale)}},
            )


@pytest.fixture(autouse=True)
def _no_node_lock_left(request: pytest.FixtureRequest) -> None:
    """Every test on the shared stack starts with no node lock, whatever the
    test before it left (not every test uses ``cleanup``)."""
    if "kube_stack" in request.fixturenames:
        _lift_node_locks(request.getfixturevalue("kube_stack"))


@pytest.fixture
def real_cluster(
    db, kube_stack: KubeStack, stack_kubeconfig: Path, settings, tmp_path: Path
) -> Any:
    """Cluster ``real`` in the portal's database, pointing at the stack, synced once."""
    from apps.inventory.choices import ConnectionKind
    from apps.inventory.services import cluster_create
    from apps.inventory.sync.engine import sync_once

    settings.LOCK_DIR = str(tmp_path / "locks")
    cluster = cluster_create(
        actor=None,
        name="real",
        connection=ConnectionKind.KUBECONFIG,
        kubeconfig=Path(stack_kubeconfig).read_text(),
    )
    sync_once(cluster)
    yield cluster
    # The test's database is rolled back, so the portal forgets its pods and
    # any node hold a preemption left in place (a test may end mid-eviction):
    # remove them here, whether or not the test used ``cleanup``. A request's
    # pod left behind (bound by Volcano to the sick chip) once made the next
    # test on this stack find that chip occupied.
    _delete_portal_pods(kube_stack)
    _lift_portal_holds(kube_stack)
    _lift_node_locks(kube_stack)


def _lift_portal_holds(kube_stack: KubeStack) -> None:
    from kubernetes import client

    from apps.scheduling.pods import HOLD_TAINT_PREFIX

    core = client.CoreV1Api(kube_stack.kubernetes_client())
    for node in core.list_node().items:
        taints = node.spec.taints or []
        kept = [t for t in taints if not t.key.startswith(HOLD_TAINT_PREFIX)]
        if len(kept) != len(taints):
            core.patch_node(node.metadata.name, {"spec": {"taints": kept or None}})


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """The real-fault figures table (tests/realstack/test_faults.py), for CI logs."""
    from django.conf import settings

    from tests.realstack import figures

    if not figures.ROWS:
        return
    terminalreporter.section("real control plane: faults")
    resync = settings.CELERY_BEAT_SCHEDULE["sync-all-clusters"]["schedule"]
    for line in figures.table(float(resync)):
        terminalreporter.write_line(line)
