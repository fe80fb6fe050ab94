"""Shared fixtures: users of each role, API clients, and the fixture files."""

from __future__ import annotations

from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parent / "fixtures"


@pytest.fixture
def fixtures_dir() -> Path:
    return FIXTURES


def _user(django_user_model, username: str, role: str):
    from apps.accounts.services import user_set_role

    user = django_user_model.objects.create_user(
        username=username, password="pw-" + username
    )
    user_set_role(user=user, role=role)
    return user


@pytest.fixture
def viewer(db, django_user_model):
    return _user(django_user_model, "vera", "viewer")


@pytest.fixture
def operator(db, django_user_model):
    return _user(django_user_model, "otto", "operator")


@pytest.fixture
def admin_user(db, django_user_model):
    return _user(django_user_model, "ada", "admin")


# APIClient is imported inside the fixtures: the pure packages' tests
# (simcluster, the allocator, the HAMi formats) run without Django too.


@pytest.fixture
def api_client():
    from rest_framework.test import APIClient

    return APIClient()


def _client_for(user):
    from rest_framework.test import APIClient

    client = APIClient()
    client.force_authenticate(user=user)
    return client


@pytest.fixture
def viewer_client(viewer):
    return _client_for(viewer)


@pytest.fixture
def operator_client(operator):
    return _client_for(operator)


@pytest.fixture
def admin_client_api(admin_user):
    return _client_for(admin_user)


@pytest.fixture
def guide_cluster(db):
    """Cluster ``guide`` with the reference guide's device config (list shape) imported."""
    from apps.inventory.services import deviceconfig_import

    deviceconfig_import(
        cluster_name="guide", text=(FIXTURES / "device-config-list.yaml").read_text()
    )
    from apps.inventory.models import Cluster

    return Cluster.objects.get(name="guide")
