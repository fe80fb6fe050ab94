"""OpenID Connect sign-in against a real provider (ORY Hydra, ``hydra`` fixture).

Each test signs in the way a browser does (tests/oidc_flow.py): the portal's
start, hydra and the company's login page, the portal's callback. The
failures are real too: a state or nonce that does not match, a code used
twice, an issuer that names itself otherwise, a provider that does not
answer, an ID token made for another client.
"""

from __future__ import annotations

import logging
import time

import pytest
from authlib.integrations.django_client import DjangoOAuth2App
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.test import Client

from apps.accounts.models import OidcIdentity
from apps.accounts.oidc_client import forget_providers
from apps.accounts.selectors import connection_still_authenticated, user_role
from harness.processes import free_port
from tests import oidc_flow
from tests.oidc_flow import Browser, login_error, sign_in, use_provider

pytestmark = pytest.mark.django_db


@pytest.fixture
def provider(settings, hydra):
    """The portal configured for ``hydra``; yields the client."""
    cache.clear()  # the sign-in throttle's counts of earlier tests
    settings.THROTTLE_RATES = {**settings.THROTTLE_RATES, "login_ip": "1000/min"}
    return use_provider(settings, hydra)


def _identity(hydra, username: str) -> OidcIdentity:
    return OidcIdentity.objects.select_related("user", "user__portal_profile").get(
        issuer=hydra.issuer, subject=hydra.directory.subject_of(username)
    )


@pytest.mark.parametrize(
    ("person", "role"), [("vicky", "viewer"), ("oliver", "operator"), ("anna", "admin")]
)
def test_each_group_signs_in_with_its_role(provider, hydra, person, role):
    portal = Client()
    assert sign_in(portal, person) == "/"
    me = portal.get("/api/me/").json()
    assert me["role"] == role
    assert me["username"] == person  # from preferred_username
    identity = _identity(hydra, person)
    assert identity.user.email == f"{person}@example.com"
    assert not identity.user.has_usable_password()
    # what the role allows: only an admin lists API tokens
    assert portal.get("/api/tokens/").status_code == (200 if role == "admin" else 403)


def test_the_role_follows_the_groups_at_every_sign_in(provider, hydra):
    oliver = hydra.directory.people["oliver"]
    assert sign_in(Client(), "oliver") == "/"
    assert user_role(_identity(hydra, "oliver").user) == "operator"
    oliver.groups = ["portal-admins", "portal-viewers"]  # promoted: the highest wins
    portal = Client()
    assert sign_in(portal, "oliver") == "/"
    assert portal.get("/api/me/").json()["role"] == "admin"
    oliver.groups = ["portal-viewers", "unrelated"]  # demoted
    assert sign_in(portal, "oliver") == "/"
    assert portal.get("/api/me/").json()["role"] == "viewer"
    assert OidcIdentity.objects.filter(subject="uid-oliver").count() == 1


def test_removed_from_every_mapped_group_loses_access_at_the_next_sign_in(
    provider, hydra
):
    earlier = Client()
    assert sign_in(earlier, "anna") == "/"
    assert earlier.get("/api/me/").status_code == 200
    user = _identity(hydra, "anna").user
    # what an open WebSocket of that session re-checks (apps/accounts/ws.py)
    socket = {
        "user": user,
        "token_id": None,
        "session_key": earlier.session.session_key,
    }
    assert connection_still_authenticated(**socket)
    hydra.directory.people["anna"].groups = ["some-other-team"]
    again = Client()
    assert login_error(sign_in(again, "anna")) == "oidc_no_role"
    assert again.get("/api/me/").status_code in (401, 403)
    # ...and the session she still had stops working with it, and its sockets
    user.refresh_from_db()
    assert not user.is_active
    assert earlier.get("/api/me/").status_code in (401, 403)
    assert not connection_still_authenticated(**socket)
    # put back in a group by IT: back in, with that group's role
    hydra.directory.people["anna"].groups = ["portal-ops"]
    back = Client()
    assert sign_in(back, "anna") == "/"
    assert back.get("/api/me/").json()["role"] == "operator"


def test_an_empty_groups_claim_is_refused_even_with_a_default_role(provider, hydra):
    hydra.directory.people["vicky"].groups = []
    assert login_error(sign_in(Client(), "vicky")) == "oidc_no_role"
    assert not get_user_model().objects.filter(username="vicky").exists()


