"""What sync keeps of a cluster beyond its chips: objects, pending pods, its
cursors, and the usage history and chip events of the charts."""

from __future__ import annotations

from django.db import models

from apps.inventory.models.clusters import Cluster


class PriorityClass(models.Model):
    """A PriorityClass mirrored from the cluster (priorities of slices and requests)."""

    cluster = models.ForeignKey(
        Cluster, on_delete=models.CASCADE, related_name="priority_classes"
    )
    name = models.CharField(max_length=253)
    value = models.IntegerField()
    global_default = models.BooleanField(default=False)
    preemption_policy = models.CharField(max_length=64, blank=True)
    description = models.TextField(blank=True)

    class Meta:
        ordering = ["cluster", "-value", "name"]
        constraints = [
            models.UniqueConstraint(
                fields=["cluster", "name"], name="priorityclass_unique_name"
            )
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.value})"


class ClusterObject(models.Model):
    """A control-plane object the portal watches whole: the Volcano scheduler
    ConfigMap, the device-config ConfigMap, the device-plugin DaemonSet, the
    scheduler Deployments. Health checks and restart state read these."""

    cluster = models.ForeignKey(
        Cluster, on_delete=models.CASCADE, related_name="watched_objects"
    )
    kind = models.CharField(max_length=63)
    namespace = models.CharField(max_length=63, blank=True)
    name = models.CharField(max_length=253)
    resource_version = models.CharField(max_length=32, blank=True)
    data = models.JSONField(default=dict)
    synced_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["cluster", "kind", "namespace", "name"]
        constraints = [
            models.UniqueConstraint(
                fields=["cluster", "kind", "namespace", "name"],
                name="clusterobject_unique",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.namespace}/{self.name}"


class PendingPod(models.Model):
    """A pod waiting for a vNPU, with the scheduler's reason from its Events."""

    # No index of its own: the constraint below starts with the cluster and
    # serves every lookup by it; one more index was one more write per row.
    cluster = models.ForeignKey(
        Cluster, on_delete=models.CASCADE, related_name="pending_pods", db_index=False
    )
    namespace = models.CharField(max_length=63)
    name = models.CharField(max_length=253)
    uid = models.CharField(max_length=64, blank=True)
    common_word = models.CharField(max_length=63)
    memory = models.PositiveIntegerField(
        null=True, blank=True, help_text="MB requested; empty for a whole card"
    )
    priority = models.IntegerField(default=0)
    priority_class = models.CharField(max_length=253, blank=True)
    reason = models.TextField(blank=True)
    created_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["cluster", "-priority", "created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["cluster", "namespace", "name"], name="pendingpod_unique"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}"


class SyncCursor(models.Model):
    """Where the watch of one resource of one cluster stands (resume point and health)."""

    cluster = models.ForeignKey(
        Cluster, on_delete=models.CASCADE, related_name="sync_cursors"
    )
    resource = models.CharField(max_length=63)
    resource_version = models.CharField(max_length=32, blank=True)
    last_list_at = models.DateTimeField(null=True, blank=True)
    last_event_at = models.DateTimeField(null=True, blank=True)
    last_success_at = models.DateTimeField(null=True, blank=True)
    last_error = models.TextField(blank=True)
    last_error_at = models.DateTimeField(null=True, blank=True)
    relists = models.PositiveIntegerField(default=0)
    restarts = models.PositiveIntegerField(default=0)
    # Watchers of this stream that died of an unexpected error and were
    # restarted (apps.inventory.sync.watcher.run_supervised).
    crashes = models.PositiveIntegerField(default=0)
    events = models.PositiveBigIntegerField(default=0)
    # Objects this stream could not apply (a hand edit the portal refuses to
    # read), newest last: {kind, namespace, name, resource_version, reason, at}.
    # The stream goes on without them; an object leaves the list when a later
    # version of it applies or it is deleted.
    skipped_objects = models.JSONField(default=list, blank=True)
    # False when the API server answered 404 to the list of an optional
    # resource (Volcano's Queues on a cluster without Volcano's CRDs): not an
    # error and never stale; the watcher asks again now and then.
    served = models.BooleanField(default=True)

    class Meta:
        ordering = ["cluster", "resource"]
        constraints = [
            models.UniqueConstraint(
                fields=["cluster", "resource"], name="synccursor_unique"
            )
        ]

    def __str__(self) -> str:
        return f"{self.cluster_id}:{self.resource}@{self.resource_version}"


class UsageSample(models.Model):
    """Usage of one chip type in one cluster at one moment, for charts."""

    # No index of its own: the index below starts with the cluster and
    # serves every lookup by it; one more index was one more write per row.
    cluster = models.ForeignKey(
        Cluster, on_delete=models.CASCADE, related_name="usage_samples", db_index=False
    )
    common_word = models.CharField(max_length=63)
    at = models.DateTimeField(db_index=True)
    chips = models.PositiveIntegerField(default=0)
    slices = models.PositiveIntegerField(default=0)
    memory_total = models.PositiveBigIntegerField(default=0)
    memory_used = models.PositiveBigIntegerField(default=0)
    slots_total = models.PositiveIntegerField(default=0)
    slots_used = models.PositiveIntegerField(default=0)
    aicore_total = models.PositiveIntegerField(default=0)
    aicore_used = models.PositiveIntegerField(default=0)
    aicpu_total = models.PositiveIntegerField(default=0)
    aicpu_used = models.PositiveIntegerField(default=0)
    stranded_memory = models.PositiveBigIntegerField(
        default=0, help_text="free MB on chips that cannot fit the smallest template"
    )

    class Meta:
        ordering = ["cluster", "common_word", "at"]
        indexes = [models.Index(fields=["cluster", "common_word", "at"])]

    def __str__(self) -> str:
        return f"{self.cluster_id}:{self.common_word}@{self.at:%H:%M}"


class ChipEvent(models.Model):
    """A slice placed on or released from a chip: the chip's history."""

    class Kind(models.TextChoices):
        PLACED = "placed", "Placed"
        RELEASED = "released", "Released"

    # No index of its own: the index below starts with the cluster and
    # serves every lookup by it; one more index was one more write per row.
    cluster = models.ForeignKey(
        Cluster, on_delete=models.CASCADE, related_name="chip_events", db_index=False
    )
    chip_uuid = models.CharField(max_length=64)
    kind = models.CharField(max_length=16, choices=Kind.choices)
    namespace = models.CharField(max_length=63)
    pod_name = models.CharField(max_length=253)
    template = models.CharField(max_length=63, blank=True)
    memory = models.PositiveIntegerField(default=0)
    priority = models.IntegerField(default=0)
    at = models.DateTimeField()

    class Meta:
        ordering = ["-at", "-id"]
        indexes = [models.Index(fields=["cluster", "chip_uuid", "-at"])]

    def __str__(self) -> str:
        return f"{self.chip_uuid[:8]} {self.kind} {self.namespace}/{self.pod_name}"
