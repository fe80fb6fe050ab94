"""Imports run one way: down the layers between apps, and without a loop inside one.

``apps/`` is built in floors. An app imports only the floors below its own
(lazy imports inside functions included), so a newcomer can read the code from
the ground up and any app can be changed without the ones beneath it noticing.
Where a lower floor needs something from a higher one (how audit scopes a
request's events, what sync does once slices change), the higher app registers
it in its ``AppConfig.ready`` and the lower one never names it.

Inside an app the modules form no cycle either, again counting imports inside
functions: a cycle that works only because half of it is imported late breaks
as soon as someone moves one import to the top. Only an import under
``if TYPE_CHECKING:`` is left out; it never runs.

How an import counts: ``import apps.a.b.c`` (or ``from apps.a.b import c``)
runs ``apps.a``, ``apps.a.b`` and ``apps.a.b.c``, so it is an edge to each of
them, except to the packages the importing module is itself inside (they are
already running when it is imported).
"""

from __future__ import annotations

import ast
import itertools
from collections.abc import Iterator
from pathlib import Path

import pytest

APPS = Path(__file__).resolve().parents[1] / "apps"

#: The floors, lowest first: a unit imports only units on lower floors (and
#: itself). A unit is an app, except the HAMi format package: pure Python,
#: shared by inventory, the allocator and simcluster, it stands on the ground.
LAYERS: tuple[tuple[str, ...], ...] = (
    # The ground: what every app may use; it uses nothing of theirs.
    ("common", "inventory.hami"),
    # Deltas to browsers; the audit log (every service records to it).
    ("live", "audit"),
    # Users, roles and tokens.
    ("accounts",),
    # Clusters, their chips and device config, and sync.
    ("inventory",),
    # What is built on the inventory: requests and their placement; usage and cost.
    ("scheduling", "metering"),
    # What reads across them all: the alerts on their metrics, and their silences.
    ("alerts",),
)
FLOOR = {unit: n for n, units in enumerate(LAYERS) for unit in units}


