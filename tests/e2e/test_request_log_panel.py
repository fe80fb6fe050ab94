"""The request page's log panel, in Chromium against the demo.

A job submitted through the REST API plays simcluster's job contract: it
prints its lines over 12 s (``SIMCLUSTER_LOG``, ``SIMCLUSTER_RUN_SECONDS``)
and exits 3 (``SIMCLUSTER_EXIT_CODE``). Its request page shows the lines as
they are printed, read live from the pod, while the request runs; once it
ended, the result (exit code, reason, when) and the log the portal kept.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import login

pytestmark = pytest.mark.browser

LINES = [f"e2e step {i}/8 loss={1 / (i + 1):.3f}" for i in range(8)]


def _submit(portal: Any) -> tuple[Any, int]:
    api = portal.api()
    status, body = api.call(
        "POST",
        "/api/requests/",
        {
            "cluster": "demo",
            "namespace": "ci",
            "queue": "ci",
            "chip_type": "Ascend310P",
            "memory": 3072,
            "priority": "batch-medium",
            "workload": {
                "image": "busybox",
                "command": ["python", "train.py"],
                "env": {
                    "SIMCLUSTER_RUN_SECONDS": "12",
                    "SIMCLUSTER_EXIT_CODE": "3",
                    "SIMCLUSTER_LOG": "\n".join(LINES),
                },
            },
        },
    )
    assert status == 201, body
    return api, int(body["id"])


def test_a_running_jobs_log_appears_live_then_its_result_and_kept_log(
    page, portal, shot
):
    api, request_id = _submit(portal)
    try:
        login(page, portal, path=f"/requests/{request_id}")
        state = page.get_by_test_id("detail-state")
        text = page.get_by_test_id("log-text")
        expect(state).to_have_text("running", timeout=60_000)
        expect(text).to_contain_text(LINES[0], timeout=30_000)
        # seen while it runs: read from the pod, before its last line is printed
        assert state.text_content() == "running"
        assert LINES[-1] not in (text.text_content() or "")
        expect(page.get_by_test_id("log-source")).to_have_text("live")
        expect(page.get_by_test_id("log-panel")).to_have_attribute(
            "data-phase", "streaming"
        )
        # more lines come without a reload
        expect(text).to_contain_text(LINES[4], timeout=30_000)
        expect(page.get_by_test_id("log-result")).to_contain_text(
            "The result comes when the job ends"
        )
        shot(page, "request-log-live")

        expect(state).to_have_text("failed", timeout=60_000)
        expect(page.get_by_test_id("log-source")).to_have_text("kept", timeout=60_000)
        expect(page.get_by_test_id("log-exit-code")).to_have_text("3")
        expect(page.get_by_test_id("log-reason")).to_have_text("Error")
        expect(page.get_by_test_id("log-finished-at")).to_have_text(re.compile(r"\d"))
        expect(text).to_have_text("\n".join(LINES))
        expect(page.get_by_test_id("log-truncated")).to_have_count(0)
        page.get_by_test_id("log-timestamps").check()
        expect(text).to_contain_text(f"Z {LINES[0]}")
        shot(page, "request-log-kept")
    finally:
        api.call("DELETE", f"/api/requests/{request_id}/")
