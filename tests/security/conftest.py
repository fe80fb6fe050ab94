"""Security tests: rate-limit counters start at zero in every test."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _fresh_throttle_counters():
    # Throttles count in the Django cache (locmem here), which outlives a test.
    from django.core.cache import cache

    cache.clear()
    yield
    cache.clear()
