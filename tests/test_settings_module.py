"""The settings module says each setting once, so a reader finds it in one place."""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

BASE = Path(__file__).resolve().parent.parent / "vnpuportal" / "settings" / "base.py"


def _module_statements() -> list[ast.stmt]:
    tree = ast.parse(BASE.read_text())
    statements: list[ast.stmt] = []
    for node in tree.body:
        statements.append(node)
        if isinstance(node, ast.If):  # module-level branches count as the module
            statements.extend(node.body + node.orelse)
    return statements


def test_every_setting_is_assigned_once():
    assigned = Counter()
    for node in _module_statements():
        targets = (
            node.targets
            if isinstance(node, ast.Assign)
            else [node.target]
            if isinstance(node, ast.AnnAssign | ast.AugAssign)
            else []
        )
        for target in targets:
            if isinstance(target, ast.Name) and target.id.isupper():
                assigned[target.id] += 1
    assert assigned, "no settings found: the test reads the wrong file"
    assert [name for name, count in assigned.items() if count > 1] == []


def test_no_setting_is_changed_after_it_is_made():
    changed = []
    for node in _module_statements():
        if isinstance(node, ast.Assign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            changed += [ast.unparse(t) for t in targets if isinstance(t, ast.Subscript)]
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
            func = node.value.func  # SETTING[...].update(...) and the like
            if isinstance(func, ast.Attribute) and ast.unparse(func.value).isupper():
                changed.append(ast.unparse(node.value))
        if isinstance(node, ast.For):
            changed.append(ast.unparse(node.iter))
    assert changed == []
