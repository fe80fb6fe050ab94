"""The device config's metric families (registered in ``InventoryConfig.ready``):
drift, the version published and the one in effect, and how long a restart
has been pending, per cluster.

All from what sync and the config-loaded refresh stored (the same selectors
the Templates and Health pages read), never from the cluster: a scrape must not
wait for an API server. Which version the scheduler loaded is known only once
``config_loaded_refresh`` has read its pods' start; until then the published
version is taken as loaded, and no restart is reported pending.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from datetime import datetime

from django.db import DatabaseError
from prometheus_client.core import GaugeMetricFamily, Metric

from apps.common.metrics_sources import ClusterNames
from apps.common.metrics_sources import age_seconds as _age
from apps.inventory.deviceconfig.in_effect import config_in_effect
from apps.inventory.deviceconfig.selectors import (
    deviceconfig_drift_recorded,
    deviceconfig_unloaded_since,
)
from apps.inventory.models import Cluster

log = logging.getLogger(__name__)


def deviceconfig_families(now: datetime, names: ClusterNames) -> Iterator[Metric]:
    """Per cluster: drift, published and in-effect versions, restart pending."""
    drift = GaugeMetricFamily(
        "vnpu_deviceconfig_drift",
        "1 while the ConfigMap holds a text edited outside the portal (not "
        "adopted or published over yet).",
        labels=["cluster"],
    )
    published = GaugeMetricFamily(
        "vnpu_deviceconfig_published_version",
        "Number of the newest device-config version that reached the ConfigMap.",
        labels=["cluster"],
    )
    in_effect = GaugeMetricFamily(
        "vnpu_deviceconfig_in_effect_version",
        "Number of the version the running scheduler loaded (places requests by).",
        labels=["cluster"],
    )
    pending = GaugeMetricFamily(
        "vnpu_deviceconfig_restart_pending_seconds",
        "Seconds since the oldest version the scheduler has not loaded yet was "
        "published (0: nothing waits for a restart).",
        labels=["cluster"],
    )
    for cluster in Cluster.objects.order_by("name"):
        label = [names.get(cluster.pk, cluster.name)]
        try:
            drifted = not deviceconfig_drift_recorded(cluster)["in_sync"]
            effect = config_in_effect(cluster)
            changed = (
                deviceconfig_unloaded_since(cluster, effect.version)
                if effect.pending_restart
                else None
            )
        except DatabaseError:
            raise  # the source's own handling (apps.common.metrics)
        except Exception as exc:  # a text no release foresaw: the others still count
            log.warning("metrics: no device-config figures for %s: %r", cluster, exc)
            continue
        drift.add_metric(label, int(drifted))
        if effect.published is not None:
            published.add_metric(label, effect.published)
        if effect.version is not None:
            in_effect.add_metric(label, effect.version)
        waited = _age(now, changed.created_at) if changed is not None else None
        pending.add_metric(label, waited or 0.0)
    yield from (drift, published, in_effect, pending)
