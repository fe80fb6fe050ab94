"""Queues and quotas, requests for vNPUs, reservations and preemption proposals.

Everything belongs to a cluster. The flow of one request:

    Pending --(allocation pass)--> Reserved --(pod created)--> Admitted
            --(sync sees the Slice of its pod)--> Running --> Succeeded/Failed/...

A Reservation is capacity booked on a chip that sync cannot see yet (no Slice
for the pod); allocation passes count it as used, so two passes never book the
same capacity. It is deleted when the Slice appears or the request ends.
"""

from __future__ import annotations

from django.conf import settings
from django.core.validators import MinValueValidator, RegexValidator
from django.db import models

from apps.inventory.models import Chip, Cluster
from apps.scheduling.choices import (
    DrainScope,
    DrainState,
    PodSecurityLevel,
    ProposalState,
    RequestState,
    WaitClass,
)

# Queue names become label values and Volcano queue names: a DNS-1123 label.
queue_name_validator = RegexValidator(
    r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$",
    "lowercase letters, digits and '-', starting and ending with a letter or digit",
)


class Queue(models.Model):
    """A queue of requests (and of their pods in Volcano), with quotas per chip type.

    Its pod policy (``allowed_namespaces``, ``pod_security``,
    ``allowed_service_accounts``) bounds what its requests' pods may carry;
    ``apps/scheduling/podsecurity.py`` checks it.
    """

    cluster = models.ForeignKey(
        Cluster, on_delete=models.CASCADE, related_name="queues"
    )
    name = models.CharField(max_length=63, validators=[queue_name_validator])
    description = models.CharField(max_length=200, blank=True)
    allowed_namespaces = models.JSONField(
        default=list,
        blank=True,
        help_text="namespaces its pods may use; empty: default",
    )
    pod_security = models.CharField(
        max_length=16,
        choices=PodSecurityLevel.choices,
        default=PodSecurityLevel.RESTRICTED,
        help_text="the Pod Security Standards level its pods must meet",
    )
    allowed_service_accounts = models.JSONField(
        default=list,
        blank=True,
        help_text="ServiceAccounts its pods may use; empty: default",
    )
    allowed_secrets = models.JSONField(
        default=list,
        blank=True,
        help_text="Secrets its pods may reference (env, envFrom, volumes); empty: none",
    )
    allowed_config_maps = models.JSONField(
        default=list,
        blank=True,
        help_text="ConfigMaps its pods may reference (env, envFrom, volumes); empty: none",
    )
    # Who may take which PriorityClass: the cluster's classes are the cluster
    # admin's, and a high one wins preemptions over every other team.
    max_priority = models.IntegerField(
        null=True,
        blank=True,
        help_text=(
            "the highest PriorityClass value its requests may take; empty: "
            "1000000000, the highest a user-defined class may have"
        ),
    )
    system_priority_classes = models.JSONField(
        default=list,
        blank=True,
        help_text="system-* PriorityClasses its requests may take; empty: none",
    )
    # Who may submit to it: admins always; others when it is open to all or
    # they are members (by user or by group).
    open_to_all = models.BooleanField(
        default=False,
        help_text="every operator and CI account may submit to it, not only members",
    )
    members = models.ManyToManyField(
        settings.AUTH_USER_MODEL, blank=True, related_name="member_queues"
    )
    member_groups = models.ManyToManyField(
        "auth.Group", blank=True, related_name="member_queues"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["cluster", "name"]
        constraints = [
            models.UniqueConstraint(
                fields=["cluster", "name"], name="queue_unique_name"
            )
        ]

    def __str__(self) -> str:
        return self.name


class QueueQuota(models.Model):
    """What one queue may hold of one chip type at once. An empty limit is unlimited."""

    queue = models.ForeignKey(Queue, on_delete=models.CASCADE, related_name="quotas")
    common_word = models.CharField(max_length=63)
    memory_limit = models.PositiveIntegerField(null=True, blank=True, help_text="MB")
    slots_limit = models.PositiveIntegerField(
        null=True, blank=True, help_text="number of vNPUs"
    )

    class Meta:
        ordering = ["queue", "common_word"]
        constraints = [
            models.UniqueConstraint(
                fields=["queue", "common_word"], name="queuequota_unique_chip_type"
            )
        ]

    def __str__(self) -> str:
        return f"{self.queue.name}/{self.common_word}"


class Request(models.Model):
    """A submission asking for one vNPU (or a whole card), with a priority and a workload.

    ``memory`` and ``template`` are what was asked (a template name wins; neither
    is a whole card); ``template_booked`` and ``memory_booked`` what it got.
    """

    cluster = models.ForeignKey(
        Cluster, on_delete=models.CASCADE, related_name="scheduling_requests"
    )
    namespace = models.CharField(max_length=63)
    common_word = models.CharField(max_length=63)
    memory = models.PositiveIntegerField(null=True, blank=True, help_text="MB asked")
    template = models.CharField(max_length=63, blank=True)
    priority_class = models.CharField(max_length=253)
    # Resolved from the PriorityClass at submission: later edits of the class do
    # not reorder requests already queued (the pod gets the class by name).
    priority = models.IntegerField()
    # RESTRICT: a queue with requests cannot be deleted, but its cluster can (both go).
    queue = models.ForeignKey(Queue, on_delete=models.RESTRICT, related_name="requests")
    workload = models.JSONField(default=dict, blank=True)
    pod_template = models.JSONField(null=True, blank=True)
    time_limit_seconds = models.PositiveIntegerField(
        null=True, blank=True, validators=[MinValueValidator(1)]
    )
    idempotency_key = models.CharField(max_length=128)
    # SHA-256 of the normalised submission: a repeated key with another body is a 409.
    fingerprint = models.CharField(max_length=64)
    submitted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        on_delete=models.SET_NULL,
        related_name="vnpu_requests",
    )
    state = models.CharField(
        max_length=16, choices=RequestState.choices, default=RequestState.PENDING
    )
    reason = models.TextField(blank=True)
    # The same as an English template and its values, to show it in the
    # reader's language (apps.scheduling.texts); empty on older rows and for
    # a reason that is a value (an Event's message, the pod's condition).
    reason_message = models.JSONField(default=dict, blank=True)
    # The class of ``reason`` while pending (WaitClass), set by the passes.
    wait_class = models.CharField(max_length=24, choices=WaitClass.choices, blank=True)
    # Cleared when an admin rejects a preemption for it: it then waits for room.
    allow_preemption = models.BooleanField(default=True)
    # Admissions tried so far (a pod not bound in time is deleted and tried again).
    attempts = models.PositiveIntegerField(default=0)
    # Each pod that failed before it ran ({pod, chip_uuid, chip_id, node, reason,
    # at}; apps.scheduling.retries): counted against REQUEST_MAX_POD_FAILURES.
    pod_failures = models.JSONField(default=list, blank=True)
    chip = models.ForeignKey(
        Chip, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    chip_uuid = models.CharField(max_length=64, blank=True)
    node = models.CharField(max_length=253, blank=True)
    template_booked = models.CharField(max_length=63, blank=True)
    memory_booked = models.PositiveIntegerField(null=True, blank=True)
    pod_name = models.CharField(max_length=253, blank=True)
    # The request ended with a pod that must still be deleted (retried until done).
    pod_cleanup = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    reserved_at = models.DateTimeField(null=True, blank=True)
    admitted_at = models.DateTimeField(null=True, blank=True)
    running_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    # How its job ended (apps.scheduling.results): the first container's exit
    # code, and the result of every container; null until it ended.
    exit_code = models.IntegerField(null=True, blank=True)
    result = models.JSONField(null=True, blank=True)
    # When the tail of its pod's log was kept (RequestLog), or found not to
    # be there; its pod is deleted only after (apps.scheduling.logs).
    log_kept_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["submitted_by", "idempotency_key"],
                name="request_unique_idempotency_key",
            )
        ]
        indexes = [
            models.Index(fields=["cluster", "state"]),
            # A queue's pending requests in the allocator's order: a position
            # is a count of the index entries ahead (selectors.queue_positions).
            models.Index(
                fields=["queue", "state", "-priority", "created_at", "id"],
                name="request_queue_rank",
            ),
            models.Index(fields=["cluster", "namespace", "pod_name"]),
        ]

    def __str__(self) -> str:
        return f"request {self.pk} ({self.common_word}, {self.state})"

    @property
    def whole_card(self) -> bool:
        """True when the request asks for a whole card (no memory, no template)."""
        return self.memory is None and not self.template


