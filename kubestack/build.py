"""Build the control plane's binaries from Go modules, cached by version.

Each part is a small wrapper module in ``kubestack/gomod/<part>`` (go.mod, go.sum,
tools.go) that requires the upstream module at a pinned version. The binaries go
to ``<cache>/<key>/bin`` where the key hashes every wrapper file and the Go
version, so a warm build only checks that the folder exists. A cold build takes
minutes on two cores; progress is printed as packages compile.

Volcano v1.15.1 needs ``volcano.sh/apis`` v1.15.x, which the Go module proxy does
not serve (it answers 403 for every v1.15 tag); v1.14.0 is served and lacks one
constant the scheduler uses. The build copies apis v1.14.0 out of the module
cache, adds ``gomod/volcano/compat/*.go`` to it, and points the replace at that
copy. Nothing of upstream is kept in the repository.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from harness.processes import WaitTimeout, wait_until
from kubestack import versions

GOMOD = Path(__file__).resolve().parent / "gomod"
BUILD_FORMAT = "4"  # bump when the layout of a cache folder changes


@dataclass(frozen=True)
class Part:
    """One wrapper module and the commands it builds (package path, binary name)."""

    name: str
    commands: tuple[tuple[str, str], ...]


PARTS: tuple[Part, ...] = (
    Part(
        "kubernetes",
        (
            ("k8s.io/kubernetes/cmd/kube-apiserver", "kube-apiserver"),
            (
                "k8s.io/kubernetes/cmd/kube-controller-manager",
                "kube-controller-manager",
            ),
            # DaemonSet pods and the system Deployments are placed by the default
            # scheduler, as on a real cluster; Volcano places only its own pods.
            ("k8s.io/kubernetes/cmd/kube-scheduler", "kube-scheduler"),
        ),
    ),
    Part(
        "volcano",
        (
            ("volcano.sh/volcano/cmd/scheduler", "vc-scheduler"),
            ("volcano.sh/volcano/cmd/controller-manager", "vc-controller-manager"),
        ),
    ),
    Part("etcd", (("go.etcd.io/etcd/server/v3", "etcd"),)),
    Part("kwok", (("sigs.k8s.io/kwok/cmd/kwok", "kwok"),)),
)

BINARIES = tuple(binary for part in PARTS for _, binary in part.commands)

# The tools the tests run (kubectl of the API server's version, helm) have
# cache folders of their own: most tests need kubectl, so it is built first;
# only the real-stack tests need the control plane, and only the Helm tests
# helm, so scripts/test.sh builds those beside the tests, in that order.
# Bumping helm never rebuilds kubectl or the control plane (and the reverse).
KUBECTL = Part("kubernetes", (("k8s.io/kubernetes/cmd/kubectl", "kubectl"),))
HELM = Part("helm", (("helm.sh/helm/v4/cmd/helm", "helm"),))
# ORY Hydra, the OpenID provider the sign-in tests use (harness/hydra.py):
# with cgo and the ``sqlite`` tag, for its in-memory store (DSN=memory).
HYDRA = Part("hydra", (("github.com/ory/hydra/v2", "hydra"),))
TOOLS: tuple[Part, ...] = (KUBECTL, HELM, HYDRA)

# The stages of a whole build, in the order scripts/test.sh's background
# build runs them; each writes ``<stage>.rc`` into KUBESTACK_BUILD_DIR. Hydra
# (a few minutes cold) comes right after kubectl: the sign-in tests, the
# browser's among them, wait for it, and its failure fails only them. HAMi's
# scheduler (``--scheduler hami``) comes after the control plane, as its
# tests come after the other real-stack tests; its source may be missing on a
# machine, and then only its own stage fails (kubestack/hamibuild.py).
STAGES = ("kubectl", "hydra", "control-plane", "hami", "helm")
# Stages whose failure leaves the later ones to run.
INDEPENDENT_STAGES = ("hydra", "hami")


class BuildError(RuntimeError):
    """A build step failed; the message says which and how to see why."""


def cache_root() -> Path:
    """Where builds are kept: ``$KUBESTACK_CACHE`` or ``~/.cache/vnpuportal/kubestack``."""
    configured = os.environ.get("KUBESTACK_CACHE")
    if configured:
        return Path(configured).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "vnpuportal" / "kubestack"


def go_binary() -> str:
    """The ``go`` command, or a BuildError that says what to install."""
    found = shutil.which("go") or (
        "/usr/local/go/bin/go" if Path("/usr/local/go/bin/go").exists() else None
    )
    if not found:
        raise BuildError(
            "Go is needed to build the real control plane (Go 1.25 or newer, "
            "e.g. Debian's golang-1.25 or go.dev/dl); it is not on PATH"
        )
    return found


def cache_key(go: str) -> str:
    """Hash of every wrapper file, the Go version and the build format."""
    digest = hashlib.sha256(BUILD_FORMAT.encode())
    digest.update(
        subprocess.run(
            [go, "version"], capture_output=True, text=True, check=True
        ).stdout.encode()
    )
    _hash_wrappers(digest, tuple(part.name for part in PARTS))
    # The upstream files copied beside the binaries (share/): a folder built
    # before one was added lacks it.
    digest.update(repr(_shared_files()).encode())
    return f"k8s-{versions.KUBERNETES}-volcano-{versions.VOLCANO}-{digest.hexdigest()[:12]}"


def _shared_files() -> tuple[tuple[str, ...], ...]:
    """The upstream files the build copies into ``share/`` (their names)."""
    return (versions.VOLCANO_CRDS, versions.KWOK_STAGES, versions.KWOK_CRDS)


def _hash_wrappers(digest: hashlib._Hash, names: tuple[str, ...]) -> None:
    """Feed the wrapper modules ``names`` (paths and contents) into ``digest``."""
    for path in sorted(GOMOD.rglob("*")):
        relative = path.relative_to(GOMOD)
        if path.is_file() and relative.parts[0] in names:
            digest.update(str(relative).encode())
            digest.update(path.read_bytes())


def tools_cache_root() -> Path:
    """Where kubectl and helm are kept: ``$TOOLS_BUILD_CACHE`` or ``~/.cache/vnpuportal/tools``."""
    configured = os.environ.get("TOOLS_BUILD_CACHE")
    if configured:
        return Path(configured).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "vnpuportal" / "tools"


def _tool_cache_key(go: str, part: Part, version: str) -> str:
    """Hash of one tool's wrapper module, the Go version and the build format."""
    digest = hashlib.sha256(BUILD_FORMAT.encode())
    digest.update(
        subprocess.run(
            [go, "version"], capture_output=True, text=True, check=True
        ).stdout.encode()
    )
    _hash_wrappers(digest, (part.name,))
    # The kubernetes wrapper also builds the control plane: kubectl's key
    # names the command too, so the two never share a folder.
    return f"{part.commands[0][1]}-{version}-{digest.hexdigest()[:12]}"


