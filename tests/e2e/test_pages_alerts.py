"""The Overview's Alerts panel and the Alerts page end to end, on the demo
portal without an Alertmanager: the portal evaluates the alerts itself, and
the guide scenario's unhealthy 910B4 chip fires VnpuChipUnhealthy."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import login

pytestmark = pytest.mark.browser


def test_the_sick_chip_s_alert_on_the_overview_and_the_alerts_page(page, portal, shot):
    login(page, portal)
    # the Overview's panel: the critical alert counted, and why it is only a display
    panel = page.get_by_test_id("alerts-panel")
    expect(panel.get_by_test_id("alerts-source")).to_contain_text(
        "Notifications are not configured"
    )
    expect(panel.get_by_test_id("alerts-count-critical")).not_to_have_text("0")
    expect(panel.get_by_test_id("alerts-panel-item").first).to_contain_text(
        "reported unhealthy"
    )

    # the page, from the navigation: the alert, true now, with its runbook
    page.get_by_role("link", name="Alerts", exact=True).click()
    expect(page).to_have_url(re.compile(r"/alerts$"))
    row = page.get_by_test_id("alert-VnpuChipUnhealthy")
    expect(row).to_contain_text("critical")
    expect(row).to_contain_text("now")
    expect(row).to_contain_text("docs/alerts.md#vnpuchipunhealthy")
    # without Alertmanager there is nothing to silence, even for an admin
    expect(page.get_by_test_id("silence-VnpuChipUnhealthy")).to_have_count(0)
    shot(page, "alerts")

    # its link opens the chip on Nodes & chips, named by its UUID
    row.get_by_role("link", name="Open").click()
    expect(page).to_have_url(re.compile(r"/chips\?cluster=demo&chip=[0-9A-F-]+"))
    expect(page.get_by_test_id("drawer")).to_contain_text("unhealthy")
