"""Writes of the inventory, one module per topic:

- ``clusters``: registering, changing and removing clusters;
- ``templates``: chip types and templates, each change validated as a whole
  device config (the rules of ``apps.inventory.hami.validation``) first, so the
  portal's copy is always a config HAMi, the device plugin and Volcano accept;
- ``usage``: the usage samples behind the charts.

Each write records an AuditEvent with before and after. Callers use
``services.<name>`` from here. The device config's own writes (its versions
and pending writes) are in ``apps.inventory.deviceconfig.services``.
"""

from __future__ import annotations

from apps.inventory.services.clusters import (
    CLUSTER_FIELDS,
    cluster_create,
    cluster_delete,
    cluster_snapshot,
    cluster_update,
)
from apps.inventory.services.templates import (
    chip_type_create,
    chip_type_delete,
    chip_type_update,
    chip_types_replace,
    template_create,
    template_delete,
    template_update,
)
from apps.inventory.services.usage import (
    usage_samples_record,
)

__all__ = [
    "CLUSTER_FIELDS",
    "chip_type_create",
    "chip_type_delete",
    "chip_type_update",
    "chip_types_replace",
    "cluster_create",
    "cluster_delete",
    "cluster_snapshot",
    "cluster_update",
    "template_create",
    "template_delete",
    "template_update",
    "usage_samples_record",
]
