"""``manage.py live_contract``: the live contract as TypeScript for the frontend.

``--write`` updates ``frontend/src/live/contract.ts``; ``--check`` fails (exit
1) when that file is stale. The contract is ``apps.live.events`` (event names,
payload types, chip columns), rendered by ``apps.live.contract``.
"""

from __future__ import annotations

from pathlib import Path

from django.conf import settings

from apps.common.generated import GeneratedFileCommand
from apps.live.contract import typescript

TARGET = Path(settings.BASE_DIR) / "frontend" / "src" / "live" / "contract.ts"


class Command(GeneratedFileCommand):
    help = "Print (or --write, or --check) frontend/src/live/contract.ts."
    command_name = "live_contract"

    def target(self) -> Path:
        return TARGET

    def generate(self) -> str:
        return typescript()
