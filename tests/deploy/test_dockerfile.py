"""docker/Dockerfile: multi-stage, slim runtime, unprivileged, and only real files copied in."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = ROOT / "docker" / "Dockerfile"


def _instructions() -> list[tuple[str, str]]:
    text = re.sub(r"\\\n", " ", DOCKERFILE.read_text())
    found = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            keyword, _, rest = line.partition(" ")
            found.append((keyword.upper(), rest.strip()))
    return found


def _stages() -> dict[str, list[tuple[str, str]]]:
    stages: dict[str, list[tuple[str, str]]] = {}
    current = ""
    for keyword, rest in _instructions():
        if keyword == "FROM":
            current = rest.split(" AS ")[-1].strip()
            stages[current] = [(keyword, rest)]
        elif current:
            stages[current].append((keyword, rest))
    return stages


def test_three_stages_and_a_slim_python_runtime():
    stages = _stages()
    assert list(stages) == ["frontend", "python-deps", "runtime"]
    assert stages["frontend"][0][1].startswith("node:")
    assert stages["runtime"][0][1].startswith("python:3.11-slim")
    runtime = dict(stages["runtime"])
    # the runtime gets the built SPA and the venv, never Node or build tools
    copies = [rest for keyword, rest in stages["runtime"] if keyword == "COPY"]
    assert any(c.startswith("--from=frontend ") for c in copies)
    assert any(c.startswith("--from=python-deps /venv") for c in copies)
    assert "npm" not in " ".join(rest for _, rest in stages["runtime"])
    assert runtime["ENTRYPOINT"] == '["/app/docker/entrypoint.sh"]'
    assert runtime["CMD"] == '["web"]'


def test_runs_as_an_unprivileged_user():
    runtime = _stages()["runtime"]
    users = [rest for keyword, rest in runtime if keyword == "USER"]
    assert users == ["${UID}:${UID}"]
    assert ("ARG", "UID=10001") in runtime
    # the last instruction that runs anything as root comes before USER
    assert [k for k, _ in runtime].index("USER") > max(
        i for i, (k, _) in enumerate(runtime) if k == "RUN"
    )


def test_no_secret_is_baked_in():
    for keyword, rest in _instructions():
        if keyword in ("ENV", "ARG"):
            assert "SECRET" not in rest.upper(), rest
    # collectstatic's throw-away key lives only in that RUN's environment
    assert "DJANGO_SECRET_KEY=collectstatic-only" in DOCKERFILE.read_text()


def test_every_copied_path_exists_and_secrets_are_ignored():
    for keyword, rest in _instructions():
        if keyword != "COPY" or rest.startswith("--from="):
            continue
        *sources, _ = rest.split()
        for source in sources:
            matches = list(ROOT.glob(source.rstrip("/")))
            assert matches, f"COPY {source}: nothing in the repository"
    ignored = (ROOT / "docker" / "Dockerfile.dockerignore").read_text().split()
    for needed in (".env", "**/.venv", "**/.git", "**/node_modules", "*.sqlite3"):
        assert needed in ignored
