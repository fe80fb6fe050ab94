"""Browser tests against the whole portal: fixtures that start it and a browser.

The stack (``stack.py``) is started once per session: simcluster's ``guide``
scenario, a temp SQLite database, ``migrate``, ``demo``, ``sync`` and
``uvicorn``, all stopped at the end. The frontend is built first when
``frontend/dist`` is missing or older than its sources.

Headless Chromium is Debian's (``apt-get install chromium``); Playwright cannot
download its own here. Without it these tests are skipped, except in CI
(``CI=true``), where a missing browser is an error.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harness.stack import (
    CHROMIUM,
    CHROMIUM_ARGS,
    Stack,
    StackError,
    ensure_frontend_built,
)
from tests.requires import missing

SCREENSHOTS = Path(__file__).resolve().parent / "screenshots"
# Pods start and stop quickly, and watch bookmarks come often, so that the
# tests wait for the portal rather than for the simulator.
SIM_OPTIONS = {
    "ready_delay": 0.1,
    "pod_shutdown_seconds": 0.3,
    "bookmark_interval": 1.0,
}


def _chromium_or_skip() -> str:
    if not (Path(CHROMIUM).exists() or shutil.which(CHROMIUM)):
        missing(
            f"headless Chromium not found at {CHROMIUM} (apt-get install -y chromium)"
        )
    return CHROMIUM


@pytest.fixture(scope="package")
def chromium_path() -> str:
    return _chromium_or_skip()


def running_portal(scenario: str, env: dict[str, str] | None = None) -> Iterator[Stack]:
    """A portal on simcluster's ``scenario``, built and started; stopped after.

    ``env``: settings of the portal's processes (e.g. a shorter delay).
    """
    try:
        ensure_frontend_built()
    except StackError as exc:
        pytest.fail(str(exc))
    stack = Stack(
        scenario, sim_options=SIM_OPTIONS, sync_seconds=900, log=lambda _: None
    )
    stack.extra_env.update(env or {})
    try:
        stack.start(wait_for_chips=12, timeout=120)
    except StackError as exc:
        pytest.fail(f"the portal did not start: {exc}")
    yield stack
    stack.stop()


@pytest.fixture(scope="package")
def portal(chromium_path: str) -> Iterator[Stack]:
    """The running portal (``.url``, ``.kubectl()``, ``.api()``, ``.manage()``)."""
    yield from running_portal("guide")


# Package-scoped (tests/e2e is a package for that): Playwright's sync API
# keeps an event loop running in the test's thread while it is open, and
# Django then refuses database calls there (SynchronousOnlyOperation). The
# browser tests run as one group on one xdist worker, so this closes it before
# that worker takes any other test.
@pytest.fixture(scope="package")
def browser(chromium_path: str) -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=chromium_path, headless=True, args=CHROMIUM_ARGS
        )
        yield browser
        browser.close()


@pytest.fixture
def page(browser: Any, portal: Stack) -> Iterator[Any]:
    """A fresh browser context (no session) on a desktop-sized window."""
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    context.set_default_timeout(15_000)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    yield page
    context.close()
    assert not errors, f"JavaScript errors on the page: {errors}"


@pytest.fixture
def shot() -> Any:
    """``shot(page, "name")``: save tests/e2e/screenshots/name.png."""
    SCREENSHOTS.mkdir(exist_ok=True)

    def take(page: Any, name: str, full_page: bool = False) -> Path:
        path = SCREENSHOTS / f"{name}.png"
        page.screenshot(path=str(path), full_page=full_page)
        # a screenshot is for a person to look at: an empty file is a failure
        assert path.stat().st_size > 0, path
        return path

    return take


ADMIN = ("admin", "admin")  # made by `manage.py demo`


def login(
    page: Any, portal: Stack, credentials: tuple[str, str] = ADMIN, path: str = "/"
) -> None:
    """Sign in through the login form at ``path`` and wait for the live connection."""
    page.goto(portal.url + path)
    page.fill("input[name=username]", credentials[0])
    page.fill("input[name=password]", credentials[1])
    page.click("button[type=submit]")
    page.wait_for_selector("[data-testid=connection][data-state=live]")
