"""Every full text of a cluster's device config and node config, and the writes in flight."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from apps.inventory.choices import DeviceConfigShape, DeviceConfigSource
from apps.inventory.models.clusters import Cluster


class ConfigVersionBase(models.Model):
    """One full text of a ConfigMap key the portal keeps a history of (the
    device config's, the node config's): imported, published, observed or
    adopted, numbered per cluster."""

    number = models.PositiveIntegerField()
    text = models.TextField()
    source = models.CharField(max_length=16, choices=DeviceConfigSource.choices)
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    reason = models.TextField(blank=True)
    sha256 = models.CharField(max_length=64)
    resource_version = models.CharField(
        max_length=32, blank=True, help_text="of the ConfigMap, when known"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    cluster: models.ForeignKey[Cluster, Cluster]  # each model's own related name

    class Meta:
        abstract = True

    def __str__(self) -> str:
        return f"{self.cluster.name} v{self.number} ({self.source})"


class DeviceConfigVersion(ConfigVersionBase):
    """One full text of device-config.yaml: imported, published, observed or adopted."""

    cluster = models.ForeignKey(
        Cluster, on_delete=models.CASCADE, related_name="device_config_versions"
    )
    shape = models.CharField(max_length=16, choices=DeviceConfigShape.choices)

    class Meta:
        ordering = ["cluster", "-number"]
        constraints = [
            models.UniqueConstraint(
                fields=["cluster", "number"], name="deviceconfig_unique_number"
            ),
        ]


class NodeConfigVersion(ConfigVersionBase):
    """One full text of the device plugin's node-config.yaml (``hami-device-node-config``)."""

    cluster = models.ForeignKey(
        Cluster, on_delete=models.CASCADE, related_name="node_config_versions"
    )

    class Meta:
        ordering = ["cluster", "-number"]
        constraints = [
            models.UniqueConstraint(
                fields=["cluster", "number"], name="nodeconfig_unique_number"
            ),
        ]


class PendingWriteBase(models.Model):
    """A ConfigMap write about to be made, recorded before the PUT: when a
    publish killed after its PUT left its text live, the next publish (or
    sync) records it as the ``published`` version it was meant to be, not
    drift. Rows go once the write is recorded or refused."""

    text = models.TextField()
    sha256 = models.CharField(max_length=64)
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    actor_name = models.CharField(max_length=150, blank=True)
    reason = models.TextField()
    forced = models.BooleanField(default=False)
    rollback_of = models.PositiveIntegerField(null=True, blank=True)
    baseline_number = models.PositiveIntegerField(
        help_text="the version the write replaced"
    )
    previous_resource_version = models.CharField(max_length=32, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    cluster: models.ForeignKey[Cluster, Cluster]  # each model's own related name

    class Meta:
        abstract = True

    def __str__(self) -> str:
        return f"{self.cluster.name} pending write {self.sha256[:12]}"


class DeviceConfigPendingWrite(PendingWriteBase):
    """A device-config write about to be made (see the base)."""

    cluster = models.ForeignKey(
        Cluster, on_delete=models.CASCADE, related_name="pending_config_writes"
    )

    class Meta:
        ordering = ["cluster", "-created_at"]
        indexes = [models.Index(fields=["cluster", "sha256"])]


class NodeConfigPendingWrite(PendingWriteBase):
    """A node-config write about to be made (see the base)."""

    cluster = models.ForeignKey(
        Cluster, on_delete=models.CASCADE, related_name="pending_node_config_writes"
    )

    class Meta:
        ordering = ["cluster", "-created_at"]
        indexes = [models.Index(fields=["cluster", "sha256"])]
