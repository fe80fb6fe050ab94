"""kubestack's HAMi pieces that need no Go and no cluster: where the build
finds HAMi's source and what it says when there is none, and what the stack
gives HAMi (its config shape, its kube-scheduler, its webhook)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
import yaml

from kubestack import hami, hamibuild, versions
from simcluster import guide_data


def _tarball(folder, content: bytes, declared: str | None = None):
    path = folder / hamibuild.TARBALL
    path.write_bytes(content)
    digest = declared or hashlib.sha256(content).hexdigest()
    path.with_name(path.name + ".sha256").write_text(f"{digest}  {path.name}\n")
    return path


def test_without_a_source_the_message_says_what_to_provide(monkeypatch, tmp_path):
    monkeypatch.setenv("KUBESTACK_CACHE", str(tmp_path))
    text = hamibuild.what_to_provide("This module version is not available.")
    assert "HAMI_SRC" in text
    assert f"{hamibuild.TARBALL}.sha256" in text
    assert str(tmp_path / "sources") in text
    assert "not available" in text


def test_hami_src_may_name_the_file_or_its_folder(monkeypatch, tmp_path):
    path = _tarball(tmp_path, b"x")
    monkeypatch.setenv("HAMI_SRC", str(path))
    assert hamibuild.tarball_path() == path
    monkeypatch.setenv("HAMI_SRC", str(tmp_path))
    assert hamibuild.tarball_path() == path


def test_the_cache_sources_folder_is_looked_in_without_hami_src(monkeypatch, tmp_path):
    monkeypatch.delenv("HAMI_SRC", raising=False)
    monkeypatch.setenv("KUBESTACK_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(hamibuild, "BESIDE_REPOSITORY", tmp_path / "shared")
    monkeypatch.setattr(hamibuild, "beside_origin", lambda: None)
    assert hamibuild.tarball_path() is None
    (tmp_path / "cache" / "sources").mkdir(parents=True)
    path = _tarball(tmp_path / "cache" / "sources", b"x")
    assert hamibuild.tarball_path() == path


def test_the_shared_folder_beside_the_repository_comes_last(monkeypatch, tmp_path):
    monkeypatch.delenv("HAMI_SRC", raising=False)
    monkeypatch.setenv("KUBESTACK_CACHE", str(tmp_path / "cache"))
    (tmp_path / "shared").mkdir()
    monkeypatch.setattr(hamibuild, "BESIDE_REPOSITORY", tmp_path / "shared")
    monkeypatch.setattr(hamibuild, "beside_origin", lambda: None)
    beside = _tarball(tmp_path / "shared", b"x")
    assert hamibuild.tarball_path() == beside
    (tmp_path / "cache" / "sources").mkdir(parents=True)
    cached = _tarball(tmp_path / "cache" / "sources", b"y")
    assert hamibuild.tarball_path() == cached


def test_a_tarball_is_refused_without_or_against_its_checksum(tmp_path):
    path = tmp_path / hamibuild.TARBALL
    path.write_bytes(b"x")
    with pytest.raises(hamibuild.HamiSourceMissing, match="beside it"):
        hamibuild.verified_tarball(path)
    _tarball(tmp_path, b"x", declared="0" * 64)
    with pytest.raises(hamibuild.HamiSourceMissing, match="differs"):
        hamibuild.verified_tarball(path)
    with pytest.raises(hamibuild.HamiSourceMissing, match="not a file"):
        hamibuild.verified_tarball(tmp_path / "missing.tar.gz")


def test_a_tarball_that_matches_its_sidecar_must_still_be_the_release(tmp_path):
    # Given a consistent pair that is not HAMi's release source
    path = _tarball(tmp_path, b"not HAMi")
    # Then the checksum pinned in versions.py refuses it
    with pytest.raises(hamibuild.HamiSourceMissing, match=r"versions\.py"):
        hamibuild.verified_tarball(path)
    assert len(versions.HAMI_SOURCE_SHA256) == 64


def test_the_module_cache_spells_capitals_with_a_bang():
    assert hamibuild._escape_module(versions.HAMI_MODULE) == (
        "github.com/!project-!h!a!mi/!h!a!mi"
    )


def test_the_guide_config_becomes_the_wrapper_shape_with_the_same_chips():
    # Given the guide's device config (the list shape)
    listed = yaml.safe_load(guide_data.DEVICE_CONFIG_YAML)["vnpus"]
    # When it is given the shape HAMi v2.9.0 reads
    text = hami.wrapper_shape(guide_data.DEVICE_CONFIG_YAML)
    wrapped = yaml.safe_load(text)["vnpus"]
    # Then the chip types are the same, under configs, soft split off
    assert wrapped == {"hamiVnpuCore": False, "configs": listed}
    assert "# Ascend 310P3" in text
    assert hami.wrapper_shape(text) == text


def test_the_extender_and_webhook_are_the_charts():
    conf = hami.scheduler_configuration(Path("/k"), "https://127.0.0.1:1")
    extender = conf["extenders"][0]
    assert conf["profiles"] == [{"schedulerName": "hami-scheduler"}]
    assert (extender["filterVerb"], extender["bindVerb"]) == ("filter", "bind")
    managed = {r["name"] for r in extender["managedResources"]}
    assert {"huawei.com/Ascend310P", "huawei.com/Ascend910B4-memory"} <= managed
    assert all(r["ignoredByScheduler"] for r in extender["managedResources"])
    webhook = hami.webhook_configuration("https://127.0.0.1:1/webhook", "Q0E=")
    (entry,) = webhook["webhooks"]
    assert entry["failurePolicy"] == "Ignore"
    assert entry["rules"][0]["operations"] == ["CREATE"]


def test_the_nodes_hami_took_in_are_read_from_its_log():
    log = "\n".join(
        [
            'I1206 1 scheduler.go:431] "Node device added" nodeName="a" x=1',
            'I1206 1 scheduler.go:431] "Other" nodeName="b"',
        ]
    )
    assert hami.registered_nodes(log) == {"a"}


def test_a_failed_hami_stage_leaves_the_others_built(monkeypatch, tmp_path, capsys):
    from kubestack import build

    def missing(**_):
        raise build.BuildError(hamibuild.what_to_provide())

    monkeypatch.setattr(build, "go_binary", lambda: "go")
    for name in ("tools_bin_dir", "bin_dir", "helm_bin_dir", "hydra_bin_dir"):
        monkeypatch.setattr(build, name, lambda name=name, **_: tmp_path / name)
    monkeypatch.setattr(build, "hami_bin_dir", missing)
    # When the background build runs with no HAMi source
    assert build.main(status_dir=tmp_path / "status") == 1
    # Then only the hami stage failed, saying what to provide
    status = {
        stage: (tmp_path / "status" / f"{stage}.rc").read_text().strip()
        for stage in build.STAGES
    }
    assert status == {
        "kubectl": "0",
        "hydra": "0",
        "control-plane": "0",
        "hami": "1",
        "helm": "0",
    }
    assert "HAMI_SRC" in capsys.readouterr().err


def test_a_fresh_clone_finds_the_source_beside_the_repository_it_came_from(tmp_path):
    """``git clone . $(mktemp -d)`` has no shared folder beside it; the
    repository it was cloned from does."""
    import subprocess

    origin = tmp_path / "work" / "main"
    origin.mkdir(parents=True)
    (tmp_path / "work" / "shared" / "upstream").mkdir(parents=True)
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "init", "-q", str(origin)], check=True)
    subprocess.run(
        [*git, "-C", str(origin), "commit", "-q", "--allow-empty", "-m", "x"],
        check=True,
    )
    clone = tmp_path / "elsewhere" / "clone"
    subprocess.run([*git, "clone", "-q", str(origin), str(clone)], check=True)
    found = hamibuild.beside_origin(clone)
    assert found == (tmp_path / "work" / "shared" / "upstream").resolve()
    assert hamibuild.beside_origin(origin) is None  # no origin: nothing more
