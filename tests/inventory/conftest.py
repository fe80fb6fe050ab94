"""The portal's Chinese catalog, compiled for the tests that read it."""

from __future__ import annotations

from pathlib import Path

import pytest

#: The portal's catalog (tests/conftest.py compiles it when stale, at start).
CATALOG = (
    Path(__file__).resolve().parents[2]
    / "locale"
    / "zh_Hans"
    / "LC_MESSAGES"
    / "django.po"
)


@pytest.fixture(scope="session")
def inventory_catalog() -> Path:
    """The compiled catalog; request it before ``override("zh-hans")``."""
    mo = CATALOG.with_suffix(".mo")
    assert mo.exists(), f"{mo} is missing: python manage.py compile_locale"
    return mo