class RequestLog(models.Model):
    """The tail of one container's log, kept when its request ended.

    ``text`` is the log as the API server gives it with timestamps (one
    RFC 3339 stamp and a space before each line), so that ``since_*`` and
    ``timestamps`` apply to it as to a live log. ``truncated`` says that only
    its tail was kept (``REQUEST_LOG_KEEP_BYTES``); ``error`` why nothing
    could be kept (the pod was gone first).
    """

    request = models.ForeignKey(Request, on_delete=models.CASCADE, related_name="logs")
    container = models.CharField(max_length=253)
    text = models.TextField(blank=True)
    truncated = models.BooleanField(default=False)
    error = models.TextField(blank=True)
    kept_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["request", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["request", "container"], name="request_log_unique_container"
            )
        ]

    def __str__(self) -> str:
        return f"log of request {self.request_id}, container {self.container}"


class PreemptionProposal(models.Model):
    """The allocator's plan to evict named lower-priority pods so that a request fits.

    ``victims`` is a list of dicts (namespace, pod, slice_id, priority,
    priority_class, started_at, lost_seconds, template, memory, queue, request)
    that eviction extends with its progress (annotated, event, evicted,
    blocked, last_error).
    """

    cluster = models.ForeignKey(
        Cluster, on_delete=models.CASCADE, related_name="preemption_proposals"
    )
    request = models.ForeignKey(
        Request, on_delete=models.CASCADE, related_name="proposals"
    )
    chip = models.ForeignKey(
        Chip,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="preemption_proposals",
    )
    # Kept with the proposal so that its history survives the chip's removal.
    chip_uuid = models.CharField(max_length=64)
    node = models.CharField(max_length=253)
    template = models.CharField(max_length=63, blank=True)
    memory = models.PositiveIntegerField(help_text="MB the request books")
    aicore = models.PositiveIntegerField(default=0)
    aicpu = models.PositiveIntegerField(default=0)
    victims = models.JSONField(default=list)
    max_victim_priority = models.IntegerField()
    lost_seconds = models.FloatField(default=0.0)
    state = models.CharField(
        max_length=16, choices=ProposalState.choices, default=ProposalState.PENDING
    )
    # Why it was decided (the admin's words, or the policy), or why it was superseded.
    reason = models.TextField(blank=True)
    # How carrying it out goes: evictions done, held back by a PDB, failed...
    progress = models.TextField(blank=True)
    # The same as an English template and its values, to show it in the
    # reader's language (apps.scheduling.progress); empty on older rows.
    progress_message = models.JSONField(default=dict, blank=True)
    # The node tainted for the request while its victims leave (pods.hold_taint);
    # set before the taint is written and cleared after it is removed (or kept
    # for another request held there: apps.scheduling.holds), so a
    # crash in between leaves a hold that reconciliation still releases.
    held_node = models.CharField(max_length=253, blank=True)
    # What is not guaranteed once the victims are gone (the scheduler picks the
    # node's chip itself: apps.inventory.scheduler); empty: nothing.
    caveat = models.TextField(blank=True)
    auto_approved = models.BooleanField(default=False)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    decided_at = models.DateTimeField(null=True, blank=True)
    # When evictions held back by a PodDisruptionBudget are tried again.
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["cluster", "state"]),
            models.Index(fields=["chip_uuid"]),
        ]

    def __str__(self) -> str:
        return f"proposal {self.pk} for request {self.request_id} ({self.state})"


