"""The frontend's copy of the live contract (frontend/src/live/contract.ts) is
generated from apps.live.events, and current."""

from __future__ import annotations

from typing import Annotated, NotRequired, TypedDict

import pytest
from django.core.management import CommandError, call_command

from apps.live import events
from apps.live.contract import _Renderer, typescript


def test_the_frontends_copy_is_current(tmp_path, monkeypatch):
    from apps.live.management.commands import live_contract

    call_command("live_contract", "--check")
    # and the check can fail
    stale = tmp_path / "contract.ts"
    stale.write_text(typescript().replace('"chips"', '"chip"'))
    monkeypatch.setattr(live_contract, "TARGET", stale)
    with pytest.raises(CommandError, match="stale"):
        call_command("live_contract", "--check")
    stale.unlink()
    with pytest.raises(CommandError, match="stale"):
        call_command("live_contract", "--check")


def test_write_makes_the_check_pass(tmp_path, monkeypatch):
    from apps.live.management.commands import live_contract

    monkeypatch.setattr(live_contract, "TARGET", tmp_path / "contract.ts")
    call_command("live_contract", "--write")
    call_command("live_contract", "--check")


def test_the_contract_has_every_event_payload_and_column():
    text = typescript()
    for event, payload in events.PAYLOADS.items():
        assert f'  {event.name}: "{event.value}",' in text
        assert f"  {event.value}: {payload.__name__};" in text
        assert f"export interface {payload.__name__} {{" in text
    columns = text.split("export const CHIP_COLUMNS = [\n", 1)[1].split("]")[0]
    assert columns.split() == [f'"{c}",' for c in events.CHIP_COLUMNS]
    assert 'sync_state: components["schemas"]["SyncStateEnum"];' in text


class _Inner(TypedDict):
    """An inner type."""

    n: int


class _Outer(TypedDict):
    inner: list[_Inner]
    maybe: NotRequired[str | None]
    state: Annotated[str, events.ApiSchema("SyncStateEnum")]
    any_of: dict[str, int | str]


def test_python_types_become_typescript():
    render = _Renderer()
    assert render.ts(_Outer) == "_Outer"
    assert list(render.named) == ["_Inner", "_Outer"]  # what a type uses comes first
    assert render.declaration(_Outer) == [
        "export interface _Outer {",
        "  inner: _Inner[];",
        "  maybe?: string | null;",
        '  state: components["schemas"]["SyncStateEnum"];',
        "  any_of: Record<string, number | string>;",
        "}",
    ]
    assert render.declaration(_Inner)[0] == "/** An inner type. */"
    assert render.ts(list[int | None]) == "(number | null)[]"
    with pytest.raises(TypeError, match="no TypeScript"):
        render.ts(set[int])
