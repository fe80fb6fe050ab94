"""One rule for a test whose real part is missing here: CI fails, a laptop skips.

CI installs every real part (PostgreSQL, Redis, Go, Chromium: .ci/run), so a
skip there would be a missing install counted as a pass.
"""

from __future__ import annotations

import os
from typing import NoReturn

import pytest


def missing(what: str) -> NoReturn:
    """Fail under CI (``CI`` set), skip elsewhere, naming what is missing."""
    if os.environ.get("CI"):
        pytest.fail(f"{what}; CI must have it (.ci/run installs it)")
    pytest.skip(what)
