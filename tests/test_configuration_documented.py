"""Every environment variable the settings read is documented twice: in the
configuration reference (docs/configuration.md) and in .env.example (a
newcomer's two places)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
READ = re.compile(r'\benv(?:\.\w+)?\(\s*"([A-Z][A-Z0-9_]+)"')


def _read_by_settings() -> set[str]:
    names: set[str] = set()
    for module in (ROOT / "vnpuportal").rglob("*.py"):
        names |= set(READ.findall(module.read_text()))
    return names


def test_the_settings_read_some_variables():
    # The pattern must keep finding them, or the tests below prove nothing.
    assert {
        "DATABASE_URL",
        "PROMETHEUS_URL",
        "NODE_LOCK_STALE_SECONDS",
    } <= _read_by_settings()


def test_every_variable_is_in_the_configuration_reference():
    reference = (ROOT / "docs" / "configuration.md").read_text()
    missing = sorted(n for n in _read_by_settings() if f"`{n}`" not in reference)
    assert missing == []


def test_every_variable_is_in_env_example():
    example = (ROOT / ".env.example").read_text()
    missing = sorted(
        n for n in _read_by_settings() if not re.search(rf"\b{n}=", example)
    )
    assert missing == []