def _tool_bin_dir(part: Part, version: str, build: bool, quiet: bool) -> Path:
    """The folder holding one cached tool; builds it first when ``build``."""
    go = go_binary()
    target = tools_cache_root() / _tool_cache_key(go, part, version)
    binary = part.commands[0][1]
    if not build and not (target / "bin" / binary).is_file():
        # scripts/test.sh may be building it beside the tests right now.
        wait_for_background_build(binary)
    if not (target / "bin" / binary).is_file():
        if not build:
            raise BuildError(
                f"{binary} is not built for this version ({target.name}); "
                "run: python -m kubestack build-tools (or build)"
            )
        started = time.monotonic()
        _say(quiet, f"==> building {binary} {version} into {target}")
        staging = target.with_name(target.name + f".partial-{os.getpid()}")
        shutil.rmtree(staging, ignore_errors=True)
        (staging / "bin").mkdir(parents=True)
        try:
            _build_part(go, part, staging / "bin", quiet)
            shutil.rmtree(target, ignore_errors=True)
            staging.rename(target)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        _say(quiet, f"==> {binary} built in {time.monotonic() - started:.0f} s")
    return target / "bin"


def tools_bin_dir(build: bool = False, quiet: bool = False) -> Path:
    """The folder holding the cached kubectl; builds it first when ``build``."""
    return _tool_bin_dir(KUBECTL, versions.KUBERNETES, build, quiet)


