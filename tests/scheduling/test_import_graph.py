"""The scheduling package imports itself in no loop, lazy imports included.

A loop (allocation ↔ decisions, services → tasks → passes → services) hid
behind function-level imports; it is gone, and this keeps it so: follow-up
work goes through ``apps.scheduling.triggers``, and the auto-approver is
passed to ``allocation.persist_result``.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "apps" / "scheduling"


def _imports(path: Path, unit: str) -> set[str]:
    """The sibling modules (or subpackages) ``path`` imports, at any depth of its
    code; ``unit`` is the one it belongs to."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module == "apps.scheduling":
                found |= {alias.name for alias in node.names}
            elif node.module.startswith("apps.scheduling."):
                found.add(node.module.split(".")[2])
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("apps.scheduling."):
                    found.add(alias.name.split(".")[2])
    return found - {unit}


def _graph() -> dict[str, set[str]]:
    # A subpackage (services/, api/, ...) is one node, with its modules' imports.
    units = {p.stem: [p] for p in PACKAGE.glob("*.py")}
    units |= {
        d.name: sorted(d.rglob("*.py"))
        for d in PACKAGE.iterdir()
        if (d / "__init__.py").is_file()
    }
    return {
        name: set().union(*(_imports(path, name) for path in paths)) & set(units)
        for name, paths in units.items()
    }


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    done: set[str] = set()

    def visit(node: str, path: list[str]) -> list[str] | None:
        if node in path:
            return [*path[path.index(node) :], node]
        if node in done:
            return None
        for child in sorted(graph[node]):
            found = visit(child, [*path, node])
            if found:
                return found
        done.add(node)
        return None

    for start in sorted(graph):
        found = visit(start, [])
        if found:
            return found
    return None


def test_the_scheduling_package_has_no_import_cycle():
    assert _cycle(_graph()) is None, " -> ".join(_cycle(_graph()) or [])


def test_the_cycle_finder_finds_one():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None
