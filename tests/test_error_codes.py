"""Error codes are names: every named error's code is in the one table, and the
table is what the schema documents and the frontend gets."""

from __future__ import annotations

import importlib

import pytest
from django.apps import apps as django_apps
from django.core.management import CommandError, call_command

from apps.common.exceptions import ERRORS, DomainError, ErrorCode


def _named_errors() -> list[type[DomainError]]:
    for config in django_apps.get_app_configs():
        if config.name.startswith("apps."):
            try:
                importlib.import_module(f"{config.name}.errors")
            except ModuleNotFoundError:
                continue
    found, todo = [], [DomainError]
    while todo:
        cls = todo.pop()
        found.append(cls)
        todo.extend(cls.__subclasses__())
    return found


def test_every_code_has_a_status_and_a_meaning():
    assert set(ERRORS) == set(ErrorCode)
    for code, (status, meaning) in ERRORS.items():
        assert 400 <= status <= 599, code
        assert meaning, code


def test_every_named_error_has_its_own_code_from_the_table():
    named = [cls for cls in _named_errors() if cls is not DomainError]
    assert len(named) >= 15, [c.__name__ for c in named]  # the apps' errors are seen
    codes = [cls.code for cls in named]
    assert len(codes) == len(set(codes)), codes
    for cls in named:
        assert cls.code in ERRORS, cls
        assert cls("x").http_status == ERRORS[cls.code][0]


def test_a_code_cannot_be_passed_as_a_string():
    with pytest.raises(TypeError):
        DomainError("x", code="drift")  # type: ignore[call-arg]


def test_the_schema_documents_every_code(admin_client):
    schema = admin_client.get("/api/schema/?format=json").json()
    described = schema["components"]["schemas"]["Error"]["properties"]["code"]
    for code, (status, _) in ERRORS.items():
        assert f"`{code}` ({status}:" in described["description"]


def test_the_frontends_copy_is_current(tmp_path, monkeypatch):
    from apps.common.management.commands import error_codes

    call_command("error_codes", "--check")
    # and the check can fail
    stale = tmp_path / "errorCodes.ts"
    stale.write_text("export const ErrorCode = {};\n")
    monkeypatch.setattr(error_codes, "TARGET", stale)
    with pytest.raises(CommandError, match="stale"):
        call_command("error_codes", "--check")
