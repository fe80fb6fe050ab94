"""The web UI end to end: a real portal, a simulated cluster, headless Chromium.

Each test starts from a fresh browser context and signs in through the login
form. Screenshots go to tests/e2e/screenshots/; with UPDATE_README_SCREENSHOT=1
the overview one is copied to docs/screenshot.png for the README.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from harness.stack import pinned_pod
from tests.e2e.conftest import login
from tests.polling import wait_for

pytestmark = pytest.mark.browser

ROOT = Path(__file__).resolve().parents[2]
# The guide's second 310P3 chip: idle at start, so a pod pinned to it is the only one there.
CHIP_UUID = "0C5C7FD0-128B2F33-D23F0824-892F902B-1818E811"
# What the overview asks the API for beside the live snapshot (its banners,
# charts and panels), under /api/clusters/<id>/.
OVERVIEW_CALLS = (
    "sync-status/",
    "health/",
    "drift/",
    "restarts/",
    "usage-history/",
    "fragmentation/",
)


def _chip_id(portal, uuid: str) -> int:
    status, body = portal.api().call(
        "GET", f"/api/chips/?cluster={portal.cluster_id}&uuid={uuid}"
    )
    assert status == 200, body
    return int(body["results"][0]["id"])


def test_login_shows_role_and_the_guides_twelve_chips(page, portal, shot):
    page.goto(portal.url + "/")
    expect(page.locator("input[name=username]")).to_be_visible()
    # wrong password: the API's message, on the form
    page.fill("input[name=username]", "admin")
    page.fill("input[name=password]", "wrong")
    page.click("button[type=submit]")
    expect(page.get_by_test_id("login-error")).to_contain_text(
        "Wrong username or password"
    )
    shot(page, "login-error")

    page.fill("input[name=password]", "admin")
    page.click("button[type=submit]")
    expect(page.get_by_test_id("connection")).to_have_attribute("data-state", "live")
    expect(page.get_by_test_id("user")).to_contain_text("admin")
    expect(page.get_by_test_id("user")).to_contain_text("admin", ignore_case=True)
    expect(page.get_by_test_id("kpi-chips")).to_contain_text("12")
    expect(page.get_by_test_id("kpi-chips")).to_contain_text("1 unhealthy")
    # free memory is what a slice can use: not the unhealthy 910B4's 32 GiB
    kpi_memory = page.get_by_test_id("kpi-memory")
    expect(kpi_memory).to_contain_text("297.1 GiB")
    expect(kpi_memory).to_contain_text("32 GiB unschedulable")
    expect(page.get_by_test_id("type-card-Ascend910B4")).to_contain_text(
        "216 GiB memory free"
    )
    expect(page.get_by_test_id("type-card-Ascend310P")).to_contain_text("4 chips")
    expect(page.get_by_test_id("type-card-Ascend910B4")).to_contain_text("8 chips")
    # the picture: every panel's data in (the banners' and the charts'), drawn
    page.wait_for_function(
        """paths => paths.every(path => performance.getEntriesByType("resource")
            .some(entry => entry.name.includes(path)))""",
        arg=[f"/api/clusters/{portal.cluster_id}/{call}" for call in OVERVIEW_CALLS],
        timeout=30_000,
    )
    page.evaluate(
        "() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))"
    )
    path = shot(page, "overview")
    if os.environ.get("UPDATE_README_SCREENSHOT"):
        # Only when asked: a test run must not change tracked files.
        shutil.copyfile(path, ROOT / "docs" / "screenshot.png")

    page.locator("nav").get_by_role("link", name="Nodes & chips").click()
    expect(page.get_by_test_id("chip-count")).to_contain_text(
        "12 of 12 chips · 2 nodes · 1 unhealthy"
    )
    expect(page.get_by_test_id("chip-row")).to_have_count(12)
    expect(page.locator("[data-testid=chip-row]", has_text="unhealthy")).to_have_count(
        1
    )
    # filters: chip type, state, node
    page.get_by_test_id("type-filter").select_option("Ascend310P")
    expect(page.get_by_test_id("chip-row")).to_have_count(4)
    page.get_by_test_id("type-filter").select_option("")
    page.get_by_test_id("state-filter").select_option("unhealthy")
    expect(page.get_by_test_id("chip-row")).to_have_count(1)
    page.get_by_test_id("state-filter").select_option("all")
    page.get_by_test_id("node-filter").fill("910b")
    expect(page.get_by_test_id("chip-row")).to_have_count(8)
    page.get_by_test_id("node-filter").fill("")
    expect(page.get_by_test_id("chip-row")).to_have_count(12)
    shot(page, "chips")


def test_a_new_pod_shows_up_on_its_chip_without_reload(page, portal, shot):
    chip_id = _chip_id(portal, CHIP_UUID)
    login(page, portal, path=f"/chips?chip={chip_id}")
    drawer = page.get_by_test_id("drawer")
    expect(drawer).to_contain_text("npu-node-310p-01 · Ascend310P #1")
    expect(drawer).to_contain_text("No slice on this chip.")
    row = page.locator(f"[data-chip-id='{chip_id}']")
    expect(row).to_contain_text("0 / 7")
    page.evaluate("window.__noReload = true")

    portal.kubectl("apply", "-f", "-", stdin=pinned_pod("e2e-live", CHIP_UUID))
    try:
        expect(drawer.get_by_test_id("chip-slices")).to_contain_text(
            "e2e-live", timeout=20_000
        )
        expect(drawer.get_by_test_id("chip-slices")).to_contain_text("vir01")
        expect(row).to_contain_text("1 / 7")
        expect(drawer.get_by_test_id("chip-metrics")).to_contain_text(
            "3 GiB / 21.0 GiB"
        )
        # the chip's history (from the API) has the pod placed on it
        history = drawer.get_by_test_id("chip-history")
        expect(history).to_contain_text("e2e-live", timeout=20_000)
        expect(history).to_contain_text("placed")
        assert page.evaluate("window.__noReload") is True, "the page was reloaded"
        shot(page, "chip-live-pod")

        # and the slices page finds it by name
        page.keyboard.press("Escape")
        expect(drawer).to_have_count(0)
        page.locator("nav").get_by_role("link", name="Slices").click()
        page.get_by_test_id("slice-search").fill("e2e-live")
        expect(page.get_by_test_id("slices-table")).to_contain_text(
            "npu-node-310p-01 #1"
        )
        shot(page, "slices")
    finally:
        portal.kubectl("delete", "pod", "e2e-live", "--wait=false")
    # gone again, still without reload
    page.go_back()
    expect(page.locator(f"[data-chip-id='{chip_id}']")).to_contain_text(
        "0 / 7", timeout=20_000
    )


def test_the_page_reconnects_and_resynchronises_after_the_server_restarts(
    page, portal, shot
):
    chip_id = _chip_id(portal, CHIP_UUID)
    login(page, portal, path="/chips")
    row = page.locator(f"[data-chip-id='{chip_id}']")
    expect(row).to_contain_text("0 / 7")
    page.evaluate("window.__noReload = true")
    portal.stop_web()
    try:
        expect(page.get_by_test_id("connection")).to_have_attribute(
            "data-state", "reconnecting"
        )
        expect(page.get_by_test_id("stale-banner")).to_contain_text(
            "Live updates are interrupted"
        )
        shot(page, "reconnecting")
        # a change while the page is cut off: it arrives with the next snapshot
        portal.kubectl(
            "apply",
            "-f",
            "-",
            stdin=pinned_pod("e2e-offline", CHIP_UUID),
        )
        wait_for(  # the cluster changed (the pod is bound) while the page is cut off
            lambda: portal.kubectl(
                "get", "pod", "e2e-offline", "-o", "jsonpath={.spec.nodeName}"
            ).strip(),
            "the offline pod to be bound",
            timeout=20,
        )
    finally:
        portal.start_web()
    try:
        expect(page.get_by_test_id("connection")).to_have_attribute(
            "data-state", "live", timeout=40_000
        )
        expect(page.get_by_test_id("stale-banner")).to_have_count(0)
        expect(row).to_contain_text("1 / 7", timeout=20_000)
        assert page.evaluate("window.__noReload") is True
    finally:
        portal.kubectl("delete", "pod", "e2e-offline", "--wait=false")
    expect(row).to_contain_text("0 / 7", timeout=20_000)


def test_an_invalid_template_value_shows_the_api_error_on_the_field(page, portal, shot):
    login(page, portal, path="/templates?type=Ascend310P")
    row = page.get_by_test_id("template-row-vir01")
    memory = row.locator("input[name=memory]")
    expect(memory).to_have_value("3072")
    memory.fill("99999")
    # the picture follows the draft before anything is saved
    expect(page.get_by_test_id("fit-picture")).to_contain_text(
        "more than memoryAllocatable"
    )
    row.get_by_test_id("save-template").click()
    error = row.get_by_test_id("error-memory")
    expect(error).to_contain_text(
        "memory 99999 MB is more than memoryAllocatable 21527 MB"
    )
    expect(memory).to_have_attribute("aria-invalid", "true")
    shot(page, "template-invalid")

    memory.fill("0")
    row.get_by_test_id("save-template").click()
    expect(error).to_contain_text("memory must be greater than 0")
    # nothing was written
    status, body = portal.api().call(
        "GET", f"/api/templates/?cluster={portal.cluster_id}&name=vir01"
    )
    assert status == 200, body
    assert [t["memory"] for t in body["results"]] == [3072]


def test_a_valid_edit_publishes_to_the_configmap(page, portal, shot):
    login(page, portal, path="/templates?type=Ascend310P")
    row = page.get_by_test_id("template-row-vir02")
    row.locator("input[name=memory]").fill("6000")
    row.get_by_test_id("save-template").click()
    expect(page.get_by_test_id("saved")).to_contain_text("Saved template vir02")
    expect(page.get_by_test_id("tab-publish")).to_contain_text("•")

    page.get_by_test_id("tab-publish").click()
    diff = page.get_by_test_id("diff").first
    expect(diff).to_contain_text("-    memory: 6144")
    expect(diff).to_contain_text("+    memory: 6000")
    expect(page.get_by_test_id("impact")).to_contain_text("vir02")
    page.get_by_test_id("publish-reason").fill("e2e: vir02 to 6000 MB")
    page.get_by_test_id("publish").click()
    expect(page.get_by_test_id("publish-result")).to_contain_text("Published v")
    shot(page, "template-published", full_page=True)

    def published() -> str:
        """the published template in the live ConfigMap"""
        text = portal.kubectl(
            "get", "cm", "hami-scheduler-device", "-n", "kube-system", "-o", "yaml"
        )
        return text if re.search(r"name: vir02\n\s+memory: 6000", text) else ""

    wait_for(published, timeout=10)

    # the components that read the config at start are now behind: restart one
    restarts = page.get_by_test_id("restarts")
    pending = restarts.get_by_test_id("config-in-effect-pending")
    expect(pending).to_contain_text("which volcano-scheduler loaded when it started")
    expect(pending).to_contain_text("takes effect when it restarts")
    hami = restarts.locator("tr", has_text="hami-scheduler").first
    expect(hami).to_contain_text("restart pending")
    hami.get_by_role("button", name="Restart").click()
    page.get_by_role("button", name="Restart every pod").click()
    expect(hami).not_to_contain_text("restart pending", timeout=20_000)
    # requests are placed by what Volcano loaded until it restarts too
    expect(pending).to_be_visible()
    volcano = restarts.locator("tr", has_text="volcano-scheduler").first
    volcano.get_by_role("button", name="Restart").click()
    page.get_by_role("button", name="Restart every pod").click()
    expect(pending).to_have_count(0, timeout=20_000)
    expect(restarts.get_by_test_id("config-in-effect")).to_contain_text("placed by v")
    shot(page, "template-restarted")

    # history: the published version is there, with the reason
    page.get_by_test_id("tab-history").click()
    expect(page.get_by_test_id("versions-table")).to_contain_text(
        "e2e: vir02 to 6000 MB"
    )
    shot(page, "template-history")


def test_a_viewer_sees_no_write_actions(page, portal, shot):
    portal.manage(
        "shell",
        "-c",
        "from django.contrib.auth import get_user_model;"
        "from apps.accounts.services import user_set_role;"
        "u, _ = get_user_model().objects.get_or_create(username='vera');"
        "u.set_password('vera-pw-123'); u.save(); user_set_role(user=u, role='viewer')",
    )
    login(page, portal, ("vera", "vera-pw-123"), path="/templates?type=Ascend310P")
    expect(page.get_by_test_id("user")).to_contain_text("viewer")
    expect(page.get_by_test_id("template-row-vir01")).to_be_visible()
    expect(page.get_by_test_id("add-template")).to_have_count(0)
    expect(page.get_by_role("button", name="Delete")).to_have_count(0)
    expect(
        page.get_by_test_id("template-row-vir01").locator("input[name=memory]")
    ).to_have_attribute("readonly", "")
    page.get_by_test_id("tab-publish").click()
    expect(page.get_by_test_id("publish")).to_have_count(0)
    expect(page.get_by_role("button", name="Restart")).to_have_count(0)
    shot(page, "viewer-publish")


@contextlib.contextmanager
def _approved_in_the_browser(page, portal, shot):
    """Every healthy 910B4 chip busy; a whole-card inference-high request can only
    run if the one batch-low pod goes: the admin approves that in the browser,
    and the victim leaves the cluster. Yields (request id, victim chip, row)."""
    api = portal.api()
    status, body = api.call(
        "GET",
        f"/api/chips/?cluster={portal.cluster_id}&common_word=Ascend910B4"
        "&healthy=true&page_size=100",
    )
    assert status == 200, body
    idle = sorted(
        (c for c in body["results"] if c["slots_used"] == 0), key=lambda c: c["index"]
    )
    assert len(idle) >= 2, body  # the guide: chip 0 busy, chip 5 unhealthy
    victim_chip = idle[-1]
    pods = [(f"e2e-keep-{c['index']}", c["uuid"], "inference-high") for c in idle[:-1]]
    pods.append(("e2e-victim", victim_chip["uuid"], "batch-low"))
    request_id = None
    try:
        for name, uuid, priority in pods:
            portal.kubectl(
                "apply",
                "-f",
                "-",
                stdin=pinned_pod(
                    name,
                    uuid,
                    chip_type="Ascend910B4",
                    memory=None,
                    priority_class=priority,
                ),
            )

        def all_busy():
            status, body = api.call(
                "GET",
                f"/api/slices/?cluster={portal.cluster_id}&namespace=default"
                "&page_size=100",
            )
            names = {s["pod_name"] for s in body["results"]} if status == 200 else set()
            return {name for name, _, _ in pods} <= names

        wait_for(all_busy, "the filler pods to be synced as slices", timeout=30)

        status, submitted = api.call(
            "POST",
            "/api/requests/",
            {
                "cluster": "demo",
                "namespace": "default",
                "chip_type": "Ascend910B4",
                "whole_card": True,
                "priority": "inference-high",
                "workload": {"image": "busybox", "command": ["sleep", "3600"]},
            },
        )
        assert status == 201, submitted
        request_id = submitted["id"]

        # the chip's drawer shows the victim before anything is decided
        login(page, portal, path=f"/chips?chip={victim_chip['id']}")
        slices = page.get_by_test_id("drawer").get_by_test_id("chip-slices")
        expect(slices).to_contain_text("e2e-victim")
        page.evaluate("window.__noReload = true")
        page.keyboard.press("Escape")

        page.locator("nav").get_by_role("link", name="Preemptions").click()
        row = page.locator("tr[data-testid^=proposal-]", has_text=f"#{request_id}")
        expect(row).to_contain_text("default/e2e-victim", timeout=20_000)
        expect(row).to_contain_text("prio 100")
        expect(row).to_contain_text("pending")
        for name, _, _ in pods[:-1]:  # higher-priority work is never a victim
            expect(row).not_to_contain_text(name)
        shot(page, "preemption-proposal")

        row.get_by_role("button", name="Approve").click()
        page.get_by_test_id("decision-submit").click()
        expect(page.locator(".field-error, [role=alert]").first).to_be_visible()
        page.get_by_test_id("decision-reason").fill("e2e: the release needs a card")
        page.get_by_test_id("decision-submit").click()
        expect(page.get_by_test_id("decision-reason")).to_have_count(0)
        expect(row).to_contain_text("by admin")
        expect(row).to_contain_text(re.compile("approved|done"))
        expect(row.get_by_role("button", name="Approve")).to_have_count(0)

        # the victim is gone from the cluster ...
        wait_for(
            lambda: (
                "e2e-victim"
                not in portal.kubectl("get", "pods", "-n", "default", "-o", "name")
            ),
            "kubectl to stop listing the victim",
            timeout=30,
        )
        yield request_id, victim_chip, row
    finally:
        if request_id is not None:
            api.call("DELETE", f"/api/requests/{request_id}/")
        portal.kubectl(
            "delete",
            "pod",
            "--ignore-not-found",
            "--wait=false",
            *(name for name, _, _ in pods),
        )


def test_a_preemption_is_approved_and_the_victim_disappears(page, portal, shot):
    """Where the request then runs is not checked here: under Volcano it may land
    on the sick chip 5 or on the victim's chip before the victim is gone (issue
    14); the scheduling and real-stack tests pin that down deterministically."""
    with _approved_in_the_browser(page, portal, shot) as (_, _, row):
        # the decision stays on the page after the victim has gone
        expect(row).to_contain_text("by admin")
        expect(row.get_by_role("button", name="Reject")).to_have_count(0)


def test_django_serves_the_app_and_keeps_api_404s_json(portal):
    for path in ("/", "/chips", "/templates?tab=publish"):
        with urllib.request.urlopen(portal.url + path) as response:  # noqa: S310
            body = response.read().decode()
            assert response.status == 200
            assert '<div id="root">' in body
            assert response.headers["Cache-Control"] == "no-cache"
    asset = re.search(r'src="(/assets/[^"]+\.js)"', body).group(1)
    request = urllib.request.Request(  # noqa: S310
        portal.url + asset, headers={"Accept-Encoding": "gzip"}
    )
    with urllib.request.urlopen(request) as response:  # noqa: S310
        assert response.status == 200
        assert "javascript" in response.headers["Content-Type"]
    with pytest.raises(urllib.error.HTTPError) as info:
        urllib.request.urlopen(portal.url + "/api/no-such-endpoint/")  # noqa: S310
    assert info.value.code == 404
    assert info.value.headers["Content-Type"] == "application/json"
    assert json.loads(info.value.read())["code"] == "not_found"
    with pytest.raises(urllib.error.HTTPError) as info:
        urllib.request.urlopen(portal.url + "/no-such-file.png")  # noqa: S310
    assert info.value.code == 404


def test_the_api_docs_render_without_internet(page, portal, shot):
    """Swagger UI comes from the portal itself: every request that leaves the
    portal's host is refused, and the page still renders the whole API."""
    portal_host = urllib.parse.urlsplit(portal.url).netloc
    outside: list[str] = []

    def only_the_portal(route: Any) -> None:
        if urllib.parse.urlsplit(route.request.url).netloc == portal_host:
            route.continue_()
        else:
            outside.append(route.request.url)
            route.abort()

    login(page, portal)
    page.route("**/*", only_the_portal)
    page.goto(portal.url + "/api/docs/")
    page.wait_for_selector(".swagger-ui .info .title")
    assert "vNPU Portal API" in page.inner_text(".swagger-ui .info .title")
    # The operations are listed from the portal's schema (session auth).
    page.wait_for_selector(".opblock-summary-path[data-path='/api/requests/']")
    shot(page, "api-docs")
    assert outside == []


