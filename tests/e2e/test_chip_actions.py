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
    # the editor starts from the live node config; here there is none
    expect(page.get_by_test_id("node-config-editor")).to_contain_text(
        "No node has an entry"
    )
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
    """A portal on the ``nodeconfig`` scenario: plugin v1.4.0 reading its node config.

    A chip sick for a second is offered for isolation (the default is ten
    minutes), so that a browser test can see a suggestion without waiting.
    """
    yield from running_portal(
        "nodeconfig", env={"ISOLATION_SUGGEST_AFTER_SECONDS": "1"}
    )


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


# --- the node config editor and the suggestions, on the same portal ----------------------

NODE = "npu-node-910b-01"


def _node_config(portal: Stack) -> dict[str, Any]:
    status, body = portal.api().call(
        "GET", f"/api/clusters/{portal.cluster_id}/node-config/"
    )
    assert status == 200, body
    return body


def _node_entry(portal: Stack, name: str) -> dict[str, Any]:
    return next(n for n in _node_config(portal)["nodes"] if n["name"] == name)


def _node_chips(portal: Stack, node: str) -> list[dict[str, Any]]:
    status, body = portal.api().call(
        "GET", f"/api/chips/?cluster={portal.cluster_id}&page_size=200"
    )
    assert status == 200, body
    return [c for c in body["results"] if c["node"] == node and c["registered"]]


def _reset_slot_count(portal: Stack) -> None:
    """Clear the node's slot count again and restart its plugin (cleanup)."""
    if not _node_entry(portal, NODE)["v_device_count"]:
        return
    client = portal.api()
    base = f"/api/clusters/{portal.cluster_id}/node-config"
    status, body = client.call(
        "POST",
        f"{base}/publish/",
        {
            "nodes": [{"name": NODE, "v_device_count": 0}],
            "reason": "e2e cleanup",
            "expected_version": _node_config(portal)["baseline_version"],
            "confirm_warnings": True,
        },
    )
    assert status == 201, body
    status, body = client.call(
        "POST", f"{base}/restart/", {"node": NODE, "reason": "e2e cleanup"}
    )
    assert status == 202, body


def test_a_node_slot_count_is_edited_published_and_applied_by_a_plugin_restart(
    browser, nodeconfig_portal, shot
):
    portal = nodeconfig_portal
    chips = _node_chips(portal, NODE)
    slots = min(c["slots"] for c in chips) - 1  # fewer: the templates fill it
    assert slots >= 1, chips
    reason = f"e2e: {slots} slots per chip on {NODE}"
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    context.set_default_timeout(15_000)
    page = context.new_page()
    try:
        login(page, portal, path="/node-config")
        draft = page.get_by_test_id(f"whatif-draft-{NODE}")
        # the draft starts from the live entry (its filter by UUID)
        expect(draft.locator("input[type=checkbox]:checked")).to_have_count(1)
        draft.get_by_test_id("whatif-slots").fill(str(slots))
        page.get_by_test_id("draft-validate").click()
        expect(page.get_by_test_id("draft-validation")).to_contain_text("Valid")

        page.get_by_test_id("draft-publish").click()
        expect(page.get_by_test_id("publish-diff")).to_contain_text(
            f'"vDeviceCount": {slots}'
        )
        page.get_by_test_id("publish-reason").fill(reason)
        page.get_by_test_id("publish-submit").click()
        published = page.get_by_test_id("node-config-published")
        confirms = page.get_by_test_id("publish-confirms")
        expect(published.or_(confirms)).to_be_visible()
        if confirms.is_visible():  # warnings the live file already had
            for box in confirms.locator("input[type=checkbox]").all():
                box.check()
            page.get_by_test_id("publish-submit").click()
        expect(published).to_contain_text("Published v")
        expect(page.get_by_test_id("nc-versions")).to_contain_text(reason)

        in_effect = page.get_by_test_id(f"in-effect-{NODE}")
        expect(in_effect).to_contain_text("restart pending", timeout=30_000)
        shot(page, "node-config-restart-pending")
        in_effect.get_by_test_id(f"restart-plugin-{NODE}").click()
        page.get_by_test_id("plugin-restart-reason").fill("e2e: apply the slot count")
        page.get_by_test_id("plugin-restart-submit").click()
        expect(in_effect).not_to_contain_text("restart pending", timeout=60_000)
        # the new plugin registered the chips with the new slot count
        wait_for(
            lambda: {c["slots"] for c in _node_chips(portal, NODE)} == {slots},
            f"the chips of {NODE} registered with {slots} slots",
            timeout=60,
        )
        shot(page, "node-config-applied")
    finally:
        context.close()
        _reset_slot_count(portal)


def test_a_sick_chip_is_suggested_and_its_isolation_dialog_opens(
    browser, nodeconfig_portal, shot
):
    portal = nodeconfig_portal
    node = "npu-node-310p-01"
    chip = next(c for c in _node_chips(portal, node) if c["state"] == "healthy")
    physical = next(
        i
        for i, c in enumerate(portal.sim.hardware.chips(node))
        if c.uuid == chip["uuid"]
    )
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    context.set_default_timeout(15_000)
    page = context.new_page()
    portal.sim.set_chip_health(node, physical, False)
    try:
        login(page, portal, path="/chips")
        # offered once sync sees it sick past the (lowered) setting
        suggestion = page.get_by_test_id(f"suggestion-{chip['id']}")
        expect(suggestion).to_contain_text("isolate", timeout=60_000)
        expect(suggestion).to_contain_text(node)
        shot(page, "chip-suggestions")
        page.get_by_test_id(f"suggestion-act-{chip['id']}").click()
        # the chip's own drawer, its Isolate dialog open
        expect(page.get_by_test_id("drawer")).to_contain_text(chip["uuid"])
        expect(page.get_by_test_id("isolate-preview")).to_be_visible()
        expect(page.get_by_test_id("isolate-submit")).to_be_enabled()
    finally:
        context.close()
        portal.sim.set_chip_health(node, physical, True)
