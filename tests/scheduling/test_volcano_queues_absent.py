"""A cluster without Volcano's CRDs (HAMi's own scheduler): queues are skipped, not errors.

simcluster answers 404 to every ``scheduling.volcano.sh`` request here, as an
API server without the CRDs does.
"""

from __future__ import annotations

import threading

import pytest

from apps.inventory.choices import SyncState
from apps.inventory.models import SyncCursor
from apps.inventory.sync.engine import sync_run
from apps.scheduling.choices import RequestState
from tests.scheduling.helpers import run_pass

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def sim_options() -> dict:
    return {"volcano_crds": False}


def test_sync_health_and_requests_go_on_without_volcano_queues(
    live, operator, viewer_client, sim_core, no_auto_pass
):
    cluster = live.cluster
    cursor = SyncCursor.objects.get(cluster=cluster, resource="volcano-queues")
    assert cursor.served is False
    assert cursor.last_error == ""
    cluster.refresh_from_db()
    assert cluster.sync_state == SyncState.OK, cluster.last_sync_error

    # the watchers too: the queue stream records "not served", the cluster stays OK
    stop = threading.Event()
    threading.Timer(1.5, stop.set).start()
    stats = sync_run(cluster.pk, seconds=1.5, watch_timeout=1, stop=stop)
    assert stats["volcano-queues"].errors == 0
    cluster.refresh_from_db()
    assert cluster.sync_state == SyncState.OK, cluster.last_sync_error
    served = viewer_client.get(f"/api/clusters/{cluster.pk}/sync-status/").json()
    assert {c["resource"]: c["served"] for c in served}["volcano-queues"] is False

    health = viewer_client.get(f"/api/clusters/{cluster.pk}/health/").json()
    check = {c["id"]: c for c in health["checks"]}["volcano_queues"]
    assert check["check_status"] == "ok"
    assert check["message"].startswith(
        "skipped: the cluster serves no Volcano Queue API"
    )

    # and a request is not held for a queue the cluster cannot have
    live.priority_classes()
    live.queue("default", namespaces=("ci",))
    request = live.request(operator)
    run_pass(cluster)
    request.refresh_from_db()
    assert request.state == RequestState.ADMITTED, request.reason
    assert sim_core.read_namespaced_pod(request.pod_name, "ci") is not None


def test_discovery_confirms_the_queues_are_not_served(sim, tmp_path):
    from apps.inventory.sync.kubeapi import discovered

    api = sim.kubernetes_client(tmp_path / "kc-discovery")
    assert not discovered(api, "/apis/scheduling.volcano.sh/v1beta1/queues")
    assert discovered(api, "/api/v1/nodes")
