"""The HAMi format package stays free of Django (simcluster and tools share it)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
FRAMEWORKS = "{'django', 'rest_framework', 'celery', 'channels'}"


def test_importing_the_package_loads_no_framework():
    code = (
        "import sys\n"
        "import apps.inventory.hami, apps.inventory.hami.deviceconfig, "
        "apps.inventory.hami.validation, apps.inventory.hami.template_rule, "
        "apps.inventory.hami.annotations, apps.inventory.hami.catalog, "
        "apps.inventory.hami.nodeconfig\n"
        f"loaded = sorted(m for m in sys.modules if m.split('.')[0] in {FRAMEWORKS})\n"
        "assert not loaded, loaded\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