def module_name(path: Path, root: Path) -> str:
    """``apps/a/b.py`` -> ``apps.a.b``; a package is its ``__init__``."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def project_modules(root: Path) -> dict[str, Path]:
    """Every module of ``root/apps`` (migrations aside: they import nothing of ours
    but models, and Django orders them), by dotted name."""
    return {
        module_name(path, root): path
        for path in sorted((root / "apps").rglob("*.py"))
        if "migrations" not in path.parts
    }


def _type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _import_nodes(tree: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement, at any depth, but those under ``if TYPE_CHECKING:``."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and _type_checking(node.test):
            stack.extend(node.orelse)
            continue
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        stack.extend(ast.iter_child_nodes(node))


def imported(name: str, path: Path, modules: dict[str, Path]) -> dict[str, int]:
    """The project modules that importing ``name`` (at ``path``) runs, each with
    the line of the first import that does."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: dict[str, int] = {}
    for node in _import_nodes(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        else:
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            # ``from a import b`` imports the module a.b when there is one.
            targets = [
                f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base
                for alias in node.names
            ]
        for target in targets:
            parts = target.split(".")
            for n in range(2, len(parts) + 1):
                ancestor = ".".join(parts[:n])
                inside = name == ancestor or name.startswith(ancestor + ".")
                if ancestor in modules and not inside:
                    found.setdefault(ancestor, node.lineno)
    return found


def import_graph(root: Path) -> dict[str, dict[str, int]]:
    """``{module: {module it imports: line}}`` over ``root/apps``."""
    modules = project_modules(root)
    return {name: imported(name, path, modules) for name, path in modules.items()}


def unit_of(module: str) -> str:
    """The layer unit a module belongs to (see ``LAYERS``)."""
    if module == "apps.inventory.hami" or module.startswith("apps.inventory.hami."):
        return "inventory.hami"
    return module.split(".")[1]


def loops(graph: dict[str, dict[str, int]]) -> list[set[str]]:
    """The modules that import each other in a loop, as strongly connected
    components (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[set[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, {}):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.add(w)
                if w == v:
                    break
            if len(component) > 1 or v in graph.get(v, {}):
                components.append(component)

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return components


def cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """One cycle through each loop, as a path."""
    return [_a_cycle(graph, component) for component in loops(graph)]


def _a_cycle(graph: dict[str, dict[str, int]], component: set[str]) -> list[str]:
    """A shortest cycle through the component's first module, as a path."""
    start = min(component)
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        following = []
        for v in frontier:
            for w in sorted(graph.get(v, {})):
                if w == start:
                    return [*paths[v], start]
                if w in component and w not in paths:
                    paths[w] = [*paths[v], w]
                    following.append(w)
        frontier = following
    raise AssertionError(f"no cycle in {component}")  # pragma: no cover


def _described(graph: dict[str, dict[str, int]], cycle: list[str]) -> str:
    path = " -> ".join(
        f"{a} (line {graph[a][b]})" for a, b in itertools.pairwise(cycle)
    )
    return f"{path} -> {cycle[-1]}"


def upward_imports(graph: dict[str, dict[str, int]]) -> list[str]:
    """Imports of a unit on the same or a higher floor than the importer's."""
    found = []
    for module, targets in sorted(graph.items()):
        if module == "apps":
            continue
        # The deepest module of each unit imported, at its first line.
        above: dict[str, tuple[str, int]] = {}
        for target, line in sorted(targets.items()):
            source, dest = unit_of(module), unit_of(target)
            if source != dest and FLOOR[dest] >= FLOOR[source]:
                first = above.get(dest, (target, line))
                above[dest] = (target, min(line, first[1]))
        found += [
            f"{module} (line {line}) imports {target}"
            for target, line in above.values()
        ]
    return found


GRAPH = import_graph(APPS.parent)


def test_every_app_has_a_floor():
    units = {unit_of(module) for module in GRAPH if module != "apps"}
    assert units - set(FLOOR) == set(), "add the new app to LAYERS"
    assert set(FLOOR) - units == set(), "LAYERS names a unit that does not exist"


def test_apps_import_only_the_floors_below_their_own():
    assert upward_imports(GRAPH) == []


def test_no_modules_import_each_other_in_a_loop():
    assert [
        f"{len(loop)} modules in a loop, one way round: "
        f"{_described(GRAPH, _a_cycle(GRAPH, loop))}; all: {sorted(loop)}"
        for loop in loops(GRAPH)
    ] == []


# --- the check itself --------------------------------------------------------


def _tree(tmp_path: Path, files: dict[str, str]) -> dict[str, dict[str, int]]:
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return import_graph(tmp_path)


def test_the_check_sees_an_import_inside_a_function_but_not_for_type_checking(
    tmp_path,
):
    graph = _tree(
        tmp_path,
        {
            "apps/__init__.py": "",
            "apps/a/__init__.py": "",
            "apps/a/x.py": (
                "from typing import TYPE_CHECKING\n"
                "if TYPE_CHECKING:\n    from apps.a import z\n"
                "def f():\n    from apps.a.y import thing\n"
            ),
            "apps/a/y.py": "from . import x\n",
            "apps/a/z.py": "",
        },
    )
    assert graph["apps.a.x"] == {"apps.a.y": 5}
    assert graph["apps.a.y"] == {"apps.a.x": 1}
    assert cycles(graph) == [["apps.a.x", "apps.a.y", "apps.a.x"]]


def test_an_import_runs_the_packages_above_the_module(tmp_path):
    graph = _tree(
        tmp_path,
        {
            "apps/__init__.py": "",
            "apps/a/__init__.py": "",
            "apps/a/p/__init__.py": "from apps.a.p.m import thing\n",
            "apps/a/p/m.py": "from apps.b.q import other\nthing = 1\n",
            "apps/b/__init__.py": "",
            "apps/b/q.py": "import apps.a.p.m\nother = 2\n",
        },
    )
    # Outside the package the import runs its __init__ too; inside, it does not.
    assert set(graph["apps.b.q"]) == {"apps.a", "apps.a.p", "apps.a.p.m"}
    assert set(graph["apps.a.p.m"]) == {"apps.b", "apps.b.q"}
    assert cycles(graph) == [["apps.a.p", "apps.a.p.m", "apps.b.q", "apps.a.p"]]


@pytest.mark.parametrize(
    ("module", "target", "upward"),
    [
        ("apps.audit.selectors", "apps.scheduling.selectors", True),
        ("apps.scheduling.services.requests", "apps.inventory.models", False),
        ("apps.inventory.hami.validation", "apps.inventory.models", True),
        ("apps.live.events", "apps.audit.models", True),
    ],
)
def test_the_check_sees_an_upward_import(module, target, upward):
    assert bool(upward_imports({module: {target: 1}})) is upward
