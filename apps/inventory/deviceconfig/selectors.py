"""The device-config state of a cluster, in one read."""

from __future__ import annotations

import dataclasses
from typing import Any

from apps.inventory import selectors
from apps.inventory.deviceconfig.in_effect import config_in_effect
from apps.inventory.hami.deviceconfig import config_to_raw
from apps.inventory.hami.validation import validate_configs
from apps.inventory.models import Cluster


def deviceconfig_state(cluster: Cluster) -> dict[str, Any]:
    """What ``GET /api/clusters/<id>/device-config/`` shows.

    The text the portal would publish (rendered from its chip types and
    templates), its validation as a whole config, its diff from the last stored
    version, the warnings of the components that would read its shape, and the
    config in effect (the version the running scheduler loaded).
    """
    rendered = selectors.deviceconfig_render(cluster)
    base = selectors.deviceconfig_latest(cluster)
    report = validate_configs(config_to_raw(selectors.chip_type_specs(cluster)))
    return {
        "yaml": rendered,
        "base_version": base.number if base else None,
        "diff_from_base": selectors.text_diff(
            base.text if base else "",
            rendered,
            before_label=f"v{base.number if base else 0}",
            after_label="portal",
        ),
        "errors": [dataclasses.asdict(i) for i in report.errors],
        "warnings": [dataclasses.asdict(i) for i in report.warnings],
        "shape_warnings": selectors.deviceconfig_shape_warnings(cluster, rendered),
        "in_effect": config_in_effect(cluster),
    }
