"""The alerts end to end with the real parts (issue 33, item 5).

The portal runs as real processes on the demo's simulated cluster (web and
sync; ``harness/stack.py``, on PostgreSQL when ``DATABASE_URL`` names one). A
real Prometheus scrapes its ``/metrics`` with ``METRICS_TOKEN`` and evaluates
the rules rendered from ``apps/common/alerting/definitions.py``, with ``for:
0s`` and a preemption threshold of 0 s so that nothing waits minutes; a real
Alertmanager routes to a webhook receiver of this test. Each case changes the
cluster, waits for the firing notification naming the object and linking to
its portal page, undoes the change and waits for the resolved one.

Each case measures the seconds from the change to each notification's
arrival, prints them and appends them to ``var/alert-figures.jsonl``
(docs/alerts.md keeps the figures measured).
"""

from __future__ import annotations

import json
import os
import time
import urllib.parse
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from apps.common.alerting.definitions import ALERTS
from apps.common.alerting.rules import plain_rules
from harness.alertmanager import Alertmanager, Notification, WebhookReceiver
from harness.alertmanager import binary as alertmanager_binary
from harness.portal import urgent_vir04
from harness.processes import wait_until
from harness.prometheus import PortalTarget, Prometheus
from harness.prometheus import binary as prometheus_binary
from harness.stack import Stack, pinned_pod
from simcluster.guide_data import CHIPS_310P, CHIPS_910B, NODE_910B
from tests.conftest import FAST_SIM
from tests.faults.figures import record
from tests.requires import missing

pytestmark = [pytest.mark.processes, pytest.mark.prometheus]

TOKEN = "alerts-e2e-metrics-token"
ROOT = Path(__file__).resolve().parents[1]
FIGURES = ROOT / "var" / "alert-figures.jsonl"
APP = ROOT / "frontend" / "src" / "App.tsx"
CHIP = "VnpuChipUnhealthy"
PREEMPTION = "VnpuPreemptionAwaitingApproval"
# Notifications come within a few scrape intervals; the bound is for a
# loaded CI machine.
DELIVERY_TIMEOUT = 90


class Monitoring:
    """The portal, its Prometheus and Alertmanager, and the test's receiver."""

    def __init__(self, portal: Stack, prometheus: Prometheus, receiver: Any) -> None:
        self.portal = portal
        self.prometheus = prometheus
        self.receiver = receiver

    def notification(
        self, alertname: str, status: str, label: str, value: str
    ) -> tuple[Notification, dict[str, Any]]:
        """The first notification carrying ``alertname`` with ``label`` =
        ``value`` in ``status`` (an alert's own status: a group notification
        may hold other alerts of the same name), and that alert."""

        def mine(n: Notification) -> dict[str, Any] | None:
            return next(
                (
                    a
                    for a in n.alerts
                    if a["labels"].get("alertname") == alertname
                    and a["labels"].get(label) == value
                    and a.get("status") == status
                ),
                None,
            )

        found = self.receiver.wait_for(
            lambda n: mine(n) is not None,
            f"a {status} {alertname} notification for {label}={value}",
            DELIVERY_TIMEOUT,
        )
        alert = mine(found)
        assert alert is not None
        return found, alert


@pytest.fixture(scope="module")
def monitoring(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Monitoring]:
    if prometheus_binary() is None:
        missing("prometheus is not installed (apt-get install prometheus)")
    if alertmanager_binary() is None:
        missing(
            "Alertmanager is not installed (apt-get install prometheus-alertmanager)"
        )
    database = os.environ.get("DATABASE_URL", "")
    portal = Stack(
        "guide",
        sim_options=FAST_SIM,
        workdir=tmp_path_factory.mktemp("portal"),
        log=lambda _: None,
        postgres_url=database if database.startswith("postgres") else None,
    )
    portal.extra_env.update({"METRICS_TOKEN": TOKEN, "PORTAL_URL": portal.url})
    receiver = WebhookReceiver().start()
    alertmanager = Alertmanager(
        tmp_path_factory.mktemp("alertmanager"), webhook_url=receiver.url
    )
    prometheus: Prometheus | None = None
    try:
        portal.start(wait_for_chips=12, timeout=120)
        alertmanager.start()
        rules = plain_rules(
            portal.url,
            [alert for alert in ALERTS if alert.name in (CHIP, PREEMPTION)],
            for_="0s",
            thresholds={PREEMPTION: 0},
        )
        prometheus = Prometheus(
            portal.sim,
            tmp_path_factory.mktemp("prometheus"),
            portal=PortalTarget(portal.url, TOKEN),
            rules=rules,
            alertmanager_url=alertmanager.url,
        ).start()
        yield Monitoring(portal, prometheus, receiver)
    except BaseException:
        for server in (prometheus, alertmanager):
            if server is not None:
                print(f"--- {type(server).__name__} log\n{server.log(4000)}")  # noqa: T201
        raise
    finally:
        if prometheus is not None:
            prometheus.stop()
        alertmanager.stop()
        receiver.stop()
        portal.stop()


