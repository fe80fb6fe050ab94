"""The Usage and Cost pages end to end (issue 18): booked next to used, and cost.

First without Prometheus (the portal says how to get used figures and keeps the
booked ones), then with a real Prometheus scraping the simulator's
npu-exporters: the module's ``metered`` fixture starts one, restarts the
portal's web process with ``PROMETHEUS_URL`` (``Stack.extra_env``) and fills the booking ledger
(``metering_refresh``, which the worker runs in a deployment); at the end the
web process is restarted without it. The tests run in file order: the one
without Prometheus comes first.
"""

from __future__ import annotations

import re
import urllib.parse
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import login
from tests.requires import missing

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def metered(portal: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from harness.prometheus import Prometheus, binary

    if binary() is None:
        missing("prometheus is not installed (apt-get install prometheus)")
    prometheus = Prometheus(portal.sim, tmp_path_factory.mktemp("prometheus")).start()
    portal.extra_env["PROMETHEUS_URL"] = prometheus.url
    try:
        portal.stop_web()
        portal.start_web()
        portal.manage(
            "shell",
            "-c",
            "from apps.metering.services import metering_refresh; metering_refresh()",
        )
        yield prometheus
    finally:
        portal.extra_env.pop("PROMETHEUS_URL", None)
        portal.stop_web()
        portal.start_web()
        prometheus.stop()


def test_usage_says_how_to_see_use_without_prometheus(page, portal, shot):
    assert "PROMETHEUS_URL" not in portal.extra_env, (
        "run this module's tests in file order"
    )
    login(page, portal)
    page.get_by_role("link", name="Usage").click()
    expect(page).to_have_url(re.compile(r"/usage$"))
    expect(page.get_by_test_id("metrics-banner")).to_contain_text(
        "Set PROMETHEUS_URL to see what slices use; booked figures are shown"
    )
    rows = page.get_by_test_id("usage-chip-row")
    expect(rows.first).to_be_visible()
    # booked figures are there, used ones are a dash
    expect(rows.first.get_by_test_id("aicore-bar")).to_have_text(
        re.compile(r"^\d+% booked · — used$")
    )
    shot(page, "usage-no-prometheus")


def test_usage_shows_use_and_zooms_into_a_chip_history(page, portal, metered, shot):
    login(page, portal, path="/usage?sort=aicore_used")
    rows = page.get_by_test_id("usage-chip-row")
    expect(rows.first).to_be_visible()
    expect(page.get_by_test_id("metrics-banner")).to_have_count(0)
    # the busiest chip first: a slice on it, its use measured
    busiest = rows.first
    expect(busiest.get_by_test_id("aicore-bar")).to_have_text(
        re.compile(r"^\d+% booked · \d+% used$")
    )
    assert busiest.get_by_test_id("aicore-bar").get_attribute("data-booked") != "0.0"
    shot(page, "usage-chips")

    busiest.click()
    history = page.get_by_test_id("usage-history")
    expect(history.get_by_test_id("history-window")).to_contain_text(
        "a point every 15s"
    )
    charts = history.get_by_test_id("line-chart")
    expect(charts).to_have_count(2)
    expect(charts.first.locator(".u-legend")).to_contain_text("AICore used")
    expect(charts.first.locator(".u-legend")).to_contain_text("AICore booked")
    shot(page, "usage-chip-history")

    # a drag across the last tenth of the hour asks for that window, finer
    box = charts.first.locator(".u-over").bounding_box()
    assert box is not None
    y = box["y"] + box["height"] / 2
    with page.expect_request(re.compile(r"/api/usage/chips/\d+/history/")) as asked:
        page.mouse.move(box["x"] + box["width"] * 0.9, y)
        page.mouse.down()
        page.mouse.move(box["x"] + box["width"] * 0.995, y, steps=8)
        page.mouse.up()
    query = urllib.parse.parse_qs(urllib.parse.urlsplit(asked.value.url).query)
    assert int(query["step"][0]) < 15
    start = datetime.fromisoformat(query["start"][0].replace("Z", "+00:00"))
    end = datetime.fromisoformat(query["end"][0].replace("Z", "+00:00"))
    assert 60 < (end - start).total_seconds() < 600
    expect(history.get_by_test_id("history-window")).to_contain_text("Zoomed to")
    shot(page, "usage-chip-history-zoomed")
    history.get_by_test_id("history-unzoom").click()
    expect(history.get_by_test_id("history-window")).not_to_contain_text("Zoomed")


def test_the_slices_tab_lists_what_each_slice_uses(page, portal, metered, shot):
    login(page, portal, path="/usage?tab=slices")
    rows = page.get_by_test_id("usage-slice-row")
    expect(rows.first).to_be_visible()
    expect(rows.first).to_contain_text(re.compile(r"\d+% of \d+ cores"))
    shot(page, "usage-slices")
    rows.first.click()
    expect(page.get_by_test_id("usage-slice-summary")).to_contain_text("booked")
    expect(
        page.get_by_test_id("usage-history").get_by_test_id("line-chart")
    ).to_have_count(2)


def test_an_admin_prices_a_chip_type_and_the_cost_follows(page, portal, metered, shot):
    page.on("dialog", lambda dialog: dialog.accept())
    login(page, portal, path="/cost?group=chip_type")
    table = page.get_by_test_id("cost-table")
    expect(table.get_by_test_id("report-row").first).to_be_visible()
    month = datetime.now(UTC).strftime("%Y-%m")
    csv = page.get_by_test_id("cost-csv")
    expect(csv).to_have_attribute(
        "href",
        f"/api/usage/report/?cluster={portal.cluster_id}&group_by=chip_type&month={month}&format=csv",
    )

    row = page.get_by_test_id("price-Ascend310P")
    row.get_by_test_id("price-edit-Ascend310P").click()
    page.get_by_test_id("price-input-Ascend310P").fill("12.5")
    page.get_by_test_id("price-save-Ascend310P").click()
    expect(row).to_contain_text("12.50 CNY")
    priced = table.get_by_test_id("report-row").filter(has_text="Ascend310P")
    expect(priced).to_contain_text(re.compile(r"\d+\.\d\d CNY"))
    expect(table.get_by_test_id("report-totals")).to_contain_text("CNY")
    shot(page, "cost", full_page=True)

    answer = page.context.request.get(portal.url + csv.get_attribute("href"))
    assert answer.status == 200
    assert answer.headers["content-type"].startswith("text/csv")
    assert answer.text().splitlines()[0].startswith("group,slices,slice_hours")

    row.get_by_test_id("price-delete-Ascend310P").click()
    expect(row).to_contain_text("not set")


def test_the_monthly_report_prints_three_groupings(page, portal, metered, shot):
    month = datetime.now(UTC).strftime("%Y-%m")
    login(page, portal, path="/cost")
    page.get_by_test_id("monthly-link").click()
    expect(page).to_have_url(re.compile(rf"/cost/monthly\?month={month}$"))
    for group in ("namespace", "queue", "chip_type"):
        section = page.get_by_test_id(f"monthly-{group}")
        expect(section.get_by_test_id("report-totals")).to_be_visible()
    page.emulate_media(media="print")
    expect(page.locator("nav.nav")).to_be_hidden()
    expect(page.locator("header.topbar")).to_be_hidden()
    shot(page, "cost-monthly-print", full_page=True)
