from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from apps.accounts.choices import Role
from apps.accounts.models import ApiToken
from apps.accounts.queue_refs import queue_labels_of
from apps.accounts.selectors import user_role


class MeSerializer(serializers.Serializer):
    username = serializers.CharField()
    role = serializers.ChoiceField(choices=Role.choices)
    is_service_account = serializers.BooleanField()


class LoginCsrfSerializer(serializers.Serializer):
    csrf_token = serializers.CharField(
        help_text="send it as the X-CSRFToken header of the login POST"
    )


class AuthConfigSerializer(serializers.Serializer):
    local_login_enabled = serializers.BooleanField(
        help_text="whether usernames and passwords sign in (POST /api/auth/login/)"
    )
    oidc_enabled = serializers.BooleanField(
        help_text="whether OpenID Connect signs in (OIDC_ISSUER is set)"
    )
    oidc_provider_name = serializers.CharField(
        allow_null=True, help_text='the button says "Sign in with <this>"'
    )
    oidc_login_url = serializers.CharField(
        allow_null=True, help_text="navigate the browser here to sign in with OIDC"
    )


class LogoutSerializer(serializers.Serializer):
    end_session_url = serializers.CharField(
        allow_null=True,
        help_text="for a session signed in with OIDC at a provider that supports "
        "RP-initiated logout: navigate the browser here to end the provider's "
        "session too (it comes back to the portal)",
    )


class LoginSerializer(serializers.Serializer):
    username = serializers.CharField(max_length=150)
    password = serializers.CharField(
        max_length=512, style={"input_type": "password"}, trim_whitespace=False
    )


class ApiTokenSerializer(serializers.ModelSerializer):
    username = serializers.CharField(source="user.username", read_only=True)
    queues = serializers.SerializerMethodField(
        help_text="the queues it is limited to, as cluster/queue; empty: an admin's "
        "token, not limited"
    )
    role = serializers.SerializerMethodField(
        help_text="the role of the token's user: what the token may do"
    )

    class Meta:
        model = ApiToken
        fields = [
            "id",
            "username",
            "role",
            "name",
            "prefix",
            "queues",
            "created_at",
            "last_used_at",
            "expires_at",
            "revoked_at",
        ]
        read_only_fields = fields

    @extend_schema_field(serializers.ListField(child=serializers.CharField()))
    def get_queues(self, obj: ApiToken) -> list[str]:
        return queue_labels_of(obj.queue_ids)

    @extend_schema_field(serializers.ChoiceField(choices=Role.choices, allow_null=True))
    def get_role(self, obj: ApiToken) -> str | None:
        role = user_role(obj.user)
        return role.value if role is not None else None


class ApiTokenCreateSerializer(serializers.Serializer):
    username = serializers.CharField(
        max_length=150, help_text="existing user, or a new service account"
    )
    role = serializers.ChoiceField(
        choices=Role.choices, required=False, help_text="role of a new service account"
    )
    name = serializers.CharField(
        max_length=100, required=False, allow_blank=True, default=""
    )
    queues = serializers.ListField(
        child=serializers.CharField(max_length=200),
        required=False,
        default=list,
        max_length=100,
        help_text="queues to limit it to, as cluster/queue (or a queue name one "
        "cluster has); required unless the user is an admin",
    )
    expires_at = serializers.DateTimeField(
        required=False, allow_null=True, default=None
    )


class ApiTokenIssuedSerializer(ApiTokenSerializer):
    token = serializers.CharField(read_only=True, help_text="shown once; store it now")

    class Meta(ApiTokenSerializer.Meta):
        fields = [*ApiTokenSerializer.Meta.fields, "token"]
        read_only_fields = fields