def test_room_is_room_for_a_template_on_the_chips_page(page, portal, shot):
    """The page's room filter agrees with the API's (two implementations of one
    rule), and a chip's drawer says which templates still fit."""
    login(page, portal, path="/chips")
    for template in ("vir05_1c_8g", "vir10_3c_16g", "vir04"):
        answer = page.request.get(
            portal.url + "/api/chips/", params={"room_for": template, "page_size": 500}
        )
        assert answer.status == 200
        expected = answer.json()["count"]
        assert expected > 0
        page.get_by_test_id("room-filter").select_option(template)
        expect(page.get_by_test_id("chip-row")).to_have_count(expected)
    page.get_by_test_id("room-filter").select_option("")
    expect(page.get_by_test_id("chip-row")).to_have_count(12)

    chip = page.request.get(
        portal.url + "/api/chips/",
        params={"chip_type": "Ascend910B4", "healthy": "true"},
    ).json()["results"][0]
    page.goto(portal.url + f"/chips?chip={chip['id']}")
    room = page.get_by_test_id("chip-room")
    if chip["fits"]:
        expect(room).to_contain_text(f"largest: {chip['largest_template']}")
    else:
        expect(room).to_contain_text("No room for any template")
    shot(page, "chip-room")


def test_adopting_a_hand_edit_asks_first_and_names_the_edits_it_discards(
    page, portal, shot
):
    # someone edits the ConfigMap by hand: vir01 3072 -> 3000 MB
    cm = json.loads(
        portal.kubectl(
            "get", "cm", "hami-scheduler-device", "-n", "kube-system", "-o", "json"
        )
    )
    key = next(iter(cm["data"]))
    edited, n = re.subn(r"(name: vir01\n\s+memory: )\d+", r"\g<1>3000", cm["data"][key])
    assert n == 1, cm["data"][key]
    cm["data"][key] = edited
    portal.kubectl("replace", "-f", "-", stdin=json.dumps(cm))

    # and an operator has an unpublished edit of vir04
    login(page, portal, path="/templates?type=Ascend310P")
    row = page.get_by_test_id("template-row-vir04")
    row.locator("input[name=memory]").fill("12000")
    row.get_by_test_id("save-template").click()
    expect(page.get_by_test_id("saved")).to_contain_text("Saved template vir04")

    page.get_by_test_id("tab-publish").click()
    banner = page.get_by_test_id("drift-banner")
    expect(banner).to_be_visible(timeout=20_000)
    banner.get_by_test_id("adopt").click()
    discards = page.get_by_test_id("adopt-discards")
    expect(discards).to_contain_text("+    memory: 12000")
    shot(page, "adopt-asks-first")

    # cancelling changes nothing
    page.get_by_role("button", name="Cancel").click()
    expect(discards).to_have_count(0)
    templates = page.request.get(
        portal.url + "/api/templates/", params={"name": "vir04", "page_size": 50}
    ).json()["results"]
    assert {t["memory"] for t in templates if t["common_word"] == "Ascend310P"} == {
        12000
    }

    banner.get_by_test_id("adopt").click()
    page.get_by_test_id("adopt-confirm").click()
    expect(page.get_by_text("Adopted the live ConfigMap as v")).to_be_visible()
    memories = {
        t["name"]: t["memory"]
        for t in page.request.get(
            portal.url + "/api/templates/",
            params={"common_word": "Ascend310P", "page_size": 50},
        ).json()["results"]
    }
    assert memories["vir01"] == 3000  # the hand edit is the portal's now
    assert memories["vir04"] == 12288  # the unpublished edit is gone, as it said


