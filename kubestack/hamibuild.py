"""Build HAMi's scheduler (``cmd/scheduler``) for ``--scheduler hami``, cached by
version and source checksum.

Where the source comes from, in this order:

1. the Go module ``github.com/Project-HAMi/HAMi`` at ``versions.HAMI``, when
   it is in the module cache or the module proxy serves it (the proxy this
   project's machines reach refuses it today);
2. the HAMi release source: the tag's ``git archive`` as a ``.tar.gz``, named
   by ``$HAMI_SRC`` (the file, or a folder holding
   ``HAMi-<version>.tar.gz``), else looked for in ``<cache>/sources/``, then
   in ``shared/upstream/`` beside the repository (where this project's
   machines keep it: a fresh clone there builds it with nothing set). Its
   sha256 must equal the ``.sha256`` file beside it and the one pinned in
   ``versions.HAMI_SOURCE_SHA256``.

No wrapper module: HAMi's own go.mod builds it (its ``replace`` lines name
folders the scheduler never imports), in a temporary copy of the source.
HAMi's scheduler links NVIDIA's go-nvml, which compiles only with cgo, so this
part needs a C compiler where the others do not. The binary goes to
``<cache>/hami-<version>-<hash>/bin/hami-scheduler``, the hash covering the
release's pinned checksum (the module and the tarball are the same tag), the
Go version and this recipe: a warm start only looks for the file, and needs
neither the source nor the network.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tarfile
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from kubestack import versions

RECIPE = "1"  # bump when the way the binary is built changes
BINARY = "hami-scheduler"
PACKAGE = "./cmd/scheduler"
TARBALL = f"HAMi-{versions.HAMI}.tar.gz"


class HamiSourceMissing(RuntimeError):
    """Neither the module nor the release source is at hand; says what to provide."""


@dataclass(frozen=True)
class HamiSource:
    """Where HAMi's source is: a module folder, or a verified release tarball."""

    kind: str  # "module" or "tarball"
    path: Path
    checksum: str  # the module's go.sum hash, or the tarball's sha256


def what_to_provide(proxy_answer: str = "") -> str:
    """The message for a machine that has no HAMi source (no traceback)."""
    refused = f" (the module proxy answered: {proxy_answer})" if proxy_answer else ""
    return (
        f"HAMi's scheduler {versions.HAMI} cannot be built: the Go module "
        f"{versions.HAMI_MODULE}@{versions.HAMI} is not available{refused}, and "
        f"no HAMi {versions.HAMI} release source was found. Provide the release "
        f"source (the tag's git archive, {TARBALL}, with its {TARBALL}.sha256 "
        f"beside it): set HAMI_SRC to that file, or copy both into "
        f"{sources_dir()} or {BESIDE_REPOSITORY}"
    )


def sources_dir() -> Path:
    """Where a release tarball is looked for when ``$HAMI_SRC`` is not set."""
    from kubestack.build import cache_root

    return cache_root() / "sources"


def _escape_module(path: str) -> str:
    """The module cache's spelling of a module path (``!`` before a capital)."""
    return "".join(f"!{c.lower()}" if c.isupper() else c for c in path)


def _gomodcache(go: str) -> Path:
    done = subprocess.run(
        [go, "env", "GOMODCACHE"], capture_output=True, text=True, check=True
    )
    return Path(done.stdout.strip())


def cached_module(go: str) -> HamiSource | None:
    """The module, if the module cache has it already (no network)."""
    cache = _gomodcache(go)
    escaped = _escape_module(versions.HAMI_MODULE)
    ziphash = cache / "cache/download" / escaped / "@v" / f"{versions.HAMI}.ziphash"
    folder = cache / f"{escaped}@{versions.HAMI}"
    if ziphash.is_file() and (folder / "go.mod").is_file():
        return HamiSource("module", folder, ziphash.read_text().strip())
    return None


