"""A token cluster's CA certificate reaches the client as a file: one per
distinct certificate for the life of the process, not one per client built."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
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


def test_concurrent_clients_write_one_file(temp_dir):
    with ThreadPoolExecutor(8) as pool:
        paths = set(pool.map(lambda _: kube.ca_file(PEM_A), range(32)))
    assert len(paths) == 1
    assert len(list(temp_dir.iterdir())) == 1


def test_a_worker_process_removes_its_files_on_shutdown(temp_dir):
    """Celery's prefork children end with os._exit, which skips atexit."""
    from celery.signals import worker_process_shutdown

    import apps.inventory.tasks  # noqa: F401  (connects the receiver)

    paths = [ca_path(token_cluster(PEM_A)), ca_path(token_cluster(PEM_B))]
    worker_process_shutdown.send(sender=None, pid=os.getpid(), exitcode=0)
    assert not any(Path(p).exists() for p in paths)
    assert list(temp_dir.iterdir()) == []


@pytest.mark.processes
def test_a_process_removes_its_files_at_exit(tmp_path):
    code = (
        "import django; django.setup()\n"
        "from apps.inventory.kube import ca_file\n"
        f"print(ca_file({PEM_A!r}))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, "TMPDIR": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    path = Path(done.stdout.strip().splitlines()[-1])
    assert path.parent == tmp_path  # it was written where we look
    assert not path.exists()


def test_a_forked_child_keeps_off_its_parents_files(temp_dir):
    """A child (a prefork worker) writes and removes its own files; the
    parent's, which its clients still read, stay."""
    parent = kube.ca_file(PEM_A)
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report its file, remove its files, leave at once
        try:
            child = kube.ca_file(PEM_A)
            kube.remove_ca_files()
            os.write(write, child.encode())
        finally:
            os._exit(0)
    os.close(write)
    child = os.read(read, 4096).decode()
    os.close(read)
    os.waitpid(pid, 0)
    assert child
    assert child != parent
    assert not Path(child).exists()
    assert Path(parent).read_text() == PEM_A
