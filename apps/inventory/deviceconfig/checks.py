"""What a configuration check answers, and the mirrored objects checks read.

Every check of ``apps.inventory.deviceconfig.health`` (and of
``volcano_health``, the Volcano scheduler's own) is a dict with ``id``,
``check_status`` ("ok", "warn" or "fail"), ``message`` and ``fix``.
"""

from __future__ import annotations

from typing import Any, Literal

from apps.inventory.models import Cluster, ClusterObject

CheckStatus = Literal["ok", "warn", "fail"]
RANK = {"ok": 0, "warn": 1, "fail": 2}


def check(id_: str, status: CheckStatus, message: str, fix: str = "") -> dict[str, Any]:
    """One check's answer."""
    return {"id": id_, "check_status": status, "message": message, "fix": fix}


def mirrored_object(cluster: Cluster, kind: str, ref: str) -> ClusterObject | None:
    """The object ``namespace/name`` of ``kind`` as sync mirrored it, if it did."""
    namespace, name = ref.split("/", 1)
    return ClusterObject.objects.filter(
        cluster=cluster, kind=kind, namespace=namespace, name=name
    ).first()
