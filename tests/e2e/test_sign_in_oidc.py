"""Signing in through a real OpenID provider, in the browser.

A portal of its own (the package's ``portal`` has no OIDC), configured for
ORY Hydra (the ``hydra_server`` fixture, harness/hydra.py) whose login page
knows a viewer, an operator and an admin in three groups. Each clicks "Sign
in with Example Corp", signs in at the company's page, lands in the portal
with the role of their group, sees what that role allows and no more, and
signs out, which ends the provider's session too (the next sign-in asks for
the password again). A person in no mapped group lands back on the login
page, told why.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from harness.hydra import Person
from harness.stack import Stack, StackError, ensure_frontend_built
from tests.e2e.conftest import SIM_OPTIONS
from tests.oidc_flow import IDP_GROUPS, IDP_PEOPLE

PROVIDER = "Example Corp"


@pytest.fixture(scope="module")
def oidc_portal(hydra_server: Any, chromium_path: str) -> Iterator[Stack]:
    """A portal on the guide scenario that signs in through ``hydra_server``."""
    try:
        ensure_frontend_built()
    except StackError as exc:
        pytest.fail(str(exc))
    stack = Stack(
        "guide", sim_options=SIM_OPTIONS, sync_seconds=900, log=lambda _: None
    )
    client = hydra_server.create_client(
        [f"{stack.url}/api/auth/oidc/callback/"], [f"{stack.url}/"]
    )
    stack.extra_env.update(
        {
            "OIDC_ISSUER": hydra_server.issuer,
            "OIDC_CLIENT_ID": client.client_id,
            "OIDC_CLIENT_SECRET": client.client_secret,
            "OIDC_PROVIDER_NAME": PROVIDER,
            "OIDC_VIEWER_GROUPS": IDP_GROUPS["viewer"],
            "OIDC_OPERATOR_GROUPS": IDP_GROUPS["operator"],
            "OIDC_ADMIN_GROUPS": IDP_GROUPS["admin"],
            "THROTTLE_LOGIN_IP": "600/min",
        }
    )
    try:
        stack.start(wait_for_chips=12, timeout=120)
    except StackError as exc:
        pytest.fail(f"the portal did not start: {exc}")
    yield stack
    stack.stop()


@pytest.fixture
def people(hydra: Any) -> dict[str, Person]:
    """The company's directory (reset for each test)."""
    people: dict[str, Person] = hydra.directory.people
    return people


@pytest.fixture
def context(browser: Any) -> Iterator[Any]:
    """A fresh browser (no portal session, no provider session)."""
    context = browser.new_context(viewport={"width": 1440, "height": 900})
    context.set_default_timeout(20_000)
    yield context
    context.close()


def _sign_in_at_provider(
    page: Any, portal: Stack, name: str, *, form: bool = True
) -> None:
    page.goto(portal.url + "/")
    page.get_by_test_id("oidc-sign-in").click()
    if form:  # the company's page (hydra's login app)
        page.locator("#idp-username").fill(name)
        page.locator("#idp-password").fill(f"pw-{name}")
        page.locator("#idp-submit").click()


@pytest.mark.parametrize("name", list(IDP_PEOPLE))
def test_each_role_signs_in_sees_what_it_may_and_signs_out(
    context: Any, oidc_portal: Stack, people: Any, name: str, shot: Any
) -> None:
    from playwright.sync_api import expect

    role = IDP_PEOPLE[name]
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(oidc_portal.url + "/")
    button = page.get_by_test_id("oidc-sign-in")
    expect(button).to_contain_text(PROVIDER)
    _sign_in_at_provider(page, oidc_portal, name)
    # back in the portal, live, with the role of the group
    page.wait_for_selector("[data-testid=connection][data-state=live]")
    expect(page.get_by_test_id("user")).to_contain_text(name)
    expect(page.get_by_test_id("user")).to_contain_text(role)
    shot(page, f"oidc-signed-in-{role}")
    # what the role allows: API tokens for admins, editing templates from operators up
    tokens = page.locator('nav a[href="/tokens"]')
    expect(tokens).to_have_count(1 if role == "admin" else 0)
    page.goto(oidc_portal.url + "/templates?type=Ascend310P")
    expect(page.get_by_test_id("template-row-vir01")).to_be_visible()
    expect(page.get_by_test_id("add-template")).to_have_count(
        0 if role == "viewer" else 1
    )
    # sign out: the portal's session and the provider's
    page.get_by_test_id("sign-out").click()
    expect(page.get_by_test_id("oidc-sign-in")).to_be_visible()
    assert page.url.startswith(oidc_portal.url), page.url
    page.get_by_test_id("oidc-sign-in").click()
    # the provider asks again: its session ended with the portal's
    expect(page.locator("#idp-username")).to_be_visible()
    assert not errors, errors


def test_a_person_in_no_mapped_group_is_told_why(
    context: Any, oidc_portal: Stack, people: Any, shot: Any
) -> None:
    from playwright.sync_api import expect

    people["vicky"].groups = ["contractors"]
    page = context.new_page()
    _sign_in_at_provider(page, oidc_portal, "vicky")
    # the portal sent it back with ?login_error=oidc_no_role; the page says it
    # in words (and takes the code out of the address)
    error = page.get_by_test_id("login-error")
    expect(error).to_contain_text("none of your groups")
    expect(error).not_to_contain_text("oidc_no_role")
    assert "login_error" not in page.url
    shot(page, "oidc-no-role")
    # nothing signed in
    assert page.request.get(oidc_portal.url + "/api/me/").status in (401, 403)


def test_the_login_page_offers_local_passwords_beside_the_provider(
    context: Any, oidc_portal: Stack
) -> None:
    from playwright.sync_api import expect

    page = context.new_page()
    page.goto(oidc_portal.url + "/")
    expect(page.get_by_test_id("oidc-sign-in")).to_be_visible()
    expect(page.locator("input[name=username]")).to_be_visible()
