"""Acting on chips and nodes in the browser: drain a chip holding a pod the
portal did not make (its plan, an admin's approval, draining -> drained, then
uncordon), the Node config page on the guide's plugin (v1.1.0: not read, with
the DaemonSet patch), and isolation: refused with the fix on the guide, and
isolate -> isolated -> restore on the ``nodeconfig`` scenario (plugin v1.4.0).

The first three share the package's portal (the guide scenario) and leave it
as they found it. The last one needs its own portal on another scenario.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import expect

from harness.stack import Stack, pinned_pod
from tests.e2e.conftest import login, running_portal
from tests.polling import wait_for

pytestmark = pytest.mark.browser

CW = "Ascend910B4"


def _idle_chip(portal: Stack) -> dict[str, Any]:
    """A healthy 910B4 chip with nothing on it (the guide has several)."""
    status, body = portal.api().call(
        "GET",
        f"/api/chips/?cluster={portal.cluster_id}&common_word={CW}"
        "&state=healthy&page_size=100",
    )
    assert status == 200, body
    idle = [c for c in body["results"] if c["slots_used"] == 0]
    assert idle, body
    return max(idle, key=lambda c: c["index"])


def _chip(portal: Stack, chip_id: int) -> dict[str, Any]:
    status, body = portal.api().call("GET", f"/api/chips/{chip_id}/")
    assert status == 200, body
    return body


def test_a_chip_drain_shows_its_plan_waits_for_approval_and_is_uncordoned(
    page, portal, shot
):
    chip = _idle_chip(portal)
    pod = "e2e-drain-foreign"
    portal.kubectl(
        "apply",
        "-f",
        "-",
        stdin=pinned_pod(pod, chip["uuid"], chip_type=CW, memory=None),
    )
    try:
        wait_for(
            lambda: _chip(portal, chip["id"])["slots_used"] == 1,
            "sync to show the foreign pod's slice on the chip",
            timeout=30,
        )
        login(page, portal, path=f"/chips?chip={chip['id']}")
        row = page.locator(f"[data-chip-id='{chip['id']}']")
        drawer = page.get_by_test_id("drawer")
        expect(drawer.get_by_test_id("chip-slices")).to_contain_text(pod)

        # the plan first: the foreign pod, and that an admin must approve
        drawer.get_by_test_id("chip-act-drain").click()
        expect(page.get_by_test_id("drain-plan-pods")).to_contain_text(pod)
        expect(page.get_by_test_id("drain-plan-pods")).to_contain_text("foreign")
        expect(page.get_by_test_id("drain-needs-approval")).to_be_visible()
        shot(page, "chip-drain-plan")
        page.get_by_test_id("drain-submit").click()
        expect(page.get_by_text("A reason is required.")).to_be_visible()
        page.get_by_test_id("drain-reason").fill("e2e: repair the chip")
        page.get_by_test_id("drain-submit").click()
        expect(page.get_by_test_id("chip-act-result")).to_contain_text("pending")
        # cordoned at once, the pod still there: draining, live in the table
        expect(row).to_contain_text("draining")
        expect(drawer.get_by_test_id("chip-drain")).to_contain_text("pending")

        # an admin approves on the Drains page
        page.keyboard.press("Escape")  # the drawer closes
        page.locator("nav").get_by_role("link", name="Drains").click()
        drain_row = page.locator("tr[data-testid^=drain-]", has_text=chip["uuid"][:8])
        expect(drain_row).to_contain_text("awaits an admin")
        drain_row.get_by_role("button", name="Approve").click()
        page.get_by_test_id("decision-reason").fill("e2e: maintenance window")
        page.get_by_test_id("decision-submit").click()
        expect(page.get_by_test_id("decision-reason")).to_have_count(0)
        shot(page, "drains")

        # the pod is evicted and its slice released: drained, live
        page.goto(portal.url + f"/chips?chip={chip['id']}")
        expect(row).to_contain_text("drained", timeout=30_000)
        expect(drawer.get_by_test_id("chip-slices")).to_have_count(0)

        drawer.get_by_test_id("chip-act-uncordon").click()
        page.get_by_test_id("uncordon-reason").fill("e2e: repaired")
        page.get_by_test_id("uncordon-submit").click()
        expect(page.get_by_test_id("chip-act-result")).to_contain_text(
            "back in service"
        )
        expect(row).to_contain_text("ok")
        assert _chip(portal, chip["id"])["state"] == "healthy"
    finally:
        portal.kubectl("delete", "pod", pod, "--ignore-not-found", "--wait=false")
        if _chip(portal, chip["id"])["cordoned"]:
            portal.api().call(
                "POST", f"/api/chips/{chip['id']}/uncordon/", {"reason": "e2e cleanup"}
            )


def test_the_node_config_page_says_the_guide_plugin_does_not_read_it(
    page, portal, shot
):
    login(page, portal, path="/chips")
    page.locator("nav").get_by_role("link", name="Node config").click()
    banner = page.get_by_test_id("node-config-not-read")
    expect(banner).to_contain_text("does not read the node config")
    expect(page.get_by_test_id("node-config-kubectl")).to_contain_text(
        "kubectl -n kube-system patch daemonset"
    )
    page.get_by_text("The strategic-merge patch").click()
    expect(page.get_by_test_id("node-config-patch")).to_contain_text(
        "--node_config_file"
    )
    expect(page.get_by_test_id("node-config-node-npu-node-910b-01")).to_contain_text(
        "v1.1.0"
    )
    expect(page.get_by_test_id("node-config-publish-placeholder")).to_be_visible()
    shot(page, "node-config")


def test_isolating_on_the_guide_plugin_is_refused_with_the_fix(page, portal):
    chip = _idle_chip(portal)
    login(page, portal, path=f"/chips?chip={chip['id']}")
    page.get_by_test_id("drawer").get_by_test_id("chip-act-isolate").click()
    expect(page.get_by_test_id("isolate-node-health")).to_contain_text("Fix:")
    page.get_by_test_id("isolate-reason").fill("e2e: ECC errors")
    page.get_by_test_id("isolate-submit").click()
    expect(page.get_by_test_id("isolate-error")).to_contain_text(
        "does not read the node config"
    )
    expect(page.get_by_test_id("node-config-fix")).to_contain_text(
        "kubectl -n kube-system patch daemonset"
    )
    # refused: nothing changed
    assert _chip(portal, chip["id"])["state"] == "healthy"


# --- isolate and restore on a plugin that reads the node config ------------------------


@pytest.fixture(scope="module")
def nodeconfig_portal(chromium_path: str) -> Iterator[Stack]:
    """A portal on the ``nodeconfig`` scenario: plugin v1.4.0 reading its node config."""
    yield from running_portal("nodeconfig")


def test_a_chip_is_isolated_and_restored_from_its_drawer(
    browser, nodeconfig_portal, shot
):
    portal = nodeconfig_portal
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    context.set_default_timeout(15_000)
    page = context.new_page()
    try:
        chip = _idle_chip(portal)
        login(page, portal, path=f"/chips?chip={chip['id']}")
        row = page.locator(f"[data-chip-id='{chip['id']}']")
        drawer = page.get_by_test_id("drawer")
        drawer.get_by_test_id("chip-act-isolate").click()
        expect(page.get_by_test_id("isolate-preview")).to_contain_text(
            "No slice runs on this chip"
        )
        page.get_by_test_id("isolate-reason").fill("e2e: ECC errors")
        page.get_by_test_id("isolate-submit").click()
        expect(drawer.get_by_test_id("chip-act-result")).to_contain_text("Isolating")
        # pending until sync proves it from the node, then isolated (live)
        expect(drawer.get_by_test_id("chip-isolation")).to_contain_text("isolat")
        expect(row).to_contain_text("isolated", timeout=60_000)
        shot(page, "chip-isolated")

        drawer.get_by_test_id("chip-act-restore").click()
        page.get_by_test_id("restore-reason").fill("e2e: replaced")
        page.get_by_test_id("restore-submit").click()
        expect(drawer.get_by_test_id("chip-act-result")).to_contain_text("Restoring")
        expect(row).to_contain_text("ok", timeout=60_000)
        assert _chip(portal, chip["id"])["state"] == "healthy"
    finally:
        context.close()
