"""The Volcano and etcd wrappers build with Kubernetes' dependency versions,
so a cold build compiles what they share with kube-apiserver once
(kubestack/gomods.py says why)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kubestack import build, gomods


def _gomod(module: str, builds: str, requires: list[str], replaces: str) -> str:
    """A wrapper's go.mod as ``go mod tidy`` writes one."""
    indirect = "".join(f"\t{line} // indirect\n" for line in requires)
    return (
        f"module {module}\n\ngo 1.25.0\n\nrequire {builds}\n\n"
        f"require (\n{indirect})\n\n{replaces}"
    )


BASE = _gomod(
    "example.local/base",
    "k8s.io/kubernetes v1.35.3",
    ["golang.org/x/net v0.47.0", "google.golang.org/grpc v1.72.2", "k8s.io/api v0.0.0"],
    "replace k8s.io/api => k8s.io/api v0.35.3\n",
)

WRAPPER = _gomod(
    "example.local/wrapper",
    "volcano.sh/volcano v1.15.1",
    [
        "golang.org/x/net v0.55.0",
        "google.golang.org/grpc v1.79.3",
        "k8s.io/api v0.35.3",
        "k8s.io/kubernetes v1.35.3",
        "volcano.sh/apis v1.14.0",
    ],
    "replace (\n"
    "\tgoogle.golang.org/grpc => google.golang.org/grpc v1.79.3\n"
    "\tvolcano.sh/apis => volcano.sh/apis v1.14.0\n"
    ")\n",
)


@pytest.mark.parametrize("part", gomods.ALIGNED)
def test_every_module_a_wrapper_shares_with_kubernetes_is_at_its_version(part):
    assert gomods.misaligned(part) == []
    # and the modules it exists to build are its own
    assert gomods.own_modules(part)
    assert part in {p.name for p in build.PARTS}


def test_a_replace_line_decides_the_version_and_a_local_path_is_left_out():
    versions = gomods.effective_versions(
        WRAPPER
        + "replace example.local/x => ../x\n"
        + "require example.local/x v1.0.0\n"
    )
    assert versions["google.golang.org/grpc"] == "v1.79.3"
    assert versions["golang.org/x/net"] == "v0.55.0"
    assert versions["example.local/x"] == "v1.0.0"
    assert gomods.effective_versions(BASE)["k8s.io/api"] == "v0.35.3"


@pytest.fixture
def wrappers(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name, text in (("kubernetes", BASE), ("volcano", WRAPPER)):
        (tmp_path / name).mkdir()
        (tmp_path / name / "go.mod").write_text(text)
    monkeypatch.setattr(gomods, "GOMOD", tmp_path)
    return tmp_path


def test_align_pins_the_shared_modules_once_and_keeps_the_wrappers_own(wrappers):
    assert gomods.misaligned("volcano") == [
        ("golang.org/x/net", "v0.47.0", "v0.55.0"),
        ("google.golang.org/grpc", "v1.72.2", "v1.79.3"),
    ]
    changed = gomods.align("volcano")
    assert [module for module, _, _ in changed] == [
        "golang.org/x/net",
        "google.golang.org/grpc",
    ]
    assert gomods.misaligned("volcano") == []
    text = (wrappers / "volcano" / "go.mod").read_text()
    # the old grpc replace is gone (two would conflict); apis' stays
    assert text.count("google.golang.org/grpc =>") == 1
    assert "\tvolcano.sh/apis => volcano.sh/apis v1.14.0" in text
    assert "\tk8s.io/api => k8s.io/api v0.35.3" in text
    # what the wrapper builds is never pinned
    assert "volcano.sh/volcano =>" not in text
    # nothing to do twice
    assert gomods.align("volcano") == []
    assert (wrappers / "volcano" / "go.mod").read_text() == text


def test_aligning_again_after_a_bump_rewrites_the_pins_in_place(wrappers):
    gomods.align("volcano")
    bumped = BASE.replace("golang.org/x/net v0.47.0", "golang.org/x/net v0.49.0")
    (wrappers / "kubernetes" / "go.mod").write_text(bumped)
    assert gomods.misaligned("volcano") == [("golang.org/x/net", "v0.49.0", "v0.47.0")]
    gomods.align("volcano")
    text = (wrappers / "volcano" / "go.mod").read_text()
    assert text.count(gomods.HEADER) == 1
    assert text.count("golang.org/x/net =>") == 1
    assert gomods.misaligned("volcano") == []


def test_the_real_wrappers_parse():
    # every wrapper's go.mod yields its required modules (the parser meets
    # the real files' blocks, comments and single-line directives)
    for part in ("kubernetes", *gomods.ALIGNED):
        versions = gomods.effective_versions(
            (build.GOMOD / part / "go.mod").read_text()
        )
        assert len(versions) > 50
        assert all(v.startswith("v") for v in versions.values())
