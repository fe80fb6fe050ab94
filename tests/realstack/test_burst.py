"""A burst of CI requests onto the same nodes of the real Volcano (issue 14).

The real Volcano picks any fitting chip of the node the portal names, not the
chip the portal booked, so per-chip bookings can disagree with where pods land.
No request may be left unschedulable because another one took its room: every
request of the burst runs at its first attempt (no bind timeout), and the
ledger ends equal to HAMi's accounting.
"""

from __future__ import annotations

import contextlib

import pytest

from apps.inventory.models import Chip
from apps.scheduling.choices import RequestState
from apps.scheduling.models import Request
from harness.portal import Running, burst_templates, submit_burst
from kubestack.scenarios import more_310p_nodes
from tests.polling import wait_for
from tests.realstack.accounting import portal_usage, usage_by_uuid

pytestmark = [
    pytest.mark.realstack,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
]

ASCEND = ("Ascend310P", "Ascend910B4")
NODES_310P = 4  # the guide's 310P node and three more: 16 chips
BURST = 60  # 40 vir01 and 20 vir02: 80 of the 111 vir01-sized units free


@pytest.fixture
def more_nodes(kube_stack):
    """Three more 310P nodes on the session's stack, for this test only."""
    nodes = more_310p_nodes(NODES_310P)
    kube_stack.add_nodes(nodes)
    yield [node.name for node in nodes]
    kube_stack.remove_nodes([node.name for node in nodes])


def test_a_burst_onto_the_same_nodes_all_runs_at_the_first_attempt(
    more_nodes, kube_stack, kube_core, real_cluster, cleanup
):
    with Running(real_cluster):
        wait_for(
            lambda: (
                Chip.objects.filter(
                    cluster=real_cluster, common_word="Ascend310P", healthy=True
                ).count()
                == 4 * NODES_310P
            ),
            "the portal to see the new nodes' chips",
            timeout=60,
        )
        ids = submit_burst("real", burst_templates(BURST))
        assert len(ids) == BURST

        def settled() -> bool:
            states = Request.objects.filter(pk__in=ids).values_list("state", flat=True)
            return all(state == RequestState.RUNNING for state in states)

        with contextlib.suppress(AssertionError):  # the rows below say what is late
            wait_for(settled, "every request of the burst to run", timeout=75)
        stuck = [
            f"{r.pk}: {r.state} after {r.attempts + 1} attempt(s): {r.reason}"
            for r in Request.objects.filter(pk__in=ids).order_by("pk")
            if r.state != RequestState.RUNNING or r.attempts
        ]
        # every request ran at its first attempt: none waited out a bind timeout
        assert not stuck, "\n".join(stuck)
        wait_for(
            lambda: portal_usage(real_cluster) == usage_by_uuid(kube_core, ASCEND),
            "the ledger to equal HAMi's accounting",
            timeout=30,
        )
