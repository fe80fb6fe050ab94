"""The on-call admin's walk on the demo, in a real browser (issue 37).

Fill the 910B4 node with low-priority whole-card requests, submit
high-priority ones, and approve what the portal proposes on the Preemptions
page as the proposals come. Every high-priority request ends up running, no
two approvals block each other (one hold per node, lifted at the end), and no
request ever has more than one live proposal.
"""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import login
from tests.polling import wait_for

pytestmark = pytest.mark.browser

LIVE = ("pending", "approved", "evicting")


def _submit(api: Any, priority: str, key: str) -> int:
    status, body = api.call(
        "POST",
        "/api/requests/",
        {
            "cluster": "demo",
            "namespace": "default",
            "chip_type": "Ascend910B4",
            "whole_card": True,
            "priority": priority,
            "idempotency_key": key,
            "workload": {"image": "busybox", "command": ["sleep", "3600"]},
        },
    )
    assert status == 201, body
    return int(body["id"])


def _states(api: Any, ids: list[int]) -> dict[int, str]:
    found = {}
    for request_id in ids:
        status, body = api.call("GET", f"/api/requests/{request_id}/")
        assert status == 200, body
        found[request_id] = body["state"]
    return found


def _on_unhealthy_chips(api: Any, cluster_id: int, ids: list[int]) -> int:
    """How many of the requests run on a chip its device plugin calls unhealthy."""
    status, body = api.call(
        "GET",
        f"/api/chips/?cluster={cluster_id}&common_word=Ascend910B4"
        "&healthy=false&page_size=100",
    )
    assert status == 200, body
    sick = {chip["uuid"] for chip in body["results"]}
    chips = []
    for request_id in ids:
        status, shown = api.call("GET", f"/api/requests/{request_id}/")
        assert status == 200, shown
        chips.append(shown["chip_uuid"])
    return sum(1 for chip in chips if chip in sick)


def _live_proposals(api: Any, cluster_id: int) -> dict[int, int]:
    """Per request, how many of its proposals are live (pending or carried out)."""
    status, body = api.call(
        "GET",
        f"/api/preemptions/?cluster={cluster_id}&page_size=500"
        + "".join(f"&state={s}" for s in LIVE),
    )
    assert status == 200, body
    counts: dict[int, int] = {}
    for row in body["results"]:
        counts[row["request"]] = counts.get(row["request"], 0) + 1
    return counts


def _holds(portal: Any) -> list[str]:
    nodes = json.loads(portal.kubectl("get", "nodes", "-o", "json"))["items"]
    return [
        taint["key"]
        for node in nodes
        for taint in node["spec"].get("taints") or []
        if taint["key"].startswith("vnpu-portal/")
    ]


def _why_pending(api: Any, portal: Any, states: dict[int, str]) -> str:
    """The failure's story: each waiting request, the proposals, the worker's log."""
    lines = [f"states: {states}"]
    for request_id, state in states.items():
        if state != "running":
            _, shown = api.call("GET", f"/api/requests/{request_id}/")
            lines.append(f"request {request_id}: {json.dumps(shown)[:1500]}")
    _, proposals = api.call(
        "GET", f"/api/preemptions/?cluster={portal.cluster_id}&page_size=500"
    )
    for row in proposals.get("results", []):
        lines.append(
            f"proposal {row.get('id')}: request {row.get('request')} "
            f"state {row.get('state')} victims {row.get('victims')}"
        )
    for name in ("sync", "web"):
        lines.append(f"{name} log:\n" + portal.logs(name, 6000))
    return "\n".join(lines)


def test_the_admin_approves_what_is_proposed_and_every_urgent_request_runs(
    page, portal, shot
):
    api = portal.api()
    status, body = api.call(
        "GET",
        f"/api/chips/?cluster={portal.cluster_id}&common_word=Ascend910B4"
        "&healthy=true&page_size=100",
    )
    assert status == 200, body
    idle = [c for c in body["results"] if c["slots_used"] == 0]
    assert len(idle) >= 3, body
    low: list[int] = []
    urgent: list[int] = []
    try:
        # given the node filled with low-priority whole cards, as the admin did
        low = [_submit(api, "batch-low", f"walk-low-{i}") for i in range(len(idle))]
        # Every one runs: as many cards as idle healthy chips (Volcano may
        # bind one to the empty sick chip, leaving a healthy one free). Waiting
        # for only some to run counted the chips of cards still queued for a
        # pass as free, and asked for more urgent cards than the node holds.
        wait_for(
            lambda: set(_states(api, low).values()) == {"running"},
            "the low-priority cards to run",
            timeout=120,
        )
        # when two more urgent whole cards are asked for than chips are free
        status, body = api.call(
            "GET",
            f"/api/chips/?cluster={portal.cluster_id}&common_word=Ascend910B4"
            "&healthy=true&page_size=100",
        )
        free = sum(1 for c in body["results"] if c["slots_used"] == 0)
        urgent = [
            _submit(api, "inference-high", f"walk-urgent-{i}") for i in range(free + 2)
        ]

        # then the admin approves what is proposed, as it comes, in the browser
        login(page, portal, path="/preemptions")
        approve = page.locator(
            "tr[data-testid^=proposal-]", has_text="pending"
        ).get_by_role("button", name="Approve")
        most_live = approved = 0
        deadline = time.monotonic() + 120
        shown = False
        while time.monotonic() < deadline:
            most_live = max(
                [most_live, *_live_proposals(api, portal.cluster_id).values()]
            )
            if set(_states(api, urgent).values()) == {"running"}:
                break
            if approve.count():
                if not shown:
                    shot(page, "admin-walk-proposals")
                    shown = True
                approve.first.click()
                page.get_by_test_id("decision-reason").fill("on call: urgent first")
                page.get_by_test_id("decision-submit").click()
                expect(page.get_by_test_id("decision-reason")).to_have_count(0)
                approved += 1
            else:
                page.wait_for_timeout(500)
        states = _states(api, urgent)
        assert set(states.values()) == {"running"}, _why_pending(api, portal, states)
        # Volcano (simcluster's binder as the real one) checks no chip health:
        # an urgent card it bound to the empty sick chip left the healthy chip
        # the portal had booked for it free for the next, one approval fewer.
        on_sick = _on_unhealthy_chips(api, portal.cluster_id, urgent)
        assert approved + on_sick >= 2, (
            f"the two extra urgent cards needed a preemption each "
            f"({approved} approved, {on_sick} bound to the sick chip)"
        )
        assert most_live <= 1, "a request had two live proposals at once"
        # and nothing holds the node any more
        wait_for(lambda: not _holds(portal), "the node holds to be lifted", timeout=30)
        shot(page, "admin-walk-done")
    finally:
        for request_id in [*urgent, *low]:
            api.call("DELETE", f"/api/requests/{request_id}/")
