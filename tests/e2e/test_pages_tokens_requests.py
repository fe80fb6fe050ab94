"""The API tokens page and submitting a request from the browser, end to end.

An admin issues a CI token in the browser, copies it and a pipeline's REST call
works with it; rotating it makes the old one 401, revoking it the new one. An
operator submits a request from the form and watches it run on its detail page.
"""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import login

pytestmark = pytest.mark.browser

OPERATOR = ("olga", "olga-pw-123")


def _as_pipeline(portal: Any, token: str, path: str = "/api/requests/") -> int:
    """A pipeline's GET with a bearer token (no session, no cookie): the status."""
    request = urllib.request.Request(  # noqa: S310 - our own http://127.0.0.1 URL
        portal.url + path, headers={"Authorization": f"Bearer {token}"}
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310
            json.loads(response.read().decode())
            return response.status
    except urllib.error.HTTPError as exc:
        return exc.code


def _copied_token(page: Any) -> str:
    """Click Copy on the shown-once token and read what reached the clipboard."""
    issued = page.get_by_test_id("issued-copy")
    issued.get_by_role("button").click()
    expect(issued.get_by_role("button")).to_have_text("Copied")
    token = page.evaluate("navigator.clipboard.readText()")
    assert token.startswith("vnp_"), token
    return token


def _ensure_operator(portal: Any) -> None:
    portal.manage(
        "shell",
        "-c",
        "from django.contrib.auth import get_user_model;"
        "from apps.accounts.services import user_set_role;"
        f"u, _ = get_user_model().objects.get_or_create(username='{OPERATOR[0]}');"
        f"u.set_password('{OPERATOR[1]}'); u.save(); user_set_role(user=u, role='operator')",
    )


def test_an_admin_creates_copies_rotates_and_revokes_a_ci_token(page, portal, shot):
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    login(page, portal)
    page.locator("nav").get_by_role("link", name="API tokens").click()
    expect(page).to_have_url(re.compile(r"/tokens$"))

    page.get_by_test_id("token-new").click()
    page.get_by_test_id("token-username").fill("e2e-pipeline")
    page.get_by_test_id("token-name").fill("e2e nightly")
    page.get_by_test_id("token-role").select_option("ci")
    # a non-admin's token must name its queues (issue 39): the form says so
    page.get_by_test_id("token-submit").click()
    expect(page.get_by_text("limited to the queues it names")).to_be_visible()
    page.get_by_test_id("token-queues").fill("ci")
    page.get_by_test_id("token-submit").click()
    expect(page.get_by_text("you will not see it again")).to_be_visible()
    shot(page, "token-created")
    first = _copied_token(page)
    page.get_by_test_id("issued-done").click()
    expect(page.get_by_test_id("issued-token")).to_have_count(0)
    expect(page.get_by_text(first)).to_have_count(0)  # shown once

    assert _as_pipeline(portal, first) == 200
    row = page.locator("tr[data-testid^=token-]", has_text="e2e nightly").first
    expect(row).to_contain_text("e2e-pipeline")
    expect(row).to_contain_text("/ci")  # cluster/queue
    expect(row).to_contain_text("active")
    row_id = row.get_attribute("data-testid").removeprefix("token-")
    shot(page, "tokens")

    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_test_id(f"rotate-{row_id}").click()
    expect(page.get_by_text("The old token no longer works")).to_be_visible()
    second = _copied_token(page)
    assert second != first
    page.get_by_test_id("issued-done").click()
    assert _as_pipeline(portal, first) == 401
    assert _as_pipeline(portal, second) == 200
    expect(page.get_by_test_id(f"token-{row_id}")).to_contain_text("revoked")

    # the rotated token's row: revoke it, after saying yes
    fresh = page.locator("tr[data-testid^=token-]", has_text="e2e nightly").filter(
        has_text="active"
    )
    fresh_id = fresh.get_attribute("data-testid").removeprefix("token-")
    page.once("dialog", lambda dialog: dialog.dismiss())
    page.get_by_test_id(f"revoke-{fresh_id}").click()
    expect(page.get_by_test_id(f"token-{fresh_id}")).to_contain_text("active")
    assert _as_pipeline(portal, second) == 200
    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_test_id(f"revoke-{fresh_id}").click()
    expect(page.get_by_test_id(f"token-{fresh_id}")).to_contain_text("revoked")
    assert _as_pipeline(portal, second) == 401


def test_the_tokens_page_is_for_admins_only(page, portal):
    _ensure_operator(portal)
    login(page, portal, OPERATOR)
    expect(page.locator("nav").get_by_role("link", name="Requests")).to_be_visible()
    expect(page.locator("nav").get_by_role("link", name="API tokens")).to_have_count(0)
    page.goto(portal.url + "/tokens")
    expect(page.get_by_test_id("admins-only")).to_contain_text("admins only")


def test_an_operator_submits_a_request_and_watches_it_run(page, portal, shot):
    _ensure_operator(portal)
    login(page, portal, OPERATOR, path="/requests")
    page.get_by_test_id("request-new").click()
    expect(page).to_have_url(re.compile(r"/requests/new$"))
    page.get_by_test_id("submit-chip-type").select_option("Ascend310P")
    page.get_by_role("button", name="Template").click()
    expect(page.get_by_test_id("submit-template")).to_contain_text("vir01")
    page.get_by_role("button", name="Memory").click()
    page.get_by_test_id("submit-memory").fill("lots")
    page.get_by_test_id("submit-image").fill("busybox")
    page.get_by_test_id("submit-command").fill('sh -c "sleep 600"')
    page.get_by_test_id("submit-time-limit").fill("900")
    page.get_by_test_id("submit-request").click()
    # the API's 400 lands on the memory field, and nothing was created
    expect(page.locator(".field-error").first).to_contain_text("integer")
    expect(page).to_have_url(re.compile(r"/requests/new$"))

    page.get_by_test_id("submit-memory").fill("3072")
    # the demo cluster has no global default PriorityClass: the form says so
    expect(page.get_by_test_id("submit-priority")).to_contain_text("no default")
    page.get_by_test_id("submit-priority").select_option("batch-medium")
    page.get_by_test_id("submit-request").click()
    expect(page).to_have_url(re.compile(r"/requests/\d+$"))
    request_id = int(page.url.rsplit("/", 1)[1])
    try:
        expect(page.get_by_test_id("step-submitted")).to_have_attribute(
            "data-done", "yes"
        )
        expect(page.get_by_test_id("detail-state")).to_have_text(
            "running", timeout=60_000
        )
        for step in ("reserved", "admitted", "running"):
            expect(page.get_by_test_id(f"step-{step}")).to_have_attribute(
                "data-done", "yes"
            )
        expect(page.get_by_test_id("step-finished")).to_have_attribute(
            "data-done", "no"
        )
        status, body = portal.api().call("GET", f"/api/requests/{request_id}/")
        assert status == 200, body
        assert body["submitted_by"] == OPERATOR[0]
        assert body["workload"]["command"] == ["sh", "-c", "sleep 600"]
        assert body["time_limit_seconds"] == 900
        expect(page.get_by_test_id("detail-node")).to_have_text(body["node"])
        expect(page.get_by_test_id("detail-chip")).to_contain_text(
            body["chip_uuid"], timeout=30_000
        )
        expect(page.get_by_test_id("detail-history")).to_contain_text(
            "request.create by olga"
        )
        shot(page, "request-detail")

        # the requests table leads back to it
        page.get_by_role("link", name="all requests").click()
        page.get_by_test_id(f"open-{request_id}").click()
        expect(page).to_have_url(re.compile(rf"/requests/{request_id}$"))
        expect(page.get_by_test_id("detail-state")).to_have_text("running")
    finally:
        portal.api().call("DELETE", f"/api/requests/{request_id}/")