def helm_bin_dir(build: bool = False, quiet: bool = False) -> Path:
    """The folder holding the cached helm; builds it first when ``build``."""
    return _tool_bin_dir(HELM, versions.HELM, build, quiet)


def hydra_bin_dir(build: bool = False, quiet: bool = False) -> Path:
    """The folder holding the cached hydra; builds it first when ``build``."""
    return _tool_bin_dir(HYDRA, versions.HYDRA, build, quiet)


def path_dirs(planned: bool = False) -> list[Path]:
    """The folders to put on PATH: kubectl, helm, then the control plane.

    ``planned``: the folders the builds will fill, whether they exist yet or
    not (scripts/test.sh builds them while the tests run).
    """
    if planned:
        go = go_binary()
        return [
            tools_cache_root()
            / _tool_cache_key(go, KUBECTL, versions.KUBERNETES)
            / "bin",
            tools_cache_root() / _tool_cache_key(go, HELM, versions.HELM) / "bin",
            cache_root() / cache_key(go) / "bin",
        ]
    return [tools_bin_dir(), helm_bin_dir(), bin_dir()]


def wait_for_background_build(stage: str, timeout: float = 3600.0) -> None:
    """Wait for one stage of the build that scripts/test.sh runs beside the tests.

    ``$KUBESTACK_BUILD_DIR`` is where that build writes ``<stage>.rc`` (its
    exit status) as each stage of ``STAGES`` ends, and ``build.log``. Without
    it (a build made beforehand) this returns at once.

    Raises:
        BuildError: The stage failed (with the end of the log) or outlasted
            ``timeout``.
    """
    folder = os.environ.get("KUBESTACK_BUILD_DIR")
    if not folder:
        return
    if stage not in STAGES:
        raise ValueError(f"no build stage {stage!r} (stages: {', '.join(STAGES)})")
    done, log = Path(folder) / f"{stage}.rc", Path(folder) / "build.log"
    started = time.monotonic()

    def ended() -> str:
        return done.read_text().strip() if done.is_file() else ""

    announced = not ended()
    if announced:
        print(f"\n==> waiting for the background build of {stage} ({log})", flush=True)
        try:
            wait_until(ended, f"the background build of {stage} ({log})", timeout, 1)
        except WaitTimeout:
            raise BuildError(
                f"the build of {stage} did not end in {timeout:.0f} s ({log})"
            ) from None
    if ended() != "0":
        tail = log.read_text(errors="replace")[-4000:] if log.is_file() else ""
        raise BuildError(f"the build of {stage} failed ({log}):\n{tail}")
    if announced:
        print(
            f"==> {stage} was built; waited {time.monotonic() - started:.0f} s",
            flush=True,
        )


def bin_dir(build: bool = False, quiet: bool = False) -> Path:
    """The folder of the cached binaries; builds them first when ``build``."""
    go = go_binary()
    target = cache_root() / cache_key(go)
    if not build and (not (target / "bin").is_dir() or not (target / "share").is_dir()):
        # scripts/test.sh may be building it beside the tests right now (the
        # build itself never waits: it is that build).
        wait_for_background_build("control-plane")
    if not (target / "bin").is_dir() or not (target / "share").is_dir():
        if not build:
            raise BuildError(
                f"the control plane is not built for this version ({target.name}); "
                "run: python -m kubestack build"
            )
        _build_all(go, target, quiet)
    return target / "bin"


def hami_bin_dir(build: bool = False, quiet: bool = False) -> Path:
    """The folder holding the cached ``hami-scheduler``; builds it first when
    ``build`` (from the module or the release source, kubestack/hamibuild.py).

    Raises:
        BuildError: Not built (and not ``build``), no source to build it from
            (the message says what to provide), or the build failed.
    """
    from kubestack import hamibuild

    go = go_binary()
    target = cache_root() / hamibuild.cache_key(go)
    binary = target / "bin" / hamibuild.BINARY
    if not build and not binary.is_file():
        wait_for_background_build("hami")
    if not binary.is_file():
        if not build:
            raise BuildError(
                f"HAMi's scheduler is not built for this version ({target.name}); "
                "run: python -m kubestack build (it needs the HAMi "
                f"{versions.HAMI} source: the Go module, or HAMI_SRC)"
            )
        _say(quiet, f"==> building HAMi's scheduler {versions.HAMI} into {target}")
        env = go_env(go)
        try:
            source = hamibuild.resolve(go, env)
        except hamibuild.HamiSourceMissing as error:
            raise BuildError(str(error)) from None
        hamibuild.build(go, env, source, target, lambda text: _say(quiet, text))
    return target / "bin"


