"""The Queues and PriorityClasses pages end to end, as an admin and a viewer use them.

A real portal on simcluster's ``guide`` scenario (whose PriorityClasses and
demo queue ``ci`` these pages show) and headless Chromium; each test signs in
through the login form.
"""

from __future__ import annotations

import re
import uuid

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import login

pytestmark = pytest.mark.browser

# The guide's PriorityClasses, highest value first (simcluster/scenarios.py).
GUIDE_CLASSES = [
    "system-node-critical",
    "system-cluster-critical",
    "inference-high",
    "batch-medium",
    "batch-low",
]


def _queue_name(prefix: str) -> str:
    # Unique per run: the portal (and its Volcano Queues) live for the whole session.
    return f"{prefix}-{uuid.uuid4().hex[:6]}"


def test_an_admin_creates_a_queue_sets_a_quota_and_sees_it(page, portal, shot):
    name = _queue_name("team")
    login(page, portal)
    page.get_by_role("link", name="Queues").click()
    expect(page).to_have_url(re.compile(r"/queues$"))
    # the demo's queue, with its pod policy
    expect(page.get_by_test_id("policy-ci")).to_contain_text("Namespaces ci")

    # a name the API refuses: its message on the name field
    page.get_by_test_id("queue-create").click()
    page.get_by_test_id("queue-name").fill("ci")
    page.get_by_test_id("queue-create-submit").click()
    expect(page.get_by_role("dialog").get_by_role("alert")).to_contain_text(
        "already exists"
    )
    expect(page.get_by_test_id("queue-name")).to_have_class(re.compile(r"\binvalid\b"))

    page.get_by_test_id("queue-name").fill(name)
    page.get_by_test_id("queue-namespaces").fill("default, ci")
    page.get_by_test_id("queue-create-submit").click()
    card = page.get_by_test_id(f"queue-{name}")
    expect(card).to_be_visible()
    expect(page.get_by_role("dialog")).to_have_count(0)
    expect(page.get_by_test_id(f"policy-{name}")).to_contain_text(
        "Namespaces ci, default · Pod Security restricted · Service accounts default only"
    )
    expect(page.get_by_test_id(f"no-quota-{name}")).to_be_visible()
    expect(page.get_by_test_id(f"volcano-{name}")).to_contain_text("Volcano:")

    # a quota: a negative vNPU limit is refused on that field, then fixed
    page.get_by_test_id(f"edit-quotas-{name}").click()
    page.get_by_test_id("quota-add").click()
    page.get_by_test_id("quota-0-chip_type").select_option("Ascend310P")
    page.get_by_test_id("quota-0-memory_limit").fill("12288")
    page.get_by_test_id("quota-0-slots_limit").fill("-1")
    page.get_by_test_id("quota-submit").click()
    expect(page.get_by_test_id("quota-0-slots_limit")).to_have_class(
        re.compile(r"\binvalid\b")
    )
    expect(page.get_by_role("dialog")).to_contain_text("greater than or equal to 0")
    shot(page, "queue-quota-error")
    page.get_by_test_id("quota-0-slots_limit").fill("4")
    page.get_by_test_id("quota-submit").click()
    expect(page.get_by_role("dialog")).to_have_count(0)

    row = page.get_by_test_id(f"quota-{name}-Ascend310P")
    expect(row.get_by_test_id("quota-memory")).to_contain_text("0 MB / 12 GiB")
    expect(row.get_by_test_id("quota-slots")).to_contain_text("0 / 4")
    expect(page.get_by_test_id(f"counts-{name}")).to_have_text("0 pending · 0 running")
    shot(page, "queues")

    # what the page showed is what the API holds
    status, body = portal.api().call(
        "GET", f"/api/queues/?cluster={portal.cluster_id}&name={name}"
    )
    assert status == 200, body
    (queue,) = body["results"]
    assert queue["allowed_namespaces"] == ["ci", "default"]
    assert queue["quotas"] == [
        {"chip_type": "Ascend310P", "memory_limit": 12288, "slots_limit": 4}
    ]

    # still there after a reload (the quota was saved, not only drawn)
    page.reload()
    expect(
        page.get_by_test_id(f"quota-{name}-Ascend310P").get_by_test_id("quota-slots")
    ).to_contain_text("0 / 4")


def test_the_priority_classes_page_shows_the_guides_classes_by_value(
    page, portal, shot
):
    login(page, portal)
    page.get_by_role("link", name="PriorityClasses").click()
    expect(page).to_have_url(re.compile(r"/priority-classes$"))
    table = page.get_by_test_id("priority-classes")
    expect(table).to_be_visible()
    rows = table.locator("tbody tr")
    expect(rows).to_have_count(len(GUIDE_CLASSES))
    assert [
        rows.nth(i).get_attribute("data-testid") for i in range(len(GUIDE_CLASSES))
    ] == [f"priority-{name}" for name in GUIDE_CLASSES]
    expect(page.get_by_test_id("priority-inference-high")).to_contain_text("100,000")
    expect(page.get_by_test_id("priority-inference-high")).to_contain_text(
        "Online inference: scheduled first."
    )
    expect(page.get_by_test_id("priority-batch-low")).to_contain_text(
        '"priority": "batch-low"'
    )
    # the guide has no global default: a request must name its class
    expect(page.get_by_test_id("priority-default")).to_contain_text(
        "a request must name one"
    )
    expect(page.get_by_text("never preempts")).to_have_count(0)
    shot(page, "priority-classes")


def test_a_viewer_reads_queues_without_write_controls(page, portal, shot):
    name = _queue_name("viewed")
    status, body = portal.api().call(
        "POST",
        "/api/queues/",
        {
            "cluster": portal.cluster_id,
            "name": name,
            "quotas": [{"chip_type": "Ascend310P", "slots_limit": 2}],
        },
    )
    assert status == 201, body
    portal.manage(
        "shell",
        "-c",
        "from django.contrib.auth import get_user_model;"
        "from apps.accounts.services import user_set_role;"
        "u, _ = get_user_model().objects.get_or_create(username='vic');"
        "u.set_password('vic-pw-12345'); u.save(); user_set_role(user=u, role='viewer')",
    )
    login(page, portal, ("vic", "vic-pw-12345"), path="/queues")
    expect(page.get_by_test_id("user")).to_contain_text("viewer")
    row = page.get_by_test_id(f"quota-{name}-Ascend310P")
    expect(row.get_by_test_id("quota-slots")).to_contain_text("0 / 2")
    expect(row.get_by_test_id("quota-memory")).to_contain_text("unlimited")
    expect(page.get_by_test_id("queue-create")).to_have_count(0)
    expect(page.get_by_role("button", name="Edit quotas")).to_have_count(0)
    shot(page, "viewer-queues")
    page.get_by_role("link", name="PriorityClasses").click()
    expect(page.get_by_test_id("priority-batch-low")).to_be_visible()
