"""The allocator is pure: importing it loads no Django, DRF, Celery or Channels.

Its sources import the stdlib, themselves and the HAMi format package
(``apps.inventory.hami``: the template rule lives there, with the format it is a
rule of), which is pure Python too (``tests/inventory/hami/test_purity.py``).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[3]
CHECK = (
    "import apps.scheduling.allocator, sys; "
    "assert not [m for m in sys.modules "
    "if m.split('.')[0] in {'django','rest_framework','celery','channels'}]"
)


def test_importing_the_allocator_loads_no_framework() -> None:
    done = subprocess.run(
        [sys.executable, "-c", CHECK],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=False,
    )

    assert done.returncode == 0, done.stderr


def test_allocator_sources_import_only_the_stdlib_themselves_and_the_format() -> None:
    package = REPO_ROOT / "apps" / "scheduling" / "allocator"
    allowed = set(sys.stdlib_module_names) | {"__future__"}

    for path in sorted(package.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                assert name.split(".")[0] in allowed or name.startswith(
                    "apps.inventory.hami."
                ), f"{path.name} imports {name}"