def test_requests_show_who_submitted_them_the_whole_reason_and_copyable_uuids(
    page, portal, shot
):
    api = portal.api()
    # More memory than any template: it waits with a long reason.
    status, submitted = api.call(
        "POST",
        "/api/requests/",
        {
            "cluster": "demo",
            "namespace": "default",
            "chip_type": "Ascend310P",
            "memory": 24576,
            "priority": "batch-low",
            "workload": {"image": "busybox", "command": ["sleep", "60"]},
        },
    )
    assert status == 201, submitted
    try:
        page.context.grant_permissions(["clipboard-read", "clipboard-write"])
        login(page, portal, path="/requests")
        row = page.get_by_test_id(f"request-{submitted['id']}")
        expect(row.get_by_test_id("submitted-by")).to_have_text(
            submitted["submitted_by"]
        )
        reason = row.get_by_test_id("request-reason")
        expect(reason).to_have_class(re.compile(r"\bclamp-2\b"))
        reason.click()
        expect(reason).not_to_have_class(re.compile(r"\bclamp-2\b"))
        shot(page, "requests-by-and-reason")

        status, chips = api.call(
            "GET", f"/api/chips/?cluster={portal.cluster_id}&page_size=1"
        )
        chip = chips["results"][0]
        page.goto(portal.url + f"/chips?chip={chip['id']}")
        copy = page.get_by_test_id("chip-uuid")
        expect(copy).to_contain_text(chip["uuid"])  # whole, not truncated
        copy.get_by_role("button").click()
        expect(copy.get_by_role("button")).to_have_text("Copied")
        assert page.evaluate("navigator.clipboard.readText()") == chip["uuid"]
    finally:
        api.call("DELETE", f"/api/requests/{submitted['id']}/")


