"""The Helm chart (deploy/helm/vnpu-portal) and the ``helm`` built by kubestack, for tests."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
CHART = ROOT / "deploy" / "helm" / "vnpu-portal"
CI_VALUES = sorted((CHART / "ci").glob("*-values.yaml"))
RELEASE = "vnpu"
NAMESPACE = "vnpu-system"


def helm_binary() -> str:
    """The cached helm (fails, naming the command that builds it, when it is not built)."""
    from kubestack import build

    return str(build.helm_bin_dir() / "helm")


def helm(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    """Run helm; with ``check`` a failure raises with its output."""
    done = subprocess.run(
        [helm_binary(), *args], capture_output=True, text=True, timeout=120, check=False
    )
    if check and done.returncode != 0:
        raise AssertionError(f"helm {' '.join(args)}:\n{done.stdout}\n{done.stderr}")
    return done


def value_args(
    values: Path | None = None, sets: dict[str, str] | None = None
) -> list[str]:
    """Arguments for a values file (``-f``) and ``--set`` pairs."""
    args: list[str] = []
    if values is not None:
        args += ["-f", str(values)]
    for key, value in (sets or {}).items():
        args += ["--set", f"{key}={value}"]
    return args


def render(
    values: Path | None = None,
    sets: dict[str, str] | None = None,
    *,
    hooks: bool = True,
) -> list[dict[str, Any]]:
    """``helm template`` of the chart, as objects (hooks included unless ``hooks`` is false)."""
    args = ["template", RELEASE, str(CHART), "--namespace", NAMESPACE]
    if not hooks:
        args.append("--no-hooks")
    out = helm(*args, *value_args(values, sets)).stdout
    return [doc for doc in yaml.safe_load_all(out) if doc]


def render_text(values: Path | None = None, sets: dict[str, str] | None = None) -> str:
    """``helm template`` output as text (to look for what must not be in it)."""
    args = ["template", RELEASE, str(CHART), "--namespace", NAMESPACE]
    return helm(*args, *value_args(values, sets)).stdout
