"""docker/compose.yml parses, interpolates and matches the Compose specification.

No container engine (nor `docker compose`) runs here, so the file is read with
PyYAML, interpolated the way Compose does (``${VAR}``, ``${VAR:-default}``,
``${VAR:?error}``), and validated against the Compose specification's JSON
schema (``compose_spec.json``: the schema shipped by docker-compose 1.29.2,
Debian's package, Apache-2.0; it predates the top-level ``name``, which is
checked here by hand), plus the structure this portal needs.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = ROOT / "docker" / "compose.yml"
SCHEMA = Path(__file__).with_name("compose_spec.json")
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?])([^}]*))?\}")


class MissingVariable(Exception):
    pass


def interpolate(value: Any, env: dict[str, str]) -> Any:
    """Compose's variable substitution on every string of the document."""
    if isinstance(value, dict):
        return {k: interpolate(v, env) for k, v in value.items()}
    if isinstance(value, list):
        return [interpolate(v, env) for v in value]
    if not isinstance(value, str):
        return value

    def one(match: re.Match[str]) -> str:
        name, op, arg = match.group(1), match.group(2), match.group(3)
        current = env.get(name)
        unset_or_empty = not current if op and op.startswith(":") else current is None
        if op and op.endswith("?") and unset_or_empty:
            raise MissingVariable(f"{name}: {arg}")
        if op and op.endswith("-") and unset_or_empty:
            return arg
        return current or ""

    return _VAR.sub(one, value.replace("$$", "\0")).replace("\0", "$")


def load(env: dict[str, str]) -> dict[str, Any]:
    return interpolate(yaml.safe_load(COMPOSE.read_text()), env)


ENV = {"DJANGO_SECRET_KEY": "k" * 60}


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    return load(ENV)


def test_the_file_matches_the_compose_specification(compose):
    assert isinstance(compose.pop("name"), str)  # newer than the vendored schema
    schema = json.loads(SCHEMA.read_text())
    jsonschema.Draft201909Validator(schema).validate(compose)


def test_a_missing_secret_key_stops_compose_with_a_message():
    with pytest.raises(
        MissingVariable, match="DJANGO_SECRET_KEY: set DJANGO_SECRET_KEY"
    ):
        load({})


def test_the_services_and_the_demo_profile(compose):
    services = compose["services"]
    assert set(services) == {
        "postgres",
        "redis",
        "web",
        "worker",
        "beat",
        "simcluster",
        "demo-setup",
    }
    always = {n for n, s in services.items() if not s.get("profiles")}
    assert always == {"postgres", "redis", "web", "worker", "beat"}
    assert services["simcluster"]["profiles"] == ["demo"]
    assert services["demo-setup"]["profiles"] == ["demo"]
    # one image, built from docker/Dockerfile, with a role per service
    for name, role in {
        "web": "web",
        "worker": "worker",
        "beat": "beat",
        "simcluster": "simcluster",
    }.items():
        service = services[name]
        assert service["build"] == {"context": "..", "dockerfile": "docker/Dockerfile"}
        assert service["command"] == [role]
    assert services["demo-setup"]["command"][:2] == ["manage", "demo"]
    assert (ROOT / "docker" / "Dockerfile").is_file()


def test_the_portal_runs_on_postgres_and_redis_in_production_mode(compose):
    for name in ("web", "worker", "beat"):
        env = compose["services"][name]["environment"]
        assert env["DJANGO_DEBUG"] == "false"
        assert env["DJANGO_SECRET_KEY"] == "k" * 60
        assert env["DATABASE_URL"].startswith("postgres://vnpu:")
        assert env["DATABASE_URL"].endswith("@postgres:5432/vnpu")
        assert env["REDIS_URL"] == "redis://redis:6379/0"
        assert env["CACHE_URL"].startswith("redis://redis:6379/")


def test_start_order_waits_for_health(compose):
    services = compose["services"]
    for name, service in services.items():
        for dependency, condition in (service.get("depends_on") or {}).items():
            assert dependency in services, (name, dependency)
            if condition["condition"] == "service_healthy":
                assert "healthcheck" in services[dependency], dependency
    assert services["worker"]["depends_on"]["web"]["condition"] == "service_healthy"
    assert "/readyz" in " ".join(services["web"]["healthcheck"]["test"])
    # queued tasks survive a Redis restart
    assert "--appendonly" in services["redis"]["command"]


def test_named_volumes_are_declared(compose):
    declared = set(compose["volumes"])
    for service in compose["services"].values():
        for volume in service.get("volumes") or []:
            source = volume.split(":", 1)[0]
            if not source.startswith((".", "/")):
                assert source in declared, source
