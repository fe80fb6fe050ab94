"""Follow-up work the scheduling services ask for once their transaction commits.

Every service starts its follow-ups here, so that a test that runs the passes
itself switches them off in one place (``no_auto_pass``).
"""

from __future__ import annotations

from apps.scheduling import triggers


def pass_after_commit(cluster_id: int) -> None:
    """Run an allocation pass for the cluster once the transaction commits."""
    triggers.run_after_commit("pass", cluster_id)


def reconcile_after_commit(cluster_id: int) -> None:
    """Reconcile the cluster's requests once the transaction commits."""
    triggers.run_after_commit("reconcile", cluster_id)