def test_no_groups_claim_gets_the_default_role_or_none(settings, provider, hydra):
    hydra.directory.people["vicky"].groups = None  # the token has no groups claim
    portal = Client()
    assert sign_in(portal, "vicky") == "/"
    assert portal.get("/api/me/").json()["role"] == "viewer"
    settings.OIDC_DEFAULT_ROLE = "none"
    assert login_error(sign_in(Client(), "vicky")) == "oidc_no_role"


def test_a_local_user_of_the_same_name_is_never_taken_over(provider, hydra, viewer):
    # the local "vera" exists; the provider's "vera" is someone else
    from harness.hydra import Person

    hydra.directory.people["vera"] = Person("pw-vera", ["portal-admins"])
    portal = Client()
    assert sign_in(portal, "vera") == "/"
    me = portal.get("/api/me/").json()
    assert me["username"] != "vera"
    assert me["username"].startswith("vera.")
    assert me["role"] == "admin"
    viewer.refresh_from_db()
    assert user_role(viewer) == "viewer"


def test_a_forged_state_is_refused(provider, hydra):
    portal = Client()
    back = oidc_flow.through_provider(Browser(), oidc_flow.start(portal), "anna")
    forged = back.replace("state=", "state=x")
    assert login_error(oidc_flow.callback(portal, forged)) == "oidc_state_mismatch"
    assert portal.get("/api/me/").status_code in (401, 403)


def test_a_callback_in_another_browser_is_refused(provider, hydra):
    # login CSRF: the attacker's own code and state, delivered to a victim
    attacker, victim = Client(), Client()
    back = oidc_flow.through_provider(Browser(), oidc_flow.start(attacker), "anna")
    assert login_error(oidc_flow.callback(victim, back)) == "oidc_state_mismatch"
    assert victim.get("/api/me/").status_code in (401, 403)


def test_a_nonce_that_does_not_match_is_refused(provider, hydra):
    portal = Client()
    back = oidc_flow.through_provider(Browser(), oidc_flow.start(portal), "anna")
    session = portal.session
    key = next(k for k in session.keys() if k.startswith("_state_"))  # noqa: SIM118 - a SessionStore is no dict
    kept = session[key]
    kept["data"]["nonce"] = "not-the-nonce-hydra-signed"
    session[key] = kept
    session.save()
    assert login_error(oidc_flow.callback(portal, back)) == "oidc_nonce_mismatch"


def test_a_code_used_twice_is_refused(provider, hydra):
    portal = Client()
    back = oidc_flow.through_provider(Browser(), oidc_flow.start(portal), "anna")
    session = portal.session
    key = next(k for k in session.keys() if k.startswith("_state_"))  # noqa: SIM118 - a SessionStore is no dict
    kept = session[key]
    assert oidc_flow.callback(portal, back) == "/"
    # the same code again, with the flow's state put back (a replayed callback)
    replay = Client()
    replay_session = replay.session
    replay_session[key] = kept
    replay_session.save()
    assert login_error(oidc_flow.callback(replay, back)) == "oidc_code_rejected"


def test_a_wrong_client_secret_is_said_without_the_secret(
    settings, provider, hydra, caplog
):
    portal = Client()
    back = oidc_flow.through_provider(Browser(), oidc_flow.start(portal), "anna")
    settings.OIDC_CLIENT_SECRET = "not-the-secret-0123456789"
    with caplog.at_level(logging.WARNING, logger="apps.accounts"):
        where = oidc_flow.callback(portal, back)
    assert login_error(where) == "oidc_client_rejected"
    assert "not-the-secret" not in caplog.text
    assert "oidc_client_rejected" in caplog.text


@pytest.fixture(scope="module")
def hasty_hydra(tmp_path_factory, hydra_server):
    """A second hydra whose sign-in codes expire after one second."""
    from harness.hydra import Directory, Hydra

    directory = Directory()  # its people: the hydra fixture's, set by the test
    server = Hydra(
        directory,
        tmp_path_factory.mktemp("hasty-hydra"),
        hydra_server.executable,
        settings={"TTL_AUTH_CODE": "1s"},
    )
    server.start()
    yield server
    server.stop()


def test_an_expired_code_is_refused(settings, hydra, hasty_hydra):
    cache.clear()
    hasty_hydra.directory.people = hydra.directory.people
    use_provider(settings, hasty_hydra)
    portal = Client()
    back = oidc_flow.through_provider(Browser(), oidc_flow.start(portal), "anna")
    time.sleep(2.5)  # the code's lifetime is one second
    assert login_error(oidc_flow.callback(portal, back)) == "oidc_code_rejected"
    assert portal.get("/api/me/").status_code in (401, 403)