class Drain(models.Model):
    """Emptying a chip, or every chip of a node, of its slices (apps.scheduling.drain).

    Its chips are cordoned from the start. ``victims`` lists the pods that
    held slices there (namespace, pod, chips, template, memory, priority,
    request and request_queue for the portal's own, foreign, pdbs), each
    extended as eviction goes (approved, annotated, event, evicted, blocked,
    last_error, requeued). The portal's own pods are evicted at once and their
    requests re-queued; foreign pods only once an admin approves, as a
    preemption's victims are.
    """

    cluster = models.ForeignKey(
        Cluster, on_delete=models.CASCADE, related_name="drains"
    )
    scope = models.CharField(max_length=8, choices=DrainScope.choices)
    node = models.CharField(max_length=253)
    # The chip of a chip drain (null for a node's, or once the chip is gone).
    chip = models.ForeignKey(
        Chip, null=True, blank=True, on_delete=models.SET_NULL, related_name="drains"
    )
    # Every chip it covers, kept so that its history survives the chips.
    chip_uuids = models.JSONField(default=list)
    victims = models.JSONField(default=list)
    state = models.CharField(
        max_length=16, choices=DrainState.choices, default=DrainState.PENDING
    )
    reason = models.TextField(help_text="why it was drained, as its requester said")
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    decided_at = models.DateTimeField(null=True, blank=True)
    decision_reason = models.TextField(blank=True)
    # How carrying it out goes: evictions done, held back by a PDB, failed...
    progress = models.TextField(blank=True)
    # The same as an English template and its values, to show it in the
    # reader's language (apps.scheduling.progress); empty on older rows.
    progress_message = models.JSONField(default=dict, blank=True)
    # When evictions held back by a PodDisruptionBudget are tried again.
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    ended_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["cluster", "state"])]

    def __str__(self) -> str:
        return f"drain {self.pk} of {self.scope} {self.node} ({self.state})"


