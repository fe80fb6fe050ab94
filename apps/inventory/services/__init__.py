"""Writes of the inventory, one module per topic:

- ``clusters``: registering, changing and removing clusters;
- ``versions``: device-config versions (parse, store, import, observe) and the
  pending writes recorded before each PUT;
- ``templates``: chip types and templates, each change validated as a whole
  device config (the rules of ``apps.inventory.hami.validation``) first, so the
  portal's copy is always a config HAMi, the device plugin and Volcano accept;
- ``usage``: the usage samples behind the charts.

Each write records an AuditEvent with before and after. Callers use
``services.<name>`` from here.
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
from apps.inventory.services.versions import (
    deviceconfig_import,
    deviceconfig_observe,
    deviceconfig_parse,
    deviceconfig_pending_settle,
    deviceconfig_pending_write_claim,
    deviceconfig_pending_write_record,
    deviceconfig_version_store,
    issues_by_field,
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
    "deviceconfig_import",
    "deviceconfig_observe",
    "deviceconfig_parse",
    "deviceconfig_pending_settle",
    "deviceconfig_pending_write_claim",
    "deviceconfig_pending_write_record",
    "deviceconfig_version_store",
    "issues_by_field",
    "template_create",
    "template_delete",
    "template_update",
    "usage_samples_record",
]
