"""vnpuportal.spa without a browser: which paths get the app, the API's 404, a redirect."""

from __future__ import annotations

from pathlib import Path

import pytest

# The middleware (sessions, metrics) touches the database on every request.
pytestmark = pytest.mark.django_db


@pytest.fixture
def dist(tmp_path: Path, settings) -> Path:
    (tmp_path / "assets").mkdir()
    (tmp_path / "index.html").write_text('<div id="root"></div>')
    (tmp_path / "assets" / "index-abc123.js").write_text("console.log(1)")
    (tmp_path / "favicon.svg").write_text("<svg/>")
    settings.FRONTEND_DIST = tmp_path
    return tmp_path


@pytest.mark.parametrize("path", ["/", "/chips", "/templates?tab=publish", "/a/b/c"])
def test_client_side_routes_get_index_html(client, dist, path):
    response = client.get(path)
    assert response.status_code == 200
    assert response.content == b'<div id="root"></div>'
    assert response["Cache-Control"] == "no-cache"
    assert "csrftoken" in response.cookies


def test_build_files_are_served_and_unknown_files_are_404(client, dist):
    response = client.get("/assets/index-abc123.js")
    assert response.status_code == 200
    assert b"".join(response.streaming_content) == b"console.log(1)"
    assert client.get("/favicon.svg").status_code == 200
    assert client.get("/assets/missing.js").status_code == 404
    assert client.get("/robots.txt").status_code == 404


def test_unknown_api_paths_stay_json_404s(client, dist):
    for method in ("get", "post", "delete"):
        response = getattr(client, method)("/api/no-such-thing/")
        assert response.status_code == 404
        assert response.json()["code"] == "not_found"
    assert client.get("/api").status_code == 404


def test_a_missing_slash_is_added_when_the_route_exists(client, dist):
    response = client.get("/api/me?x=1")
    assert response.status_code == 301
    assert response["Location"] == "/api/me/?x=1"
    assert client.get("/admin")["Location"] == "/admin/"


def test_writes_to_app_routes_are_refused(client, dist):
    assert client.post("/chips").status_code == 405


def test_without_a_build_the_app_says_how_to_make_one(client, settings, tmp_path):
    settings.FRONTEND_DIST = tmp_path / "nothing-here"
    response = client.get("/")
    assert response.status_code == 503
    assert b"npm run build" in response.content
