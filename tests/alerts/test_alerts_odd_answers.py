"""An Alertmanager URL that answers something else (a proxy's page, another
API, a newer Alertmanager): the list says why it is empty, never a 500."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

pytestmark = pytest.mark.django_db
URL = "/api/alerts/"
GOOD_ALERT = {
    "labels": {"alertname": "VnpuChipUnhealthy", "cluster": "guide", "chip": "u-1"},
    "annotations": {"summary": "Chip u-1 is reported unhealthy"},
    "startsAt": "2026-12-07T01:00:00Z",
    "status": {"state": "active", "silencedBy": [], "inhibitedBy": []},
}


@pytest.fixture
def answering(settings) -> Iterator[dict[str, Any]]:
    """An HTTP server at ALERTMANAGER_URL answering ``answers[path]`` as JSON."""
    answers: dict[str, Any] = {"/api/v2/silences": []}

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = json.dumps(answers.get(self.path.split("?")[0], {})).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    settings.ALERTMANAGER_URL = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield answers
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize(
    "answer",
    [
        {"error": "not found"},
        ["a", "b"],
        [{**GOOD_ALERT, "status": "active"}],
        [{**GOOD_ALERT, "labels": {"alertname": "VnpuChipUnhealthy", "chip": 7}}],
        [{**GOOD_ALERT, "startsAt": 1733500000}],
        [{**GOOD_ALERT, "status": {"silencedBy": "abc"}}],
    ],
    ids=["object", "strings", "status-text", "label-number", "date-number", "ids-text"],
)
def test_an_answer_of_the_wrong_shape_is_refused_with_a_reason(
    answering, admin_client_api, answer
):
    answering["/api/v2/alerts"] = answer
    reply = admin_client_api.get(URL)
    assert reply.status_code == 200
    body = reply.json()
    assert body["alerts"] == []
    assert body["error"]["code"] == "alertmanager_refused"
    assert "sent" in body["error"]["message"]


def test_unreadable_and_zoneless_dates_hide_the_date_not_the_alert(
    answering, admin_client_api
):
    answering["/api/v2/alerts"] = [
        {**GOOD_ALERT, "startsAt": "2024-13-45T00:00:00Z"},
        {**GOOD_ALERT, "startsAt": "2026-12-07T00:00:00"},  # no zone
        {
            **GOOD_ALERT,
            "labels": {**GOOD_ALERT["labels"], "chip": "u-2"},
            "startsAt": "2026-12-07T00:30:00Z",
        },
    ]
    reply = admin_client_api.get(URL)
    assert reply.status_code == 200
    body = reply.json()
    assert body["error"] is None
    chips = {a["labels"]["chip"]: a["starts_at"] for a in body["alerts"]}
    # u-1 twice (two replicas): the earlier readable time is kept, read as UTC
    assert chips["u-1"].startswith("2026-12-07T00:00:00")
    assert chips["u-2"].startswith("2026-12-07T00:30:00")