def _report(case: str, firing: float, resolved: float) -> None:
    figures = {
        "firing_seconds": round(firing, 2),
        "resolved_seconds": round(resolved, 2),
    }
    print(f"{case}: condition to delivery {figures}")  # noqa: T201
    record(
        case,
        file=FIGURES,
        database="postgresql"
        if os.environ.get("DATABASE_URL", "").startswith("postgres")
        else "sqlite",
        load=os.getloadavg()[0],
        **figures,
    )


def _assert_links_to(alert: dict[str, Any], portal: Stack, page: str) -> None:
    link = alert["annotations"]["portal_url"]
    assert link == portal.url + page, link
    # a page of the web UI (its routes; the frontend need not be built here)
    path = urllib.parse.urlsplit(link).path
    assert f'"{path}": lazyPage' in APP.read_text(), path


def test_a_sick_chip_is_notified_then_resolved(monitoring: Monitoring) -> None:
    portal, sim = monitoring.portal, monitoring.portal.sim
    uuid = CHIPS_910B[0][0]
    # given the demo's chip that is sick from the start, already notified
    sick = next(chip for chip, healthy in CHIPS_910B if not healthy)
    monitoring.notification(CHIP, "firing", "chip", sick)

    # when a healthy chip turns sick
    changed = time.time()
    sim.set_chip_health(NODE_910B, 0, False)

    # then its notification names it and links to its page on the Chips page
    firing, alert = monitoring.notification(CHIP, "firing", "chip", uuid)
    assert alert["labels"]["node"] == NODE_910B
    assert alert["labels"]["cluster"] == "demo"
    assert alert["labels"]["severity"] == "critical"
    assert uuid in alert["annotations"]["summary"]
    assert NODE_910B in alert["annotations"]["summary"]
    _assert_links_to(alert, portal, f"/chips?cluster=demo&chip={uuid}")
    firing_seconds = firing.received_at - changed

    # when it recovers, the notification says it is resolved
    changed = time.time()
    sim.set_chip_health(NODE_910B, 0, True)
    resolved, _ = monitoring.notification(CHIP, "resolved", "chip", uuid)
    _report("chip unhealthy", firing_seconds, resolved.received_at - changed)


# The 310P node full: a vir04 of priority inference-high fits only by evicting
# ``victim`` (batch-low, chip 3); chip 0 holds the guide's own vir01 too.
FILL = [
    ("fill-0a", 0, 12288, "inference-high"),
    ("fill-0b", 0, 6144, "inference-high"),
    *(
        (f"fill-{chip}{x}", chip, memory, "inference-high")
        for chip in (1, 2)
        for x, memory in (("a", 12288), ("b", 6144), ("c", 3072))
    ),
    ("victim", 3, 12288, "batch-low"),
    ("fill-3b", 3, 6144, "inference-high"),
    ("fill-3c", 3, 3072, "inference-high"),
]


def _fill_the_310p_node(portal: Stack, tmp: Path) -> None:
    from kubernetes import client

    core = client.CoreV1Api(portal.sim.kubernetes_client(tmp / "kubeconfig"))
    for name, chip, memory, priority_class in FILL:
        pod = pinned_pod(
            name, CHIPS_310P[chip][0], memory=memory, priority_class=priority_class
        )
        core.create_namespaced_pod("default", json.loads(pod))
    api = portal.api()

    def synced() -> bool:
        status, body = api.call("GET", "/api/slices/?q=fill-&phase=Running")
        return status == 200 and body["count"] == len(FILL) - 1

    wait_until(synced, "the portal to see the filler pods running", 60, 0.25)


def test_a_preemption_awaiting_approval_is_notified_then_resolved(
    monitoring: Monitoring, tmp_path: Path
) -> None:
    portal = monitoring.portal
    _fill_the_310p_node(portal, tmp_path)
    admin = portal.api()

    # when an urgent request needs a preemption an admin must approve
    status, submitted = admin.call("POST", "/api/requests/", urgent_vir04("demo"))
    assert status == 201, submitted

    def proposed() -> dict[str, Any] | None:
        _, pending = admin.call("GET", "/api/preemptions/?state=pending")
        rows = pending["results"]
        return next((p for p in rows if p["request"] == submitted["id"]), None)

    proposal = wait_until(proposed, "a preemption proposal for the request", 60)
    began = datetime.fromisoformat(proposal["created_at"]).timestamp()

    # then the notification names its queue and links to the Preemptions page
    queue = proposal["request_queue"]
    firing, alert = monitoring.notification(PREEMPTION, "firing", "queue", queue)
    assert alert["labels"]["cluster"] == "demo"
    assert f"queue {queue} of cluster demo" in alert["annotations"]["summary"]
    _assert_links_to(alert, portal, "/preemptions?cluster=demo")
    firing_seconds = firing.received_at - began

    # when an admin approves it, the notification says it is resolved
    approved_at = time.time()
    status, body = admin.call(
        "POST", f"/api/preemptions/{proposal['id']}/approve/", {"reason": "urgent"}
    )
    assert status == 200, body
    resolved, _ = monitoring.notification(PREEMPTION, "resolved", "queue", queue)
    _report(
        "preemption awaiting approval",
        firing_seconds,
        resolved.received_at - approved_at,
    )