def share_dir() -> Path:
    """Upstream data files the stack needs at run time (Volcano CRDs, KWOK
    stages and CRDs)."""
    return bin_dir().parent / "share"


def _say(quiet: bool, text: str) -> None:
    if not quiet:
        print(text, flush=True)


def go_env(go: str) -> dict[str, str]:
    """The environment of every go command: no cgo unless a part needs it,
    the wrapper's go.mod may be completed (-mod=mod), no VCS stamping."""
    env = dict(os.environ)
    env.setdefault("CGO_ENABLED", "0")
    env["GOFLAGS"] = "-mod=mod -buildvcs=false"
    env["PATH"] = f"{Path(go).parent}:{env.get('PATH', '')}"
    return env


def _run(cmd: list[str], cwd: Path, env: dict[str, str], what: str) -> str:
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise BuildError(f"{what} failed:\n{done.stderr[-4000:]}")
    return done.stdout


def _stage_volcano_apis(go: str, work: Path, env: dict[str, str]) -> None:
    """Copy volcano.sh/apis into the work folder with the compat files added."""
    out = _run(
        [go, "mod", "download", "-json", f"volcano.sh/apis@{versions.VOLCANO_APIS}"],
        work,
        env,
        "downloading volcano.sh/apis",
    )
    source = Path(json.loads(out)["Dir"])
    apis = work / "apis"
    shutil.copytree(source, apis)
    for path in apis.rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)
    for compat in sorted((work / "compat").glob("*.go")):
        package = compat.read_text().split("\n", 1)[0]
        if package != "package v1beta1":
            raise BuildError(f"{compat.name}: only scheduling/v1beta1 is patched")
        shutil.copy(
            compat,
            apis / "pkg/apis/scheduling/v1beta1" / f"zz_vnpuportal_{compat.name}",
        )
    gomod = (work / "go.mod").read_text()
    pinned = f"volcano.sh/apis => volcano.sh/apis {versions.VOLCANO_APIS}"
    if pinned not in gomod:
        raise BuildError(f"gomod/volcano/go.mod lacks the line '{pinned}'")
    (work / "go.mod").write_text(gomod.replace(pinned, "volcano.sh/apis => ./apis"))


def _build_tags(part: Part) -> list[str]:
    """Hydra's in-memory store is SQLite (cgo, and the ``sqlite`` build tag)."""
    if part.name == "hydra":
        return ["-tags", "sqlite,sqlite_omit_load_extension"]
    return []


