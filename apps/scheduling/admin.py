"""Django admin for scheduling (read-mostly: passes and the API own the state)."""

from django.contrib import admin

from apps.scheduling.models import (
    PreemptionProposal,
    Queue,
    QueueQuota,
    Request,
    Reservation,
)


class QueueQuotaInline(admin.TabularInline):
    model = QueueQuota
    extra = 0


@admin.register(Queue)
class QueueAdmin(admin.ModelAdmin):
    list_display = ("name", "cluster", "description", "pod_security")
    list_filter = ("cluster",)
    inlines = [QueueQuotaInline]


@admin.register(Request)
class RequestAdmin(admin.ModelAdmin):
    list_display = (
        "id",
        "cluster",
        "queue",
        "namespace",
        "common_word",
        "priority_class",
        "state",
        "chip_uuid",
        "pod_name",
        "created_at",
    )
    list_filter = ("cluster", "state", "common_word")
    search_fields = ("pod_name", "namespace", "idempotency_key", "reason")
    # State changes go through the API and the passes (guarded moves, pods, audit).
    readonly_fields = [f.name for f in Request._meta.fields]


@admin.register(Reservation)
class ReservationAdmin(admin.ModelAdmin):
    list_display = ("request", "chip", "template", "memory", "proposal", "created_at")
    readonly_fields = [f.name for f in Reservation._meta.fields]


@admin.register(PreemptionProposal)
class PreemptionProposalAdmin(admin.ModelAdmin):
    list_display = ("id", "request", "chip_uuid", "state", "decided_by", "created_at")
    list_filter = ("cluster", "state")
    # Decisions go through the API: they evict pods and hold room.
    readonly_fields = [f.name for f in PreemptionProposal._meta.fields]
