"""Django admin for every inventory model (read-mostly: sync owns most rows)."""

from django.contrib import admin

from apps.inventory.models import (
    Chip,
    ChipType,
    Cluster,
    DeviceConfigVersion,
    Node,
    Slice,
    Template,
)


@admin.register(Cluster)
class ClusterAdmin(admin.ModelAdmin):
    list_display = (
        "name",
        "connection",
        "sync_state",
        "last_sync_at",
        "device_config_namespace",
        "device_config_name",
    )
    list_filter = ("connection", "sync_state")
    search_fields = ("name", "description")
    # The encrypted token and kubeconfig are never shown, not even to admins: the
    # form would display the ciphertext and let anyone with admin access replace
    # it with text that bypasses the API's kubeconfig checks. Set them through
    # the API.
    exclude = ("token_encrypted", "kubeconfig_encrypted")
    readonly_fields = (
        "sync_state",
        "last_sync_at",
        "last_sync_error",
        "sync_lag_seconds",
    )


class TemplateInline(admin.TabularInline):
    model = Template
    extra = 0
    fields = ("name", "memory", "ai_core", "ai_cpu", "position")


@admin.register(ChipType)
class ChipTypeAdmin(admin.ModelAdmin):
    list_display = (
        "common_word",
        "chip_name",
        "cluster",
        "memory_allocatable",
        "memory_capacity",
        "ai_core",
        "ai_cpu",
    )
    list_filter = ("cluster",)
    search_fields = ("common_word", "chip_name")
    inlines = [TemplateInline]


@admin.register(Template)
class TemplateAdmin(admin.ModelAdmin):
    list_display = ("name", "chip_type", "memory", "ai_core", "ai_cpu")
    list_filter = ("chip_type__cluster", "chip_type__common_word")
    search_fields = ("name",)


@admin.register(Node)
class NodeAdmin(admin.ModelAdmin):
    list_display = (
        "name",
        "cluster",
        "ready",
        "ascend_enabled",
        "hami_vnpu_core",
        "synced_at",
    )
    list_filter = ("cluster", "ready", "ascend_enabled")
    search_fields = ("name",)


@admin.register(Chip)
class ChipAdmin(admin.ModelAdmin):
    list_display = (
        "__str__",
        "uuid",
        "healthy",
        "slots_used",
        "slots",
        "memory_used",
        "memory",
        "cordoned",
    )
    list_filter = ("cluster", "common_word", "healthy", "cordoned")
    search_fields = ("uuid", "node__name")
    list_select_related = ("node",)


@admin.register(Slice)
class SliceAdmin(admin.ModelAdmin):
    list_display = (
        "pod_name",
        "namespace",
        "common_word",
        "template",
        "memory",
        "priority",
        "phase",
        "node_name",
    )
    list_filter = ("cluster", "common_word", "template", "phase")
    search_fields = ("pod_name", "namespace", "chip_uuid")


@admin.register(DeviceConfigVersion)
class DeviceConfigVersionAdmin(admin.ModelAdmin):
    list_display = ("__str__", "shape", "source", "author", "created_at")
    list_filter = ("cluster", "source", "shape")
    readonly_fields = [f.name for f in DeviceConfigVersion._meta.fields]

    def has_add_permission(self, request):  # versions are written by services only
        return False
