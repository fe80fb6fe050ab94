"""The wrapper modules built beside Kubernetes use Kubernetes' dependency versions.

Go's build cache keys a compiled package by its source and its dependencies'
(recursively), so a package compiles once for every wrapper module that
resolves it, and all that depends on it, to the same versions. Volcano and
etcd share most of their dependencies with kube-apiserver (client-go, the API
types, gRPC, protobuf, golang.org/x), but each resolves them a few versions
apart, and a single differing module low in the graph (golang.org/x/sys)
made a cold build compile nearly all of them again: Volcano shared 3 MB of
its 49 MB of Go source with the Kubernetes build before.

So these wrappers ``replace`` every module they list with the version the
Kubernetes wrapper lists (the API server stays exactly as released; Volcano
and etcd build with what Kubernetes ships). ``python -m kubestack align``
writes those lines after a version bump; ``tests/test_kubestack_gomods.py``
checks that none is missing. The builds run without ``-trimpath``: with it,
a replaced module is named by the version it replaced in the cache key, so
the same source would not be shared (kubestack/build.py).
"""

from __future__ import annotations

import re
from pathlib import Path

GOMOD = Path(__file__).resolve().parent / "gomod"
BASE = "kubernetes"
ALIGNED = ("volcano", "etcd")
HEADER = (
    "// Kubernetes' versions of the modules shared with it (python -m kubestack align)."
)

_DIRECTIVES = (
    "module",
    "go",
    "toolchain",
    "godebug",
    "require",
    "replace",
    "exclude",
    "retract",
    "tool",
    "ignore",
)


def effective_versions(gomod: str) -> dict[str, str]:
    """Module path -> the version a build uses: the required one, or the
    version a ``replace`` line names for it (local-path replaces are left out)."""
    required: dict[str, str] = {}
    replaced: dict[str, str] = {}
    block = ""
    for raw in gomod.splitlines():
        words = raw.split("//", 1)[0].split()
        if not words:
            continue
        if words[-1] == "(":
            block = words[0]
            continue
        if words == [")"]:
            block = ""
            continue
        kind = block
        if words[0] in _DIRECTIVES:
            kind, words = words[0], words[1:]
        if kind == "require" and len(words) == 2:
            required[words[0]] = words[1]
        elif kind == "replace" and "=>" in words:
            target = words[words.index("=>") + 1 :]
            if len(target) == 2:
                replaced[words[0]] = target[1]
    return {
        module: replaced.get(module, version) for module, version in required.items()
    }


def own_modules(part: str) -> set[str]:
    """The modules a wrapper exists to build (its first ``require``), never replaced."""
    text = (GOMOD / part / "go.mod").read_text()
    return {m[1] for m in re.finditer(r"^require ([^\s(]+) v", text, re.M)}


def misaligned(part: str) -> list[tuple[str, str, str]]:
    """(module, Kubernetes' version, this wrapper's) for every module both
    wrappers list at different versions."""
    base = effective_versions((GOMOD / BASE / "go.mod").read_text())
    mine = effective_versions((GOMOD / part / "go.mod").read_text())
    skip = own_modules(part)
    return sorted(
        (module, base[module], version)
        for module, version in mine.items()
        if module in base and base[module] != version and module not in skip
    )


def align(part: str) -> list[tuple[str, str, str]]:
    """Pin every module both wrappers list to Kubernetes' version; returns
    what changed.

    The pins go in a ``replace`` block of their own at the end of go.mod
    (any earlier replace line of those modules is dropped). Run ``go mod
    tidy`` in the wrapper afterwards (``python -m kubestack align`` does);
    a module Kubernetes lists lower than the wrapper's code needs shows up
    as a compile error in ``python -m kubestack build``.
    """
    path = GOMOD / part / "go.mod"
    changed = misaligned(part)
    if not changed:
        return []
    base = effective_versions((GOMOD / BASE / "go.mod").read_text())
    text = path.read_text()
    skip = own_modules(part)
    pinned = sorted(m for m in effective_versions(text) if m in base and m not in skip)
    kept = [line for line in text.splitlines() if not _replaces(line, pinned)]
    text = re.sub(r"\nreplace \(\n\)\n", "\n", "\n".join(kept).rstrip() + "\n")
    block = "\n".join(f"\t{m} => {m} {base[m]}" for m in pinned)
    path.write_text(f"{text}\n{HEADER}\nreplace (\n{block}\n)\n")
    return changed


def _replaces(line: str, modules: list[str]) -> bool:
    """Whether a go.mod line is a replace of one of these modules, or the pins' header."""
    if line == HEADER:
        return True
    words = line.split("//", 1)[0].split()
    if words[:1] == ["replace"]:
        words = words[1:]
    return "=>" in words and words[0] in modules