def download_module(go: str, env: dict[str, str]) -> HamiSource | str:
    """Fetch the module through the proxy: its source, or the proxy's answer."""
    with tempfile.TemporaryDirectory(prefix="kubestack-hami-mod-") as tmp:
        done = subprocess.run(
            [go, "mod", "download", "-json", f"{versions.HAMI_MODULE}@{versions.HAMI}"],
            cwd=tmp,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
    try:
        found = json.loads(done.stdout or "{}")
    except json.JSONDecodeError:
        found = {}
    if done.returncode == 0 and found.get("Dir") and found.get("Sum"):
        return HamiSource("module", Path(found["Dir"]), found["Sum"])
    answer = found.get("Error") or done.stderr.strip() or "no answer"
    return answer.strip().splitlines()[-1].strip()[-300:]


#: The folder beside the repository's folder where this project's machines
#: keep the release source.
BESIDE_REPOSITORY = Path(__file__).resolve().parents[2] / "shared" / "upstream"


def beside_origin(repo: Path | None = None) -> Path | None:
    """The same folder beside the repository ``repo`` (this one) was cloned
    from, when that is a folder on this machine: a fresh clone made to try the
    set-up (``git clone . $(mktemp -d)``) has nothing beside it."""
    repo = repo or Path(__file__).resolve().parents[1]
    done = subprocess.run(
        ["git", "-C", str(repo), "config", "--get", "remote.origin.url"],
        capture_output=True,
        text=True,
        check=False,
    )
    url = done.stdout.strip()
    if not url or "://" in url or ("@" in url and ":" in url):
        return None  # a remote: nothing of it is on this machine
    origin = Path(url).expanduser()
    origin = origin if origin.is_absolute() else (repo / origin)
    folder = origin.resolve().parent / "shared" / "upstream"
    return folder if folder.is_dir() else None


def tarball_path() -> Path | None:
    """The release tarball named by ``$HAMI_SRC``, else found in
    ``sources_dir()``, ``BESIDE_REPOSITORY`` or ``beside_origin()``."""
    configured = os.environ.get("HAMI_SRC", "").strip()
    if configured:
        path = Path(configured).expanduser()
        return path / TARBALL if path.is_dir() else path
    for folder in (sources_dir(), BESIDE_REPOSITORY, beside_origin()):
        if folder is not None and (folder / TARBALL).is_file():
            return folder / TARBALL
    return None


def verified_tarball(path: Path) -> HamiSource:
    """The tarball as a source, once its sha256 is checked (HamiSourceMissing if not)."""
    if not path.is_file():
        raise HamiSourceMissing(
            f"HAMI_SRC names {path}, which is not a file; "
            f"it should be the HAMi {versions.HAMI} release source ({TARBALL})"
        )
    sidecar = path.with_name(path.name + ".sha256")
    if not sidecar.is_file():
        raise HamiSourceMissing(
            f"{path} has no {sidecar.name} beside it; the release source is used "
            "only with its checksum file"
        )
    declared = (sidecar.read_text().split() or [""])[0].lower()
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    actual = digest.hexdigest()
    if actual != declared:
        raise HamiSourceMissing(
            f"{path}: sha256 {actual} differs from {sidecar.name} ({declared})"
        )
    if actual != versions.HAMI_SOURCE_SHA256:
        raise HamiSourceMissing(
            f"{path}: sha256 {actual} is not HAMi {versions.HAMI}'s release "
            f"source ({versions.HAMI_SOURCE_SHA256}, kubestack/versions.py)"
        )
    return HamiSource("tarball", path, actual)


def resolve(go: str, env: dict[str, str]) -> HamiSource:
    """The source to build from (module first; see the module docstring).

    Raises:
        HamiSourceMissing: No source, with what to provide.
    """
    found = cached_module(go) or download_module(go, env)
    if isinstance(found, HamiSource):
        return found
    path = tarball_path()
    if path is None:
        raise HamiSourceMissing(what_to_provide(found))
    return verified_tarball(path)


def cache_key(go: str) -> str:
    """``hami-<version>-<hash>``: the release's checksum, Go version, this recipe."""
    digest = hashlib.sha256(f"{RECIPE}\n{versions.HAMI_SOURCE_SHA256}\n".encode())
    digest.update(
        subprocess.run(
            [go, "version"], capture_output=True, text=True, check=True
        ).stdout.encode()
    )
    return f"hami-{versions.HAMI}-{digest.hexdigest()[:12]}"


def _unpack(source: HamiSource, into: Path) -> Path:
    """A writable copy of the source in ``into``; returns the folder with go.mod."""
    if source.kind == "module":
        tree = into / "src"
        shutil.copytree(source.path, tree)
        for path in [tree, *tree.rglob("*")]:
            path.chmod(0o755 if path.is_dir() else 0o644)
        return tree
    with tarfile.open(source.path) as archive:
        archive.extractall(into, filter="data")
    found = [p.parent for p in into.glob("*/go.mod")]
    if len(found) != 1:
        raise HamiSourceMissing(f"{source.path} holds no single HAMi source folder")
    return found[0]


def ldflags() -> str:
    """Stamp the release in, as HAMi's Makefile does from git."""
    package = f"{versions.HAMI_MODULE}/pkg/version"
    return " ".join(
        [
            "-s",
            "-w",
            f"-X {package}.version={versions.HAMI}",
            f"-X {package}.revision={versions.HAMI_REVISION}",
        ]
    )


def build(go: str, env: dict[str, str], source: HamiSource, target: Path, say) -> None:
    """Compile the scheduler into ``target/bin`` (staged, then renamed whole)."""
    from kubestack.build import BuildError

    started = time.monotonic()
    env = {**env, "CGO_ENABLED": "1"}  # go-nvml compiles only with cgo
    compiler = subprocess.run(
        [go, "env", "CC"], env=env, capture_output=True, text=True, check=False
    ).stdout.strip()
    if not shutil.which(compiler or "gcc"):
        raise BuildError(
            "HAMi's scheduler links NVIDIA's go-nvml, which needs cgo: install a "
            f"C compiler ({compiler or 'gcc'}, e.g. Debian's gcc)"
        )
    staging = target.with_name(target.name + f".partial-{os.getpid()}")
    shutil.rmtree(staging, ignore_errors=True)
    (staging / "bin").mkdir(parents=True)
    try:
        with tempfile.TemporaryDirectory(prefix="kubestack-hami-") as tmp:
            tree = _unpack(source, Path(tmp))
            say(f"    hami: building {PACKAGE} from the {source.kind} ({source.path})")
            done = subprocess.run(
                [
                    go,
                    "build",
                    "-trimpath",
                    f"-ldflags={ldflags()}",
                    "-o",
                    str(staging / "bin" / BINARY),
                    PACKAGE,
                ],
                cwd=tree,
                env=env,
                capture_output=True,
                text=True,
                check=False,
            )
            if done.returncode != 0:
                raise BuildError(
                    f"go build {PACKAGE} (HAMi {versions.HAMI}) failed:\n"
                    + done.stderr[-4000:]
                )
        seconds = round(time.monotonic() - started)
        summary = {
            "hami": versions.HAMI,
            "source": source.kind,
            "checksum": source.checksum,
            "built_in_seconds": seconds,
        }
        (staging / "versions.json").write_text(json.dumps(summary, indent=2))
        shutil.rmtree(target, ignore_errors=True)
        staging.rename(target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    say(f"==> hami-scheduler built in {seconds} s")
