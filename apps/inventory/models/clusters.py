"""Clusters and what they hold: nodes, chips, slices, chip types and templates."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.core.validators import MinValueValidator, RegexValidator
from django.db import models

from apps.common.ids import is_ascii_digits
from apps.inventory.choices import (
    ChipIsolation,
    ConnectionKind,
    SchedulerSetting,
    SyncState,
)

name_validator = RegexValidator(
    r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$",
    "lowercase letters, digits and '-', starting and ending with a letter or digit",
)


def cluster_name_not_numeric(value: str) -> None:
    """Refuse an all-digit cluster name: ``cluster`` takes an id or a name, and
    digits are read as the id (a cluster named "2" would hide behind cluster 2)."""
    if is_ascii_digits(value):
        raise ValidationError(
            "must not be all digits (a number is read as a cluster id)",
            code="numeric",
        )


class Cluster(models.Model):
    """A Kubernetes cluster the portal manages, and how to reach it."""

    name = models.CharField(
        max_length=63,
        unique=True,
        validators=[name_validator, cluster_name_not_numeric],
    )
    description = models.CharField(max_length=200, blank=True)
    connection = models.CharField(
        max_length=16, choices=ConnectionKind.choices, default=ConnectionKind.NONE
    )
    # A file inside settings.KUBECONFIG_DIR only (apps.inventory.kubeconfig).
    kubeconfig_path = models.CharField(max_length=500, blank=True)
    # Fernet-encrypted kubeconfig content; wins over the path; never serialised.
    kubeconfig_encrypted = models.TextField(blank=True)
    kubeconfig_context = models.CharField(max_length=200, blank=True)
    api_url = models.URLField(max_length=500, blank=True)
    # Fernet-encrypted bearer token (apps.common.crypto); never serialised.
    token_encrypted = models.TextField(blank=True)
    ca_cert = models.TextField(
        blank=True,
        help_text="PEM bundle for the API server; empty uses the system store",
    )
    verify_tls = models.BooleanField(default=True)
    device_config_namespace = models.CharField(max_length=63, default="kube-system")
    device_config_name = models.CharField(
        max_length=253, default="hami-scheduler-device"
    )
    # Sync state, written by the sync workers.
    # Which scheduler gets the portal's pods; "auto" follows what sync sees
    # (apps.inventory.scheduler).
    scheduler = models.CharField(
        max_length=16, choices=SchedulerSetting.choices, default=SchedulerSetting.AUTO
    )
    # When the scheduler's oldest pod started, i.e. which device-config
    # version it loaded (apps.inventory.deviceconfig.in_effect); null: not read yet.
    config_loaded_at = models.DateTimeField(null=True, blank=True)
    config_loaded_by = models.CharField(max_length=253, blank=True)
    config_loaded_checked_at = models.DateTimeField(null=True, blank=True)
    sync_state = models.CharField(
        max_length=16, choices=SyncState.choices, default=SyncState.NEVER
    )
    last_sync_at = models.DateTimeField(null=True, blank=True)
    last_sync_error = models.TextField(blank=True)
    sync_lag_seconds = models.FloatField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    @property
    def has_token(self) -> bool:
        return bool(self.token_encrypted)

    @property
    def has_kubeconfig(self) -> bool:
        return bool(self.kubeconfig_encrypted)


class ChipType(models.Model):
    """One entry of ``vnpus`` in device-config.yaml (a chip family's slicing rules)."""

    cluster = models.ForeignKey(
        Cluster, on_delete=models.CASCADE, related_name="chip_types"
    )
    common_word = models.CharField(max_length=63)
    chip_name = models.CharField(max_length=63)
    resource_name = models.CharField(max_length=253)
    resource_memory_name = models.CharField(max_length=253)
    resource_core_name = models.CharField(max_length=253, blank=True)
    memory_allocatable = models.PositiveIntegerField(help_text="MB")
    memory_capacity = models.PositiveIntegerField(help_text="MB")
    ai_core = models.PositiveIntegerField(null=True, blank=True)
    ai_cpu = models.PositiveIntegerField(null=True, blank=True)
    # Keys of the YAML entry the portal does not manage (memoryFactor, superPod...).
    extra = models.JSONField(default=dict, blank=True)
    position = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["cluster", "position", "common_word"]
        constraints = [
            models.UniqueConstraint(
                fields=["cluster", "common_word"], name="chiptype_unique_common_word"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.cluster.name}/{self.common_word}"


class Template(models.Model):
    """A named slice shape of a chip type (``vir01``: 3072 MB, 1 AICore, 1 AICPU)."""

    chip_type = models.ForeignKey(
        ChipType, on_delete=models.CASCADE, related_name="templates"
    )
    name = models.CharField(max_length=63)
    memory = models.PositiveIntegerField(
        validators=[MinValueValidator(1)], help_text="MB"
    )
    ai_core = models.PositiveIntegerField(null=True, blank=True)
    ai_cpu = models.PositiveIntegerField(null=True, blank=True)
    extra = models.JSONField(default=dict, blank=True)
    position = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["chip_type", "memory", "position"]
        constraints = [
            models.UniqueConstraint(
                fields=["chip_type", "name"], name="template_unique_name"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.chip_type.common_word}/{self.name}"

    @property
    def cluster(self) -> Cluster:
        return self.chip_type.cluster


class Node(models.Model):
    """A Kubernetes node, as last seen by sync."""

    # No index of its own: the constraint below starts with the cluster and
    # serves every lookup by it; one more index was one more write per row.
    cluster = models.ForeignKey(
        Cluster, on_delete=models.CASCADE, related_name="nodes", db_index=False
    )
    name = models.CharField(max_length=253)
    uid = models.CharField(max_length=64, blank=True)
    labels = models.JSONField(default=dict, blank=True)
    ready = models.BooleanField(default=False)
    ascend_enabled = models.BooleanField(default=False, help_text="labelled ascend=on")
    hami_vnpu_core = models.BooleanField(default=False)
    unschedulable = models.BooleanField(default=False)
    vnpu_allocatable = models.JSONField(
        default=dict, blank=True, help_text="allocatable huawei.com/<commonWord> counts"
    )
    resource_version = models.CharField(max_length=32, blank=True)
    synced_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["cluster", "name"]
        constraints = [
            models.UniqueConstraint(fields=["cluster", "name"], name="node_unique_name")
        ]

    def __str__(self) -> str:
        return self.name


class Chip(models.Model):
    """A physical NPU as registered in ``hami.io/node-register-<commonWord>``.

    The ``*_used`` columns are usage exactly as HAMi and Volcano count it (sum of
    ``-devices-allocated`` over non-terminal pods), kept up to date by sync; AICore
    and AICPU use come from the templates of the slices (HAMi does not count them).
    """

    # Neither the cluster nor the commonWord has an index of its own: the
    # constraint and the index below start with them and serve every lookup.
    # Sync rewrites chips' usage after every batch, and each extra index
    # was one more write per chip (a usage recount of 8,000 chips: 25% slower).
    cluster = models.ForeignKey(
        Cluster, on_delete=models.CASCADE, related_name="chips", db_index=False
    )
    node = models.ForeignKey(Node, on_delete=models.CASCADE, related_name="chips")
    common_word = models.CharField(max_length=63)
    uuid = models.CharField(max_length=64)
    index = models.PositiveIntegerField(default=0)
    slots = models.PositiveIntegerField(default=0, help_text="count: concurrent vNPUs")
    memory = models.PositiveIntegerField(default=0, help_text="devmem, MB")
    aicore = models.PositiveIntegerField(default=0, help_text="devcore")
    aicpu = models.PositiveIntegerField(
        default=0, help_text="from the chip type's aiCPU"
    )
    healthy = models.BooleanField(default=False)
    health_since = models.DateTimeField(
        null=True,
        blank=True,
        help_text="when sync saw the health flag change (or the chip appear)",
    )
    network_id = models.IntegerField(null=True, blank=True)
    handshake = models.CharField(max_length=64, blank=True)
    handshake_at = models.DateTimeField(null=True, blank=True)
    # The allocator places nothing here while it is set. A drain sets it
    # (apps.scheduling.drain) and only an uncordon clears it.
    cordoned = models.BooleanField(default=False)
    # The drain (apps.scheduling.models.Drain) that holds the chip while it is
    # open: an id, not a key, because inventory depends on no other app.
    active_drain = models.PositiveIntegerField(null=True, blank=True)
    # Isolation through the device plugin's node config (filterDevices): see
    # apps/inventory/nodeconfig/isolation.py. A chip being or staying isolated
    # keeps its row when the plugin stops registering it (registered=False),
    # so it keeps its identity (the UUID; the registered index shifts).
    registered = models.BooleanField(
        default=True, help_text="listed in the node's registration annotation"
    )
    isolation = models.CharField(
        max_length=16, choices=ChipIsolation.choices, blank=True, default=""
    )
    isolation_reason = models.TextField(blank=True)
    isolation_by = models.CharField(max_length=150, blank=True)
    isolation_since = models.DateTimeField(null=True, blank=True)
    isolation_seen = models.TextField(
        blank=True, help_text="what the portal last saw while waiting for the proof"
    )
    slots_used = models.PositiveIntegerField(default=0)
    memory_used = models.PositiveIntegerField(default=0)
    aicore_used = models.PositiveIntegerField(default=0)
    aicpu_used = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["cluster", "node__name", "common_word", "index"]
        constraints = [
            models.UniqueConstraint(fields=["cluster", "uuid"], name="chip_unique_uuid")
        ]
        indexes = [models.Index(fields=["cluster", "common_word"])]

    def __str__(self) -> str:
        return f"{self.node.name}/{self.common_word}#{self.index}"

    @property
    def in_service(self) -> bool:
        """Registered and not being isolated: a chip the portal may place on."""
        return self.registered and not self.isolation


class Slice(models.Model):
    """A vNPU held by a pod on a chip (from the pod's HAMi annotations)."""

    # No index of its own: the constraint and the index below start with the cluster and
    # serve every lookup by it; one more index was one more write per row.
    cluster = models.ForeignKey(
        Cluster, on_delete=models.CASCADE, related_name="slices", db_index=False
    )
    chip = models.ForeignKey(
        Chip, null=True, blank=True, on_delete=models.SET_NULL, related_name="slices"
    )
    chip_uuid = models.CharField(max_length=64)
    common_word = models.CharField(max_length=63)
    namespace = models.CharField(max_length=63)
    pod_name = models.CharField(max_length=253)
    pod_uid = models.CharField(max_length=64, blank=True)
    container_index = models.PositiveIntegerField(default=0)
    node_name = models.CharField(max_length=253, blank=True)
    template = models.CharField(
        max_length=63, blank=True, help_text="empty for a whole card"
    )
    memory = models.PositiveIntegerField(default=0, help_text="MB, as booked")
    aicore = models.PositiveIntegerField(default=0)
    aicpu = models.PositiveIntegerField(default=0)
    priority = models.IntegerField(default=0)
    priority_class = models.CharField(max_length=253, blank=True)
    # False when the pod (label or annotation) says ``volcano.sh/preemptable:
    # "false"``: Volcano never evicts it, and neither does the portal.
    preemptable = models.BooleanField(default=True)
    # The pod's Volcano queue (``scheduling.volcano.sh/queue-name``; Volcano's
    # ``default`` when unset), so a proposal can say it crosses queues.
    volcano_queue = models.CharField(max_length=253, default="default")
    phase = models.CharField(max_length=32, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["cluster", "namespace", "pod_name", "container_index"]
        constraints = [
            models.UniqueConstraint(
                fields=[
                    "cluster",
                    "namespace",
                    "pod_name",
                    "chip_uuid",
                    "container_index",
                ],
                name="slice_unique_pod_chip",
            ),
        ]
        # Usage is recounted per chip from its slices (sync, after every batch).
        indexes = [models.Index(fields=["cluster", "chip_uuid"])]

    def __str__(self) -> str:
        return f"{self.namespace}/{self.pod_name}@{self.chip_uuid[:8]}"
