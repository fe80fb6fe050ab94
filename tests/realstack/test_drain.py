"""A drain on the real control plane: the real Eviction API, a real PodDisruptionBudget.

A foreign pod (bound by the real Volcano) sits on a 310P chip under a budget
that allows no disruption. Drained and approved over REST, its eviction is
refused by the real kube-apiserver (429): the drain waits on the budget and
the pod keeps running. Once the budget is gone, the retry evicts it through the
API and the chip ends drained, still cordoned.
"""

from __future__ import annotations

import json

import pytest

from apps.inventory.models import Chip, Slice
from apps.scheduling.choices import DrainState
from harness.portal import Running, token_client
from kubestack.scenarios import STOPS_ON_SIGTERM_SECONDS, slice_pod, wait_running
from tests.polling import wait_for

pytestmark = [
    pytest.mark.realstack,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
]

POD = "drain-guarded"
PDB = "drain-guarded"


@pytest.fixture
def guarded(kube_stack, cleanup):
    """A batch-low vir02 under a budget allowing no disruption; both removed after."""
    pod = slice_pod(
        POD, "Ascend310P", 6144, "batch-low", grace_seconds=STOPS_ON_SIGTERM_SECONDS
    )
    pdb = {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": PDB, "namespace": "default"},
        "spec": {"maxUnavailable": 0, "selector": {"matchLabels": {"app": POD}}},
    }
    cleanup.append(("default", POD))
    kube_stack.create_objects([pod])
    kube_stack.kubectl("create", "-f", "-", stdin=json.dumps(pdb))
    wait_running(kube_stack, [("default", POD)], timeout=90)
    yield POD
    kube_stack.kubectl(
        "delete", "pdb", "-n", "default", PDB, "--ignore-not-found", check=False
    )


def _alive(kube_core) -> bool:
    pods = kube_core.list_namespaced_pod(
        "default", field_selector=f"metadata.name={POD}"
    ).items
    return bool(pods) and pods[0].metadata.deletion_timestamp is None


def test_a_drain_waits_on_a_real_disruption_budget_then_evicts(
    kube_stack, kube_core, real_cluster, guarded, settings
):
    settings.PREEMPTION_EVICTION_RETRY_SECONDS = 1
    admin = token_client("boss", "admin")
    with Running(real_cluster) as running:
        slice_ = wait_for(
            lambda: Slice.objects.filter(cluster=real_cluster, pod_name=POD).first(),
            "sync to show the guarded pod's slice",
            timeout=60,
        )
        chip = Chip.objects.get(cluster=real_cluster, uuid=slice_.chip_uuid)
        wait_for(
            lambda: (
                kube_stack.kubectl(
                    "get",
                    "pdb",
                    PDB,
                    "-o",
                    "jsonpath={.status.currentHealthy}/{.status.disruptionsAllowed}",
                ).stdout
                == "1/0"
            ),
            "the disruption controller to count the pod",
            timeout=60,
        )

        # the plan reads the budget from the API server
        plan = admin.get(f"/api/chips/{chip.pk}/drain/")
        assert plan.status_code == 200, plan.json()
        pod = next(p for p in plan.json()["pods"] if p["pod"] == POD)
        assert pod["foreign"] is True
        assert pod["pdbs"] == [{"name": PDB, "disruptions_allowed": 0}]

        created = admin.post(
            f"/api/chips/{chip.pk}/drain/",
            {"reason": "replace the card"},
            format="json",
        )
        assert created.status_code == 201, created.json()
        drain_id = created.json()["id"]
        approved = admin.post(
            f"/api/drains/{drain_id}/approve/", {"reason": "window"}, format="json"
        )
        assert approved.status_code == 200, approved.json()

        # the real Eviction API refuses: the drain waits on the budget
        def blocked() -> dict | None:
            shown = admin.get(f"/api/drains/{drain_id}/").json()
            victim = next(v for v in shown["victims"] if v["pod"] == POD)
            return shown if "disruption budget" in victim.get("blocked", "") else None

        shown = wait_for(blocked, "the eviction to be refused (429)", timeout=60)
        assert shown["state"] == DrainState.EVICTING
        assert "PodDisruptionBudget" in shown["progress"]
        running.wait_passes(3)
        assert _alive(kube_core)
        annotations = kube_core.read_namespaced_pod(POD, "default").metadata.annotations
        assert annotations["vnpu-portal/drain"] == str(drain_id)
        assert admin.get(f"/api/chips/{chip.pk}/").json()["state"] == "draining"

        # the budget goes: the retry evicts through the API, the chip ends drained
        kube_stack.kubectl("delete", "pdb", "-n", "default", PDB)
        wait_for(lambda: not _alive(kube_core), "the pod to be evicted", timeout=60)
        wait_for(
            lambda: admin.get(f"/api/chips/{chip.pk}/").json()["state"] == "drained",
            "the chip to be drained",
            timeout=90,
        )
    shown = admin.get(f"/api/chips/{chip.pk}/").json()
    assert shown["cordoned"] is True
    events = kube_core.list_namespaced_event(
        "default", field_selector=f"involvedObject.name={POD},reason=Drained"
    ).items
    assert len(events) == 1
    assert "replace the card" in events[0].message
