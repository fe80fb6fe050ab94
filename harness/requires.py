"""One rule for a part that is missing here (PostgreSQL, Redis, Prometheus...).

In a test: CI fails (``CI`` set), a laptop skips; CI installs every real part
(.ci/run), so a skip there would be a missing install counted as a pass.
Outside pytest (bench): :class:`Missing` says what to install.
"""

from __future__ import annotations

import os
import sys
from typing import NoReturn


class Missing(RuntimeError):
    """A part this run needs is not installed here."""


def missing(what: str) -> NoReturn:
    """Fail under CI, skip elsewhere (in pytest); raise :class:`Missing` outside pytest."""
    if "pytest" not in sys.modules:
        raise Missing(what)
    import pytest

    if os.environ.get("CI"):
        pytest.fail(f"{what}; CI must have it (.ci/run installs it)")
    pytest.skip(what)