def test_the_usage_chart_zooms_into_a_period_and_back(page, portal, shot):
    # an hour of samples, one a minute, with a 20-minute hole (the worker was down)
    portal.manage(
        "shell",
        "-c",
        "from datetime import timedelta;"
        "from django.utils import timezone;"
        "from apps.inventory.models import Cluster, UsageSample;"
        "c = Cluster.objects.get(name='demo'); now = timezone.now();"
        "UsageSample.objects.bulk_create([UsageSample(cluster=c, common_word='Ascend310P',"
        " at=now - timedelta(minutes=m), chips=4, memory_total=86108, memory_used=1000 * m,"
        " slots_total=28, slots_used=m % 28, aicore_total=32, aicore_used=m % 32)"
        " for m in range(1, 61) if not 20 <= m < 40])",
    )
    login(page, portal, path="/")
    chart = page.get_by_test_id("line-chart")
    expect(chart).to_contain_text("drag across the chart to zoom")
    expect(chart.locator(".u-legend")).to_contain_text("Ascend310P")
    canvas = chart.locator(".u-over")
    plot = chart.get_by_test_id("line-chart-plot")

    def shown() -> tuple[int, int]:
        return int(plot.get_attribute("data-from")), int(plot.get_attribute("data-to"))

    # The chart may draw the live samples first; the stored hour follows.
    def the_hour() -> tuple[int, int] | None:
        span = shown()
        return span if span[1] - span[0] >= 3600 else None

    whole = wait_for(the_hour, "the chart to span the stored hour", timeout=20)
    # Where to drag is measured once the stored hour is drawn and the page
    # has stopped moving: measured before, a late layout shift made the drag
    # miss the chart when the machine was busy.
    seen: list[dict | None] = [None]

    def settled_box() -> dict | None:
        # the same box on two reads in a row (wait_for reads every 0.2 s)
        before, seen[0] = seen[0], canvas.bounding_box()
        return seen[0] if seen[0] is not None and seen[0] == before else None

    box = wait_for(settled_box, "the chart's layout to settle", timeout=20)
    # when the admin drags across a fifth of the chart, before the hole:
    # each point is given relative to the chart and placed when the mouse
    # moves there, so a layout shift after the measure cannot move the drag
    # off the chart (fresh-clone run f8: it began left of the plot)
    y = box["height"] / 2
    canvas.hover(position={"x": box["width"] * 0.08, "y": y})
    page.mouse.down()
    for fraction in (0.13, 0.18, 0.23, 0.28):
        canvas.hover(position={"x": box["width"] * fraction, "y": y})
    page.mouse.up()
    # then it shows that period only, and says how to go back
    expect(chart.get_by_test_id("chart-reset-zoom")).to_be_visible()

    # The span attributes follow the zoom a render later than the button
    # (fresh-clone runs f8 and f10 read the whole hour still there).
    def zoomed_in() -> tuple[int, int] | None:
        span = shown()
        return span if span != whole else None

    start, end = wait_for(zoomed_in, "the chart to show the dragged period", timeout=20)
    assert whole[0] < start < end < whole[1]
    assert end - start < (whole[1] - whole[0]) / 3
    # the legend gives the value under the cursor
    canvas.hover(position={"x": box["width"] * 0.5, "y": y + 10})
    expect(chart.locator(".u-legend")).to_contain_text("%")
    shot(page, "usage-zoomed")
    chart.get_by_test_id("chart-reset-zoom").click()
    expect(chart).to_contain_text("drag across the chart to zoom")
    start, end = wait_for(the_hour, "the chart to span the hour again", timeout=20)
    assert start <= whole[0] + 60
    assert end >= whole[1] - 60
