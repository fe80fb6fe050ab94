from django.contrib import admin

from apps.audit.models import AuditEvent


@admin.register(AuditEvent)
class AuditEventAdmin(admin.ModelAdmin):
    list_display = ("created_at", "actor_name", "action", "object_repr", "cluster")
    list_filter = ("action", "cluster")
    search_fields = ("object_repr", "actor_name", "reason")
    readonly_fields = [f.name for f in AuditEvent._meta.fields]

    def has_add_permission(self, request):  # the trail is written by services only
        return False

    def has_change_permission(self, request, obj=None):
        return False
