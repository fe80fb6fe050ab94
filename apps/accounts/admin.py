from django.contrib import admin

from apps.accounts.models import ApiToken, Profile


@admin.register(Profile)
class ProfileAdmin(admin.ModelAdmin):
    list_display = ("user", "role", "is_service_account")
    list_filter = ("role", "is_service_account")
    search_fields = ("user__username",)


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = (
        "prefix",
        "user",
        "name",
        "created_at",
        "last_used_at",
        "expires_at",
        "revoked_at",
    )
    list_filter = ("revoked_at",)
    search_fields = ("prefix", "user__username", "name")
    # The hash is useless to a reader and tokens are issued through the API or createtoken.
    exclude = ("key_hash",)
    readonly_fields = ("prefix", "created_at", "last_used_at")

    def has_add_permission(self, request):
        return False
