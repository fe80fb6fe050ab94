"""ORY Hydra, the OpenID provider of the sign-in tests, as a kubestack build
stage: its wrapper module, how it is built, and where its stage runs."""

from __future__ import annotations

import re

from kubestack import build, versions


def test_the_wrapper_requires_the_pinned_hydra_as_a_tool():
    gomod = (build.GOMOD / "hydra" / "go.mod").read_text()
    assert "tool github.com/ory/hydra/v2\n" in gomod
    assert re.search(
        rf"^\tgithub\.com/ory/hydra/v2 {re.escape(versions.HYDRA)}\b", gomod, re.M
    )
    # hydra's own replace of pop, which a wrapper does not inherit
    assert "replace github.com/gobuffalo/pop/v6 => github.com/ory/pop/v6" in gomod
    assert (build.GOMOD / "hydra" / "go.sum").stat().st_size > 0


def test_it_is_built_for_an_in_memory_store_and_says_its_version():
    assert build._build_tags(build.HYDRA) == [
        "-tags",
        "sqlite,sqlite_omit_load_extension",
    ]
    assert build._build_tags(build.HELM) == []
    (flag,) = build._version_flags(build.HYDRA)
    assert flag.endswith(f"driver/config.Version={versions.HYDRA}")
    assert build._default_binary_name("github.com/ory/hydra/v2") == "hydra"


def test_its_stage_comes_after_kubectl_and_fails_alone(monkeypatch, tmp_path, capsys):
    assert build.STAGES.index("hydra") == build.STAGES.index("kubectl") + 1
    assert "hydra" in build.INDEPENDENT_STAGES

    def refused(**_):
        raise build.BuildError("the module proxy refused github.com/ory/hydra/v2")

    monkeypatch.setattr(build, "go_binary", lambda: "go")
    for name in ("tools_bin_dir", "bin_dir", "helm_bin_dir", "hami_bin_dir"):
        monkeypatch.setattr(build, name, lambda name=name, **_: tmp_path / name)
    monkeypatch.setattr(build, "hydra_bin_dir", refused)
    assert build.main(status_dir=tmp_path / "status") == 1
    status = {
        stage: (tmp_path / "status" / f"{stage}.rc").read_text().strip()
        for stage in build.STAGES
    }
    assert status == {
        "kubectl": "0",
        "hydra": "1",
        "control-plane": "0",
        "hami": "0",
        "helm": "0",
    }
    assert "hydra" in capsys.readouterr().err


def test_build_tools_builds_it_beside_kubectl_and_helm(monkeypatch, tmp_path):
    built: list[str] = []
    monkeypatch.setattr(build, "go_binary", lambda: "go")
    for name in ("tools_bin_dir", "helm_bin_dir", "hydra_bin_dir", "bin_dir"):
        monkeypatch.setattr(
            build, name, lambda name=name, **_: built.append(name) or tmp_path
        )
    assert build.main(control_plane=False) == 0
    assert built == ["tools_bin_dir", "hydra_bin_dir", "helm_bin_dir"]
