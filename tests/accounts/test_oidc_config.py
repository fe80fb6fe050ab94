"""OpenID Connect without a provider: the settings, groups to roles, the
sign-in's writes, what the login page is told, and local passwords turned off.

The flows against a real provider are in test_oidc_provider.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.test import Client

from apps.accounts.choices import Role
from apps.accounts.models import OidcIdentity
from apps.accounts.oidc_client import OidcErrorCode
from apps.accounts.oidc_config import (
    check_oidc_settings,
    claimed_groups,
    oidc_config,
    role_for_groups,
)
from apps.accounts.oidc_users import oidc_sign_in
from apps.accounts.selectors import user_role

ROOT = Path(__file__).resolve().parents[2]
ISSUER = "https://idp.example.com/realms/corp"


@pytest.fixture
def configured(settings):
    settings.OIDC_ISSUER = ISSUER
    settings.OIDC_CLIENT_ID = "portal"
    settings.OIDC_CLIENT_SECRET = "s3cret"
    settings.OIDC_SCOPES = ["openid", "profile"]
    settings.OIDC_PROVIDER_NAME = "Corp SSO"
    settings.OIDC_GROUPS_CLAIM = "groups"
    settings.OIDC_ROLE_GROUPS = {
        "admin": ["ops-leads"],
        "operator": ["ops", "sre"],
        "ci": ["pipelines"],
        "viewer": ["staff"],
    }
    settings.OIDC_DEFAULT_ROLE = "viewer"
    return settings


def test_off_without_an_issuer(settings):
    settings.OIDC_ISSUER = ""
    assert oidc_config() is None


@pytest.mark.parametrize(
    ("name", "value", "says"),
    [
        ("OIDC_CLIENT_ID", "", "OIDC_CLIENT_ID"),
        ("OIDC_SCOPES", ["profile"], "openid"),
        ("OIDC_DEFAULT_ROLE", "superuser", "OIDC_DEFAULT_ROLE"),
        ("OIDC_ROLE_GROUPS", {"root": ["x"]}, "root"),
        ("OIDC_ISSUER", "idp.example.com", "http"),
    ],
)
def test_an_unusable_setting_is_said_at_start_up(configured, name, value, says):
    setattr(configured, name, value)
    with pytest.raises(ImproperlyConfigured, match=says):
        oidc_config()
    errors = check_oidc_settings()
    assert [e.id for e in errors] == ["accounts.E001"]
    assert says in errors[0].msg


def test_nobody_could_sign_in_is_an_error(settings):
    settings.OIDC_ISSUER = ""
    settings.LOCAL_LOGIN_ENABLED = False
    assert [e.id for e in check_oidc_settings()] == ["accounts.E002"]
    settings.LOCAL_LOGIN_ENABLED = True
    assert check_oidc_settings() == []


def test_the_secret_is_not_in_the_config_repr(configured):
    assert "s3cret" not in repr(oidc_config())


@pytest.mark.parametrize(
    ("claims", "expected"),
    [
        ({"groups": ["a", "b"]}, ["a", "b"]),
        ({"groups": "a"}, ["a"]),
        ({"groups": []}, []),
        ({"groups": [1, "a", None]}, ["a"]),
        ({"groups": {"x": 1}}, []),
        ({"groups": None}, None),
        ({}, None),
    ],
)
def test_groups_are_read_from_the_claim(claims, expected):
    assert claimed_groups(claims, "groups") == expected


def test_a_dotted_claim_reaches_into_an_object():
    claims = {"realm_access": {"roles": ["ops"]}}
    assert claimed_groups(claims, "realm_access.roles") == ["ops"]
    assert claimed_groups(claims, "realm_access.missing") is None
    assert claimed_groups({"realm_access": "flat"}, "realm_access.roles") is None


@pytest.mark.parametrize(
    ("groups", "role"),
    [
        (["staff"], Role.VIEWER),
        (["pipelines"], Role.CI),
        (["sre"], Role.OPERATOR),
        (["staff", "ops", "ops-leads"], Role.ADMIN),  # the highest wins
        (["staff", "pipelines"], Role.CI),
        (["Ops"], None),  # group names are compared exactly
        (["unmapped"], None),  # in no mapped group: no access, whatever the default
        ([], None),
        (None, Role.VIEWER),  # no claim at all: the default role
    ],
)
def test_groups_map_to_the_highest_role(configured, groups, role):
    assert role_for_groups(groups, oidc_config()) == role


def test_no_claim_and_default_none_is_no_access(configured):
    configured.OIDC_DEFAULT_ROLE = "none"
    assert role_for_groups(None, oidc_config()) is None


def test_without_a_mapping_everyone_gets_the_default(configured):
    configured.OIDC_ROLE_GROUPS = {"admin": [], "viewer": []}
    configured.OIDC_DEFAULT_ROLE = "ci"
    assert role_for_groups(["anything"], oidc_config()) == Role.CI


@pytest.mark.django_db
def test_sign_in_creates_then_updates_one_user(configured):
    config = oidc_config()
    claims = {"sub": "u-1", "preferred_username": "lin", "groups": ["staff"]}
    first = oidc_sign_in(issuer=ISSUER, claims=claims, config=config)
    assert first.user.username == "lin"
    assert first.role == Role.VIEWER
    again = oidc_sign_in(
        issuer=ISSUER, claims={**claims, "groups": ["ops-leads"]}, config=config
    )
    assert again.user.pk == first.user.pk
    assert user_role(again.user) == Role.ADMIN
    identity = OidcIdentity.objects.get(subject="u-1")
    assert identity.groups == ["ops-leads"]
    # the same subject at another issuer is another person
    other = oidc_sign_in(issuer=ISSUER + "2", claims=claims, config=config)
    assert other.user.pk != first.user.pk


@pytest.mark.django_db
def test_a_refused_first_sign_in_creates_nobody(configured, django_user_model):
    outcome = oidc_sign_in(
        issuer=ISSUER,
        claims={"sub": "u-2", "preferred_username": "mo", "groups": ["x"]},
        config=oidc_config(),
    )
    assert outcome.user is None
    assert outcome.role is None
    assert not django_user_model.objects.filter(username="mo").exists()


@pytest.mark.django_db
def test_an_admin_deactivated_user_stays_out(configured):
    config = oidc_config()
    claims = {"sub": "u-3", "preferred_username": "kai", "groups": ["ops"]}
    user = oidc_sign_in(issuer=ISSUER, claims=claims, config=config).user
    user.is_active = False
    user.save()
    from apps.accounts.oidc_client import OidcFailure

    with pytest.raises(OidcFailure) as failure:
        oidc_sign_in(issuer=ISSUER, claims=claims, config=config)
    assert failure.value.code == OidcErrorCode.ACCOUNT_DISABLED
    user.refresh_from_db()
    assert not user.is_active


@pytest.mark.django_db
def test_a_hostile_username_claim_gets_a_safe_name(configured):
    claims = {"sub": "u-4", "preferred_username": "ad\u202emin", "groups": ["staff"]}
    user = oidc_sign_in(issuer=ISSUER, claims=claims, config=oidc_config()).user
    assert user.username.startswith("oidc-")


@pytest.mark.django_db
def test_the_login_page_is_told_what_signs_in(configured):
    body = Client().get("/api/auth/config/").json()
    assert body == {
        "local_login_enabled": True,
        "oidc_enabled": True,
        "oidc_provider_name": "Corp SSO",
        "oidc_login_url": "/api/auth/oidc/login/",
    }
    configured.OIDC_ISSUER = ""
    configured.LOCAL_LOGIN_ENABLED = False
    body = Client().get("/api/auth/config/").json()
    assert body["oidc_enabled"] is False
    assert body["oidc_login_url"] is None
    assert body["local_login_enabled"] is False


@pytest.mark.django_db
def test_local_passwords_can_be_turned_off(settings, viewer):
    settings.LOCAL_LOGIN_ENABLED = False
    client = Client()
    response = client.post(
        "/api/auth/login/",
        {"username": "vera", "password": "pw-vera"},
        content_type="application/json",
    )
    assert response.status_code == 403
    assert response.json()["code"] == "local_login_disabled"
    assert client.get("/api/me/").status_code in (401, 403)
    admin_form = client.post(
        "/admin/login/", {"username": "vera", "password": "pw-vera"}
    )
    assert admin_form.status_code == 403
    settings.LOCAL_LOGIN_ENABLED = True
    response = client.post(
        "/api/auth/login/",
        {"username": "vera", "password": "pw-vera"},
        content_type="application/json",
    )
    assert response.status_code == 200


@pytest.mark.django_db
def test_sign_in_when_off_lands_on_the_login_page_with_a_code(settings):
    settings.OIDC_ISSUER = ""
    for path in ("/api/auth/oidc/login/", "/api/auth/oidc/callback/?code=x&state=y"):
        response = Client().get(path)
        assert response.status_code == 302
        assert response["Location"] == "/?login_error=oidc_not_configured"


@pytest.mark.django_db
def test_an_unknown_state_is_refused_without_calling_anyone(configured):
    # nothing was started in this session: refused before any network call
    response = Client().get("/api/auth/oidc/callback/?code=abc&state=forged")
    assert response.status_code == 302
    assert response["Location"].startswith("/?login_error=")


def test_the_login_page_has_words_for_every_code_in_both_languages():
    for locale in ("en", "zh-CN"):
        path = ROOT / "frontend/src/i18n/locales" / locale / "auth.json"
        catalog = json.loads(path.read_text())
        missing = [
            c.value for c in OidcErrorCode if f"loginError.{c.value}" not in catalog
        ]
        assert missing == [], locale
    known = (ROOT / "frontend/src/pages/loginErrors.ts").read_text()
    assert [c.value for c in OidcErrorCode if f'"{c.value}"' not in known] == []
