"""The ground floor: ``apps.common`` and ``apps.live`` import no other app.

Every app may build on them; they build on none (lazy imports included), so a
newcomer can read them first and an app can be moved without dragging them.
Apps register what the ground floor reads from them (metric families in
``AppConfig.ready``), instead of the ground floor importing the apps.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

APPS = Path(__file__).resolve().parents[1] / "apps"
GROUND = {"common": {"common"}, "live": {"common", "live"}}


def _apps_imported(path: Path) -> set[str]:
    """The apps (``apps.<name>``) a module imports, at any depth of its code."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        modules = (
            [node.module or ""]
            if isinstance(node, ast.ImportFrom)
            else [alias.name for alias in node.names]
            if isinstance(node, ast.Import)
            else []
        )
        names |= {m.split(".")[1] for m in modules if m.startswith("apps.")}
    return names


@pytest.mark.parametrize("floor", sorted(GROUND))
def test_the_ground_floor_imports_no_app_above_it(floor):
    modules = sorted((APPS / floor).rglob("*.py"))
    assert modules, f"apps/{floor} has no modules: the test looks in the wrong place"
    above = {
        str(path.relative_to(APPS)): sorted(_apps_imported(path) - GROUND[floor])
        for path in modules
    }
    assert {path: apps for path, apps in above.items() if apps} == {}


def test_the_check_sees_an_import_of_an_app(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("def f():\n    from apps.inventory.models import Chip\n")
    assert _apps_imported(module) == {"inventory"}
