"""A browser's way through an OpenID Connect sign-in, without a browser.

The portal's two redirects are called with Django's test client (its session
is the browser's portal cookie); the provider's pages (hydra and its login
app, harness/hydra.py) with a ``requests`` session (the browser's provider
cookies). :func:`sign_in` goes the whole way; its steps are there for tests
that break one of them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlencode, urljoin, urlsplit

import requests

# The company's people of the sign-in tests (the ``hydra`` fixture), one per
# group; each one's password is ``pw-<name>``.
IDP_GROUPS = {
    "viewer": "portal-viewers",
    "operator": "portal-ops",
    "admin": "portal-admins",
}
IDP_PEOPLE = {"vicky": "viewer", "oliver": "operator", "anna": "admin"}

CALLBACK = "/api/auth/oidc/callback/"
REDIRECT_URI = f"http://testserver{CALLBACK}"
POST_LOGOUT_URI = "http://testserver/"


def use_provider(settings: Any, hydra: Any, **overrides: Any) -> Any:
    """Point the portal's settings at ``hydra`` with a new client, the
    groups of ``IDP_GROUPS`` mapped to their roles; return the client."""
    from apps.accounts.oidc_client import forget_providers

    client = hydra.create_client([REDIRECT_URI], [POST_LOGOUT_URI])
    settings.OIDC_ISSUER = hydra.issuer
    settings.OIDC_CLIENT_ID = client.client_id
    settings.OIDC_CLIENT_SECRET = client.client_secret
    settings.OIDC_SCOPES = ["openid", "profile", "email"]
    settings.OIDC_PROVIDER_NAME = "Example Corp"
    settings.OIDC_GROUPS_CLAIM = "groups"
    settings.OIDC_USERNAME_CLAIM = "preferred_username"
    settings.OIDC_ROLE_GROUPS = {
        role: [IDP_GROUPS[role]] for role in ("viewer", "operator", "admin")
    } | {"ci": []}
    settings.OIDC_DEFAULT_ROLE = "viewer"
    settings.OIDC_TIMEOUT_SECONDS = 10.0
    for name, value in overrides.items():
        setattr(settings, name, value)
    forget_providers()
    return client


@dataclass
class Browser:
    """The provider's cookies (hydra remembers a sign-in) and the pages seen."""

    http: requests.Session = field(default_factory=requests.Session)
    seen: list[str] = field(default_factory=list)
    forms: int = 0  # login forms filled in (none when hydra remembers)


def start(portal: Any) -> str:
    """The portal's start of a sign-in: where it sends the browser."""
    response = portal.get("/api/auth/oidc/login/")
    assert response.status_code == 302, response
    location = str(response["Location"])
    assert location.startswith("http"), f"not sent to the provider: {location}"
    return location


def through_provider(
    browser: Browser,
    url: str,
    username: str,
    password: str | None = None,
    *,
    cancel: bool = False,
    until: str = REDIRECT_URI,
) -> str:
    """Follow the provider's redirects from ``url``, signing in at its login
    form as ``username``; return the URL it sends the browser back to (the
    portal's callback, with ``code`` and ``state``)."""
    for _ in range(25):
        if url.startswith(until):
            return url
        browser.seen.append(url)
        answer = browser.http.get(url, allow_redirects=False, timeout=30)
        if answer.status_code == 200 and 'id="idp-username"' in answer.text:
            browser.forms += 1
            answer = _submit_login(
                browser, url, answer.text, username, password, cancel
            )
        assert answer.status_code in (302, 303), (
            url,
            answer.status_code,
            answer.text[:500],
        )
        url = urljoin(url, answer.headers["Location"])
    raise AssertionError(f"no way back to the portal: {browser.seen}")


def _submit_login(
    browser: Browser,
    url: str,
    page: str,
    username: str,
    password: str | None,
    cancel: bool,
) -> requests.Response:
    found = re.search(r'name="challenge" value="([^"]*)"', page)
    assert found, page[:500]
    form = {
        "challenge": found.group(1),
        "username": username,
        "password": password if password is not None else f"pw-{username}",
        "action": "cancel" if cancel else "login",
    }
    return browser.http.post(
        urljoin(url, "/login"), data=form, allow_redirects=False, timeout=30
    )


def callback(portal: Any, url: str) -> str:
    """Give the portal the provider's answer; return where it sends the
    browser (``/`` signed in, or ``/?login_error=<code>``)."""
    parts = urlsplit(url)
    response = portal.get(f"{parts.path}?{parts.query}")
    assert response.status_code == 302, response
    return str(response["Location"])


def sign_in(
    portal: Any, username: str, browser: Browser | None = None, **kw: Any
) -> str:
    """The whole way: start, the provider, the callback; where it ends."""
    browser = browser or Browser()
    return callback(portal, through_provider(browser, start(portal), username, **kw))


def login_error(location: str) -> str | None:
    """The ``login_error`` code of a redirect to the login page, if any."""
    values = parse_qs(urlsplit(location).query).get("login_error")
    return values[0] if values else None


def token_of_client(
    hydra: Any, client: Any, username: str, *, nonce: str
) -> dict[str, Any]:
    """Hydra's real token response for ``client`` (code flow, signed in as
    ``username``), the way that client itself would get it."""
    query = urlencode(
        {
            "response_type": "code",
            "client_id": client.client_id,
            "redirect_uri": REDIRECT_URI,
            "scope": "openid profile email",
            "state": "s" * 16,
            "nonce": nonce,
        }
    )
    back = through_provider(Browser(), f"{hydra.issuer}/oauth2/auth?{query}", username)
    code = parse_qs(urlsplit(back).query)["code"][0]
    answer = requests.post(
        f"{hydra.issuer}/oauth2/token",
        data={
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": REDIRECT_URI,
        },
        auth=(client.client_id, client.client_secret),
        timeout=30,
    )
    assert answer.status_code == 200, answer.text
    token: dict[str, Any] = answer.json()
    return token
