"""Kubeconfigs: content stored encrypted, paths only in KUBECONFIG_DIR, no exec (issue 20).

Before: an admin could set ``kubeconfig_path`` to any file on the server, a
kubeconfig with an ``exec`` plugin ran its command in the web process when
anyone called ``drift/?live=true``, and errors revealed which files exist.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import yaml
from rest_framework.test import APIClient

from apps.inventory.choices import ConnectionKind

pytestmark = pytest.mark.django_db


def _kubeconfig(user: dict, cluster: dict | None = None) -> str:
    return yaml.safe_dump(
        {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [
                {"name": "c", "cluster": cluster or {"server": "https://127.0.0.1:9"}}
            ],
            "users": [{"name": "u", "user": user}],
            "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
            "current-context": "x",
        }
    )


def _exec_user(marker: Path) -> dict:
    # Would write ``marker`` when run, then answer like a credential plugin.
    credential = json.dumps(
        {
            "apiVersion": "client.authentication.k8s.io/v1beta1",
            "kind": "ExecCredential",
            "status": {"token": "x"},
        }
    )
    return {
        "exec": {
            "apiVersion": "client.authentication.k8s.io/v1beta1",
            "command": "/bin/sh",
            "args": ["-c", f"touch {marker}; echo '{credential}'"],
        }
    }


@pytest.fixture
def admin_api(admin_user):
    client = APIClient()
    client.force_login(admin_user)
    return client


def _add(client: APIClient, name: str, **fields):
    return client.post(
        "/api/clusters/",
        {"name": name, "connection": ConnectionKind.KUBECONFIG, **fields},
        format="json",
    )


def test_a_path_outside_kubeconfig_dir_is_refused_without_saying_if_it_exists(
    admin_api, settings, tmp_path
):
    settings.KUBECONFIG_DIR = str(tmp_path / "kubeconfigs")
    (tmp_path / "kubeconfigs").mkdir()
    existing = tmp_path / "secret.txt"
    existing.write_text("x")
    answers = []
    for name, path in [
        ("a", str(existing)),
        ("b", str(tmp_path / "missing.txt")),
        ("c", "/etc/passwd"),
        ("d", "../secret.txt"),  # relative: from KUBECONFIG_DIR, then out of it
    ]:
        response = _add(admin_api, name, kubeconfig_path=path)
        assert response.status_code == 400, response.json()
        assert "kubeconfig_path" in response.json()["errors"]
        answers.append(response.json())
    assert all(a == answers[0] for a in answers)
    from apps.inventory.models import Cluster

    assert not Cluster.objects.exists()


def test_without_kubeconfig_dir_no_path_is_accepted(admin_api, tmp_path):
    file = tmp_path / "config"
    file.write_text(_kubeconfig({"token": "t"}))
    response = _add(admin_api, "a", kubeconfig_path=str(file))
    assert response.status_code == 400
    assert "kubeconfig_path" in response.json()["errors"]


def test_a_symlink_inside_the_dir_that_leads_out_is_refused(
    admin_api, settings, tmp_path
):
    folder = tmp_path / "kubeconfigs"
    folder.mkdir()
    settings.KUBECONFIG_DIR = str(folder)
    outside = tmp_path / "outside"
    outside.write_text(_kubeconfig({"token": "t"}))
    (folder / "link").symlink_to(outside)
    (folder / "good").write_text(_kubeconfig({"token": "t"}))
    assert _add(admin_api, "a", kubeconfig_path=str(folder / "link")).status_code == 400
    assert _add(admin_api, "b", kubeconfig_path="good").status_code == 201


def test_kubeconfig_content_is_stored_encrypted_and_never_returned(admin_api):
    secret = "tok-3e1d0c-never-shown"
    response = _add(admin_api, "a", kubeconfig=_kubeconfig({"token": secret}))
    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["has_kubeconfig"] is True
    assert "kubeconfig" not in body
    from apps.common.crypto import decrypt
    from apps.inventory.models import Cluster

    cluster = Cluster.objects.get(name="a")
    assert secret not in cluster.kubeconfig_encrypted
    assert secret in decrypt(cluster.kubeconfig_encrypted)
    everything = json.dumps(admin_api.get(f"/api/clusters/{cluster.pk}/").json())
    everything += json.dumps(admin_api.get("/api/audit-events/").json())
    assert secret not in everything


def test_an_exec_plugin_is_refused_unless_the_operator_allows_it(
    admin_api, settings, tmp_path
):
    marker = tmp_path / "ran"
    text = _kubeconfig(_exec_user(marker))
    refused = _add(admin_api, "a", kubeconfig=text)
    assert refused.status_code == 400
    assert "kubeconfig" in refused.json()["errors"]
    assert "KUBECONFIG_ALLOW_EXEC" in refused.json()["message"]
    auth_provider = _kubeconfig({"auth-provider": {"name": "oidc", "config": {}}})
    assert _add(admin_api, "b", kubeconfig=auth_provider).status_code == 400
    settings.KUBECONFIG_ALLOW_EXEC = True
    assert _add(admin_api, "c", kubeconfig=text).status_code == 201
    assert not marker.exists()  # storing it runs nothing


def test_files_named_by_a_kubeconfig_must_be_in_the_dir(admin_api, settings, tmp_path):
    outside = tmp_path / "token"
    outside.write_text("server-file-content")
    for user, cluster in [
        ({"tokenFile": str(outside)}, None),
        ({"client-key": "/etc/shadow", "client-certificate": "/etc/hosts"}, None),
        ({"token": "t"}, {"server": "https://h", "certificate-authority": "/etc/x"}),
    ]:
        response = _add(admin_api, "a", kubeconfig=_kubeconfig(user, cluster))
        assert response.status_code == 400, (user, cluster)
        assert "kubeconfig" in response.json()["errors"]


@pytest.mark.parametrize("stored_as", ["path", "content"])
def test_live_drift_never_runs_an_exec_plugin(
    stored_as, admin_api, viewer, settings, tmp_path
):
    # A row written before these rules (or straight to the database): the
    # check at load time refuses it before the kubernetes loader runs it.
    from apps.common.crypto import encrypt
    from apps.inventory.models import Cluster

    folder = tmp_path / "kubeconfigs"
    folder.mkdir()
    marker = tmp_path / "ran"
    text = _kubeconfig(_exec_user(marker))
    if stored_as == "path":
        settings.KUBECONFIG_DIR = str(folder)
        (folder / "config").write_text(text)
        fields = {"kubeconfig_path": str(folder / "config")}
    else:
        fields = {"kubeconfig_encrypted": encrypt(text)}
    cluster = Cluster.objects.create(
        name="old", connection=ConnectionKind.KUBECONFIG, **fields
    )
    client = APIClient()
    client.force_login(viewer)
    response = client.get(f"/api/clusters/{cluster.pk}/drift/?live=true")
    assert not marker.exists(), "the exec plugin ran in the web process"
    assert response.status_code == 400
    assert "KUBECONFIG_ALLOW_EXEC" in response.json()["message"]


def test_a_stored_path_outside_the_dir_is_refused_at_load_time(viewer, tmp_path):
    from apps.inventory.models import Cluster

    cluster = Cluster.objects.create(
        name="old",
        connection=ConnectionKind.KUBECONFIG,
        kubeconfig_path=str(tmp_path / "anything"),
    )
    client = APIClient()
    client.force_login(viewer)
    response = client.get(f"/api/clusters/{cluster.pk}/drift/?live=true")
    assert response.status_code == 400
    assert str(tmp_path) not in json.dumps(response.json())


def test_cluster_add_stores_the_content_with_its_files_inlined(tmp_path):
    from django.core.management import call_command

    from apps.common.crypto import decrypt
    from apps.inventory.models import Cluster

    (tmp_path / "ca.crt").write_bytes(b"CA-PEM")
    (tmp_path / "token").write_text("tok-from-file\n")
    file = tmp_path / "config"
    file.write_text(
        _kubeconfig(
            {"tokenFile": "token"},
            {"server": "https://h:6443", "certificate-authority": "ca.crt"},
        )
    )
    call_command("cluster", "add", "prod", "--kubeconfig", str(file))
    cluster = Cluster.objects.get(name="prod")
    assert cluster.kubeconfig_path == ""
    stored = yaml.safe_load(decrypt(cluster.kubeconfig_encrypted))
    assert stored["users"][0]["user"] == {"token": "tok-from-file"}
    ca = stored["clusters"][0]["cluster"]
    assert "certificate-authority" not in ca
    import base64

    assert base64.b64decode(ca["certificate-authority-data"]) == b"CA-PEM"
    # and the portal can build a client from it without any file
    os.remove(tmp_path / "ca.crt")
    from apps.inventory.kube import api_client_for

    api = api_client_for(cluster)
    try:
        assert api.configuration.host == "https://h:6443"
        assert api.configuration.api_key["BearerToken"] == "Bearer tok-from-file"
    finally:
        api.close()


def test_the_migration_copies_existing_kubeconfig_files_into_the_database(tmp_path):
    # Clusters registered with a path before (cluster add stored the path) keep
    # working: migrate reads the file, inlines what it names, stores it encrypted.
    import importlib

    from django.apps import apps as registry

    from apps.common.crypto import decrypt
    from apps.inventory.models import Cluster

    migration = importlib.import_module(
        "apps.inventory.migrations.0005_cluster_kubeconfig_encrypted"
    )
    (tmp_path / "token").write_text("tok-old\n")
    file = tmp_path / "config"
    file.write_text(_kubeconfig({"tokenFile": "token"}))
    old = Cluster.objects.create(
        name="old", connection=ConnectionKind.KUBECONFIG, kubeconfig_path=str(file)
    )
    gone = Cluster.objects.create(
        name="gone",
        connection=ConnectionKind.KUBECONFIG,
        kubeconfig_path=str(tmp_path / "missing"),
    )
    migration.copy_kubeconfig_files(registry, None)
    old.refresh_from_db()
    gone.refresh_from_db()
    assert old.kubeconfig_path == ""
    stored = yaml.safe_load(decrypt(old.kubeconfig_encrypted))
    assert stored["users"][0]["user"] == {"token": "tok-old"}
    assert gone.kubeconfig_encrypted == ""  # unreadable: left for an admin
    assert gone.kubeconfig_path == str(tmp_path / "missing")
