"""Small rooms: no function over 80 lines and no module over 600 in ``apps/`` and
``simcluster/``.

A function that does not fit on a screen or two hides its steps; a module of
many hundred lines usually holds more than one idea. Both limits may be passed
by one concept that splitting would only scatter: such a module says which
concept in its docstring, and it is listed in ``ALLOWED`` with the reason, as
is anything still waiting to be split. A new offender fails here; so does an
entry of ``ALLOWED`` that is no longer over, so the list only ever shrinks.

A function's length is that of its ``def`` (``end_lineno - lineno + 1``), its
decorators left out; a method is named ``Class.method``.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHECKED = ("apps", "simcluster")
MAX_FUNCTION_LINES = 80
MAX_MODULE_LINES = 600

#: Modules (path) and functions (``path:qualified.name``) allowed over the
#: limits, with the reason: none today.
ALLOWED: dict[str, str] = {}


def _functions(
    node: ast.AST, prefix: str = ""
) -> Iterator[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    """Every function and method under ``node``, nested ones too, by qualified name."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
            yield f"{prefix}{child.name}", child
            yield from _functions(child, f"{prefix}{child.name}.")
        elif isinstance(child, ast.ClassDef):
            yield from _functions(child, f"{prefix}{child.name}.")
        else:
            yield from _functions(child, prefix)


def offenders(root: Path = ROOT) -> dict[str, int]:
    """Modules and functions over the limits, with their length in lines."""
    found: dict[str, int] = {}
    for top in CHECKED:
        for path in sorted((root / top).rglob("*.py")):
            if "migrations" in path.parts:
                continue
            name = path.relative_to(root).as_posix()
            text = path.read_text()
            lines = len(text.splitlines())
            if lines > MAX_MODULE_LINES:
                found[name] = lines
            for qualified, func in _functions(ast.parse(text)):
                length = (func.end_lineno or func.lineno) - func.lineno + 1
                if length > MAX_FUNCTION_LINES:
                    found[f"{name}:{qualified}"] = length
    return found


OFFENDERS = offenders()


def test_no_new_module_or_function_is_over_the_limits():
    new = {name: n for name, n in OFFENDERS.items() if name not in ALLOWED}
    assert new == {}, (
        f"over {MAX_FUNCTION_LINES} lines (function) or {MAX_MODULE_LINES} (module):"
        " split it into steps with names that explain them, or, if it is one"
        " concept, say which in its docstring and add it to ALLOWED with why"
    )


def test_every_allowed_entry_is_still_over():
    stale = sorted(set(ALLOWED) - set(OFFENDERS))
    assert stale == [], "no longer over the limits: remove from ALLOWED"


def test_every_allowed_entry_says_why():
    assert [name for name, why in ALLOWED.items() if not why.strip()] == []


def test_the_check_measures_defs_without_decorators_and_names_methods(tmp_path):
    body = "".join(f"    x{n} = {n}\n" for n in range(MAX_FUNCTION_LINES - 1))
    (tmp_path / "apps").mkdir()
    (tmp_path / "apps" / "m.py").write_text(
        "import functools\n\n\n"
        "@functools.cache\n"
        f"def fits():\n{body}\n\n"
        "class C:\n"
        f"    def over(self):\n{body.replace('    ', '        ')}        y = 1\n"
    )
    assert offenders(tmp_path) == {"apps/m.py:C.over": MAX_FUNCTION_LINES + 1}