class Reservation(models.Model):
    """Capacity booked on a chip for a request whose pod sync cannot see bound yet."""

    request = models.OneToOneField(
        Request, on_delete=models.CASCADE, related_name="reservation"
    )
    cluster = models.ForeignKey(
        Cluster, on_delete=models.CASCADE, related_name="reservations"
    )
    chip = models.ForeignKey(Chip, on_delete=models.CASCADE, related_name="+")
    template = models.CharField(max_length=63, blank=True)
    memory = models.PositiveIntegerField(help_text="MB")
    aicore = models.PositiveIntegerField(default=0)
    aicpu = models.PositiveIntegerField(default=0)
    # Set when the room comes from a preemption: the pod is created once every
    # victim is evicted, and waits (pinned) while they terminate.
    proposal = models.ForeignKey(
        PreemptionProposal,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    # What is not guaranteed where the scheduler picks the chip (Volcano); the
    # request's reason keeps saying it until the pod is bound.
    caveat = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["cluster", "chip", "id"]

    def __str__(self) -> str:
        return f"reservation of request {self.request_id} on chip {self.chip_id}"


class PassWanted(models.Model):
    """A scheduling pass of the cluster is due and has not started yet.

    Written by whoever asks for a pass before it tries the cluster's pass
    lock; cleared by a pass as it starts. A pass that ends finds it again when
    someone asked while it ran (a sync batch showed a pod bound, a request
    came in) and runs once more, so that no request waits for the next beat
    (or for ever where nothing beats).
    """

    cluster = models.OneToOneField(
        Cluster, on_delete=models.CASCADE, primary_key=True, related_name="+"
    )
    wanted_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"pass wanted for cluster {self.cluster_id}"
