"""A token cluster's CA certificate reaches the client as a file: one per
distinct certificate for the life of the process, not one per client built."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from apps.common.crypto import encrypt
from apps.inventory import kube
from apps.inventory.choices import ConnectionKind
from apps.inventory.models import Cluster

PEM_A = "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"
PEM_B = "-----BEGIN CERTIFICATE-----\nBBBB\n-----END CERTIFICATE-----\n"


@pytest.fixture
def temp_dir(tmp_path, monkeypatch) -> Path:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(kube, "_ca_files", {})
    return tmp_path


def token_cluster(ca_cert: str) -> Cluster:
    return Cluster(
        name="tok",
        connection=ConnectionKind.TOKEN,
        api_url="https://127.0.0.1:6443",
        token_encrypted=encrypt("secret"),
        ca_cert=ca_cert,
    )


def ca_path(cluster: Cluster) -> str:
    api = kube.api_client_for(cluster)
    try:
        return api.configuration.ssl_ca_cert
    finally:
        api.close()


def test_clients_share_one_file_per_certificate(temp_dir):
    paths = {ca_path(token_cluster(PEM_A)) for _ in range(20)}
    assert len(paths) == 1
    (path,) = paths
    assert Path(path).read_text() == PEM_A
    other = ca_path(token_cluster(PEM_B))
    assert other != path
    assert Path(other).read_text() == PEM_B
    assert sorted(p.name for p in temp_dir.iterdir()) == sorted(
        [Path(path).name, Path(other).name]
    )


def test_a_removed_file_is_written_again(temp_dir):
    first = ca_path(token_cluster(PEM_A))
    Path(first).unlink()  # e.g. a temp cleaner ran
    again = ca_path(token_cluster(PEM_A))
    assert Path(again).read_text() == PEM_A


def test_files_are_removed_at_exit(temp_dir):
    paths = [ca_path(token_cluster(PEM_A)), ca_path(token_cluster(PEM_B))]
    kube._remove_ca_files()
    assert not any(Path(p).exists() for p in paths)
    assert list(temp_dir.iterdir()) == []