def test_a_cancelled_sign_in_says_so(provider, hydra):
    portal = Client()
    back = oidc_flow.through_provider(
        Browser(), oidc_flow.start(portal), "anna", cancel=True
    )
    assert login_error(oidc_flow.callback(portal, back)) == "oidc_access_denied"


def test_a_token_for_another_audience_is_refused(provider, hydra, monkeypatch):
    # A mix-up: the token response the portal gets is hydra's real answer for
    # another client of the same provider (signed by hydra, with this
    # sign-in's nonce): only its audience is not the portal.
    portal = Client()
    back = oidc_flow.through_provider(Browser(), oidc_flow.start(portal), "anna")
    state = next(k for k in portal.session.keys() if k.startswith("_state_"))  # noqa: SIM118
    nonce = portal.session[state]["data"]["nonce"]
    other = hydra.create_client([oidc_flow.REDIRECT_URI])
    theirs = oidc_flow.token_of_client(hydra, other, "anna", nonce=nonce)
    assert theirs["id_token"]
    monkeypatch.setattr(
        DjangoOAuth2App, "fetch_access_token", lambda self, **kwargs: dict(theirs)
    )
    assert login_error(oidc_flow.callback(portal, back)) == "oidc_wrong_audience"
    assert portal.get("/api/me/").status_code in (401, 403)


def test_an_issuer_that_names_itself_otherwise_is_refused(settings, provider, hydra):
    # hydra calls itself http://127.0.0.1:<port>; configured as localhost
    settings.OIDC_ISSUER = hydra.issuer.replace("127.0.0.1", "localhost")
    forget_providers()
    portal = Client()
    response = portal.get("/api/auth/oidc/login/")
    assert login_error(response["Location"]) == "oidc_issuer_mismatch"


def test_an_unreachable_provider_is_said_and_logged_without_secrets(
    settings, provider, caplog
):
    settings.OIDC_ISSUER = f"http://127.0.0.1:{free_port()}"
    settings.OIDC_TIMEOUT_SECONDS = 2.0
    forget_providers()
    with caplog.at_level(logging.WARNING, logger="apps.accounts"):
        response = Client().get("/api/auth/oidc/login/")
    assert response.status_code == 302
    assert login_error(response["Location"]) == "oidc_provider_unreachable"
    logged = caplog.text
    assert "oidc_provider_unreachable" in logged
    assert settings.OIDC_CLIENT_SECRET not in logged


def test_sign_in_attempts_are_throttled_per_client(settings, provider, hydra):
    settings.THROTTLE_RATES = {**settings.THROTTLE_RATES, "login_ip": "2/min"}
    portal = Client()
    assert sign_in(portal, "vicky") == "/"  # two attempts: start and callback
    response = portal.get("/api/auth/oidc/login/")
    assert login_error(response["Location"]) == "oidc_throttled"
    # the password login shares the budget
    refused = Client().post(
        "/api/auth/login/",
        {"username": "x", "password": "y"},
        content_type="application/json",
    )
    assert refused.status_code == 429


def test_logout_ends_the_provider_session_too(provider, hydra):
    portal, browser = Client(), Browser()
    assert sign_in(portal, "oliver", browser) == "/"
    assert browser.forms == 1
    # hydra remembers the sign-in: another sign-in shows no form (the control)
    assert sign_in(Client(), "oliver", browser) == "/"
    assert browser.forms == 1
    csrf = portal.cookies["csrftoken"].value
    answer = portal.post("/api/auth/logout/", HTTP_X_CSRFTOKEN=csrf)
    assert answer.status_code == 200
    url = answer.json()["end_session_url"]
    assert url.startswith(hydra.issuer)
    assert portal.get("/api/me/").status_code in (401, 403)
    # the provider's logout comes back to the portal...
    back = oidc_flow.through_provider(
        browser, url, "oliver", until=oidc_flow.POST_LOGOUT_URI
    )
    assert back.startswith(oidc_flow.POST_LOGOUT_URI)
    # ...and the provider forgot the sign-in: its login form shows again
    assert sign_in(Client(), "oliver", browser) == "/"
    assert browser.forms == 2


def test_a_local_session_logs_out_without_the_provider(provider, viewer):
    portal = Client()
    portal.force_login(viewer)
    answer = portal.post("/api/auth/logout/")
    assert answer.status_code == 200
    assert answer.json() == {"end_session_url": None}