def _build_part(go: str, part: Part, out: Path, quiet: bool) -> None:
    env = go_env(go)
    if part.name == "hydra":
        env["CGO_ENABLED"] = "1"
    with tempfile.TemporaryDirectory(prefix=f"kubestack-{part.name}-") as tmp:
        work = Path(tmp)
        shutil.copytree(GOMOD / part.name, work, dirs_exist_ok=True)
        if part.name == "volcano":
            _stage_volcano_apis(go, work, env)
        packages = [package for package, _ in part.commands]
        deps = _run(
            [go, "list", "-deps", *_build_tags(part), *packages],
            work,
            env,
            f"listing {part.name}",
        ).split()
        total = len(deps)
        started = time.monotonic()
        # All of a part's commands in one go build: the packages they share
        # compile once, and links run beside compiles on both cores.
        built = work / "out"
        built.mkdir()
        ldflags = " ".join(["-s", "-w", *_version_flags(part)])
        # No -trimpath: with it a replaced module is keyed in the build cache
        # by the version it replaced, so the Volcano and etcd wrappers, which
        # replace theirs with Kubernetes' (kubestack/gomods.py), would share
        # none of what the Kubernetes build compiled. The paths it keeps are
        # the Go module cache's, the same for every build on a machine.
        cmd = [go, "build", "-v", *_build_tags(part)]
        cmd += [f"-ldflags={ldflags}"]
        cmd += ["-o", f"{built}{os.sep}", *packages]
        proc = subprocess.Popen(
            cmd,
            cwd=work,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        if proc.stderr is None:
            raise BuildError("go build gave no output stream")
        names = ", ".join(binary for _, binary in part.commands)
        compiled, errors, last_report = 0, [], 0.0
        for line in proc.stderr:
            line = line.rstrip()
            if line in deps:
                compiled += 1
                now = time.monotonic()
                if now - last_report >= 5:
                    last_report = now
                    _say(
                        quiet,
                        f"    {part.name}: {names}: {compiled} packages compiled "
                        f"(of up to {total}), {now - started:.0f} s",
                    )
            else:
                errors.append(line)
        if proc.wait() != 0:
            raise BuildError(
                f"go build {' '.join(packages)} failed:\n" + "\n".join(errors[-60:])
            )
        for package, binary in part.commands:
            (built / _default_binary_name(package)).rename(out / binary)
        _say(quiet, f"    {part.name}: built in {time.monotonic() - started:.0f} s")
        if part.name == "volcano":
            _copy_volcano_crds(go, work, env, out.parent / "share" / "volcano-crds")
        if part.name == "kwok":
            _copy_kwok_files(go, work, env, out.parent / "share")


def _default_binary_name(package: str) -> str:
    """The name ``go build -o DIR/`` gives a command: the last element of its
    path, or the one before a major-version suffix (``.../server/v3``)."""
    elements = package.split("/")
    last = elements[-1]
    if len(elements) > 1 and last[:1] == "v" and last[1:].isdigit():
        return elements[-2]
    return last


def _version_flags(part: Part) -> list[str]:
    """``-X`` flags that stamp the release into the Kubernetes binaries.

    Upstream's Makefile sets these from git; a module build has no git, and
    without them kubectl and the API server say ``v0.0.0-master``.
    """
    if part.name == "helm":
        return [f"-X helm.sh/helm/v4/internal/version.version={versions.HELM}"]
    if part.name == "hydra":
        return [f"-X github.com/ory/hydra/v2/driver/config.Version={versions.HYDRA}"]
    if part.name != "kubernetes":
        return []
    major, minor = versions.KUBERNETES.lstrip("v").split(".")[:2]
    values = {
        "gitVersion": versions.KUBERNETES,
        "gitMajor": major,
        "gitMinor": minor,
        "gitTreeState": "clean",
    }
    return [
        f"-X {package}.{name}={value}"
        for package in ("k8s.io/component-base/version", "k8s.io/client-go/pkg/version")
        for name, value in values.items()
    ]


def _module_dir(go: str, work: Path, env: dict[str, str], module: str) -> Path:
    out = _run([go, "list", "-m", "-json", module], work, env, f"locating {module}")
    return Path(json.loads(out)["Dir"])


def _copy_volcano_crds(go: str, work: Path, env: dict[str, str], dest: Path) -> None:
    source = (
        _module_dir(go, work, env, "volcano.sh/volcano") / "config/crd/volcano/bases"
    )
    dest.mkdir(parents=True, exist_ok=True)
    for name in versions.VOLCANO_CRDS:
        shutil.copy(source / name, dest / name)
        (dest / name).chmod(0o644)


def _copy_kwok_files(go: str, work: Path, env: dict[str, str], share: Path) -> None:
    """KWOK's stages (share/kwok-stages) and CRDs (share/kwok-crds)."""
    module = _module_dir(go, work, env, "sigs.k8s.io/kwok")
    copies = [
        (module / "kustomize/stage" / relative, "kwok-stages", relative)
        for relative in versions.KWOK_STAGES
    ] + [
        (module / "kustomize/crd/bases" / name, "kwok-crds", name)
        for name in versions.KWOK_CRDS
    ]
    for source, folder, relative in copies:
        target = share / folder / relative.replace("/", "-")
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(source, target)
        target.chmod(0o644)


def _build_all(go: str, target: Path, quiet: bool) -> None:
    started = time.monotonic()
    _say(quiet, f"==> building the control plane into {target}")
    _say(
        quiet,
        "    (a cold build takes several minutes on two cores; later runs reuse it)",
    )
    staging = target.with_name(target.name + f".partial-{os.getpid()}")
    shutil.rmtree(staging, ignore_errors=True)
    (staging / "bin").mkdir(parents=True)
    (staging / "share").mkdir()
    try:
        for index, part in enumerate(PARTS, 1):
            names = ", ".join(binary for _, binary in part.commands)
            _say(quiet, f"==> [{index}/{len(PARTS)}] {part.name}: {names}")
            _build_part(go, part, staging / "bin", quiet)
        # The cold build's time is kept with the binaries, for bench.realstack.
        summary = {
            **versions.summary(),
            "built_in_seconds": round(time.monotonic() - started),
        }
        (staging / "versions.json").write_text(json.dumps(summary, indent=2))
        shutil.rmtree(target, ignore_errors=True)
        staging.rename(target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    _say(quiet, f"==> control plane built in {time.monotonic() - started:.0f} s")


def main(
    force: bool = False, control_plane: bool = True, status_dir: Path | None = None
) -> int:
    """``python -m kubestack build`` (kubectl, hydra, the control plane, HAMi's
    scheduler, helm) or ``build-tools`` (kubectl, hydra and helm only).

    Each has its own cache folder, so a warm control plane costs nothing when
    only a tool is missing, and the reverse. With ``status_dir`` each stage
    writes ``<stage>.rc`` there as it ends (0, or 1 for it and every later
    stage once one fails), for the tests that wait for it.
    """
    go = ""
    stages: list[tuple[str, Callable[[], Path]]] = [
        ("kubectl", lambda: tools_bin_dir(build=True)),
        ("hydra", lambda: hydra_bin_dir(build=True)),
        ("control-plane", lambda: bin_dir(build=True)),
        ("hami", lambda: hami_bin_dir(build=True)),
        ("helm", lambda: helm_bin_dir(build=True)),
    ]
    if not control_plane:
        stages = [s for s in stages if s[0] not in ("control-plane", "hami")]
    started = time.monotonic()
    folders, failed = [], []
    try:
        go = go_binary()
        for stage, build in stages:
            if force:
                shutil.rmtree(stage_folder(go, stage), ignore_errors=True)
            try:
                folders.append(build())
            except BuildError as error:
                if stage not in INDEPENDENT_STAGES:
                    raise
                print(f"kubestack build: {stage}: {error}", file=sys.stderr)
                failed.append(stage)
                _stage_done(status_dir, stage, 1)
                continue
            _stage_done(status_dir, stage, 0)
    except BuildError as error:
        print(f"kubestack build: {error}", file=sys.stderr)
        for stage, _ in stages:
            _stage_done(status_dir, stage, 1)
        return 1
    shown = os.pathsep.join(str(folder) for folder in folders)
    if failed:
        print(f"==> built, except {', '.join(failed)}: {shown}")
        return 1
    print(f"==> ready in {time.monotonic() - started:.1f} s: {shown}")
    return 0


def stage_folder(go: str, stage: str) -> Path:
    """The cache folder one stage fills."""
    if stage == "kubectl":
        return tools_cache_root() / _tool_cache_key(go, KUBECTL, versions.KUBERNETES)
    if stage == "helm":
        return tools_cache_root() / _tool_cache_key(go, HELM, versions.HELM)
    if stage == "hydra":
        return tools_cache_root() / _tool_cache_key(go, HYDRA, versions.HYDRA)
    if stage == "hami":
        from kubestack import hamibuild

        return cache_root() / hamibuild.cache_key(go)
    return cache_root() / cache_key(go)


def _stage_done(status_dir: Path | None, stage: str, status: int) -> None:
    """Say that a stage ended (a stage already said stays as it was)."""
    if status_dir is None:
        return
    status_dir.mkdir(parents=True, exist_ok=True)
    done = status_dir / f"{stage}.rc"
    if not done.exists():
        # Written whole, then renamed: a waiter never reads half a status.
        partial = done.with_suffix(".partial")
        partial.write_text(f"{status}\n")
        partial.rename(done)
