"""The real gopkg.in/yaml.v2, as a tiny Go program, for differential tests.

``yamlv2probe/main.go`` is built once with the Go toolchain (the module comes
from the Go module proxy, or the local module cache) and cached outside the
repository in ``~/.cache/vnpuportal/yamlv2-<version>-<source hash>/``
(``VNPU_PORTAL_CACHE`` moves ``~/.cache/vnpuportal``). Without Go the tests
that need it skip locally and fail in CI (``CI`` set), which never skips.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from tests.requires import missing

YAML_V2_VERSION = "v2.4.0"  # HAMi v2.8/v2.9 and Volcano require this one
SOURCE = Path(__file__).with_name("yamlv2probe") / "main.go"
GO_MOD = f"""module vnpuportal.local/yamlv2probe

go 1.21

require gopkg.in/yaml.v2 {YAML_V2_VERSION}
"""


def _cache_dir() -> Path:
    root = Path(
        os.environ.get("VNPU_PORTAL_CACHE", Path.home() / ".cache" / "vnpuportal")
    )
    digest = hashlib.sha256(SOURCE.read_bytes() + GO_MOD.encode()).hexdigest()[:12]
    return root / f"yamlv2-{YAML_V2_VERSION}-{digest}"


def probe_binary() -> Path:
    """The built probe; builds it on first use. Skips (fails in CI) without Go."""
    binary = _cache_dir() / "yamlv2probe"
    if binary.exists():
        return binary
    go = shutil.which("go") or (
        "/usr/local/go/bin/go" if Path("/usr/local/go/bin/go").exists() else None
    )
    if go is None:
        missing("go is not installed (needed to build the real yaml.v2)")
    binary.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=binary.parent) as work:
        shutil.copy(SOURCE, Path(work) / "main.go")
        (Path(work) / "go.mod").write_text(GO_MOD, encoding="utf-8")
        env = {**os.environ, "GOFLAGS": "-mod=mod", "CGO_ENABLED": "0"}
        for step in (["mod", "tidy"], ["build", "-o", "yamlv2probe", "."]):
            done = subprocess.run(
                [go, *step],
                cwd=work,
                env=env,
                capture_output=True,
                text=True,
                timeout=600,
                check=False,
            )
            assert done.returncode == 0, f"go {' '.join(step)}: {done.stderr}"
        # Atomic: a concurrent test run sees the whole binary or none.
        os.replace(Path(work) / "yamlv2probe", binary)
    return binary


def _untyped(value: Any) -> Any:
    if value is None:
        return None
    ((kind, inner),) = value.items()
    if kind == "str":
        return inner
    if kind == "bool":
        return inner
    if kind == "int":
        return int(inner)
    if kind == "float":
        return float(inner)
    if kind == "list":
        return [_untyped(item) for item in inner]
    if kind == "map":
        return {_untyped(k): _untyped(v) for k, v in inner}
    raise AssertionError(f"yaml.v2 gave a Go value the test cannot compare: {inner}")


def yaml_v2_parse(texts: list[str], mode: str = "any") -> list[Any]:
    """What yaml.v2 parses from each text: a value, or an ``Exception`` for an error.

    Args:
        texts: YAML documents.
        mode: ``any`` (an ``interface{}``; scalars keep their Go type: int,
            float, bool, str, None) or ``list``/``wrapper`` (HAMi's structs,
            as plain JSON).
    """
    done = subprocess.run(
        [str(probe_binary())],
        input=json.dumps([{"mode": mode, "text": text} for text in texts]),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    results: list[Any] = []
    for answer in json.loads(done.stdout):
        if "error" in answer:
            results.append(ValueError(answer["error"]))
        elif mode == "any":
            results.append(_untyped(answer["value"]))
        else:
            results.append(answer["value"])
    return results
