"""The OpenAPI schema builds and validates without warnings (drf-spectacular)."""

import pytest
from django.core.management import call_command


@pytest.mark.django_db
def test_schema_is_valid_and_warning_free(tmp_path):
    out = tmp_path / "schema.yaml"
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(out))
    text = out.read_text()
    assert "/api/templates/{id}/" in text
    assert "token" in text
    assert "has_token" in text


@pytest.mark.django_db
def test_schema_needs_login(api_client, viewer_client):
    assert api_client.get("/api/schema/").status_code in (401, 403)
    assert viewer_client.get("/api/schema/").status_code == 200
