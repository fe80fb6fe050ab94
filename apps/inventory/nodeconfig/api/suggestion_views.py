"""Route of the chip suggestions: GET /api/clusters/<id>/chip-suggestions/."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.routers import SimpleRouter

from apps.inventory.models import Cluster
from apps.inventory.nodeconfig.suggestions import ISOLATE, RESTORE, chip_suggestions


class SuggestedChipSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    uuid = serializers.CharField()
    node = serializers.CharField()
    index = serializers.IntegerField(
        help_text="the index the device plugin last registered it at (an "
        "isolated chip keeps the one it had)"
    )
    common_word = serializers.CharField()


class HeldSliceSerializer(serializers.Serializer):
    namespace = serializers.CharField()
    pod_name = serializers.CharField()
    request = serializers.IntegerField(
        allow_null=True, help_text="the portal request behind the pod (null: none)"
    )


class SuggestionSerializer(serializers.Serializer):
    action = serializers.ChoiceField(choices=[ISOLATE, RESTORE])
    chip = SuggestedChipSerializer()
    why = serializers.CharField(help_text="the rule and its figures")
    since = serializers.DateTimeField(
        help_text="isolate: since when the chip is registered unhealthy; "
        "restore: since when its hardware has been healthy"
    )
    slices = HeldSliceSerializer(
        many=True,
        help_text="the pods holding slices on the chip: isolating stops new "
        "work, it does not move these (drain does)",
    )


class SuggestionRulesSerializer(serializers.Serializer):
    suggest_after_seconds = serializers.IntegerField()
    restore_after_seconds = serializers.IntegerField()
    auto_isolate = serializers.BooleanField()
    auto_restore = serializers.BooleanField()


class ChipSuggestionsSerializer(serializers.Serializer):
    suggestions = SuggestionSerializer(many=True)
    restore_available = serializers.BooleanField(
        help_text="false: restores cannot be offered (restore_reason says why, "
        "e.g. no Prometheus configured)"
    )
    restore_reason = serializers.CharField(allow_blank=True)
    rules = SuggestionRulesSerializer(help_text="the settings the rules use")


def _rules() -> dict[str, Any]:
    return {
        "suggest_after_seconds": settings.ISOLATION_SUGGEST_AFTER_SECONDS,
        "restore_after_seconds": settings.ISOLATION_RESTORE_AFTER_SECONDS,
        "auto_isolate": settings.ISOLATION_AUTO_ISOLATE,
        "auto_restore": settings.ISOLATION_AUTO_RESTORE,
    }


@extend_schema(tags=["clusters"])
class ChipSuggestionViewSet(viewsets.GenericViewSet):
    """Chips the health rules offer for isolation or restore."""

    queryset = Cluster.objects.all()
    serializer_class = ChipSuggestionsSerializer
    filter_backends: list[Any] = []

    @extend_schema(
        operation_id="clusters_chip_suggestions",
        responses={
            200: ChipSuggestionsSerializer,
            404: OpenApiResponse(description="no such cluster"),
        },
    )
    @action(
        detail=True, methods=["get"], url_path="chip-suggestions", pagination_class=None
    )
    def chip_suggestions(self, request: Request, pk: str | None = None) -> Response:
        """Isolate a chip registered unhealthy for too long; restore an isolated
        one whose hardware has been healthy long enough (docs/node-config.md)."""
        found = chip_suggestions(self.get_object())
        return Response(
            ChipSuggestionsSerializer(
                {
                    "suggestions": found.suggestions,
                    "restore_available": found.restore_available,
                    "restore_reason": found.restore_reason,
                    "rules": _rules(),
                }
            ).data
        )


router = SimpleRouter()
router.register("clusters", ChipSuggestionViewSet, basename="cluster-chip-suggestions")
urlpatterns = router.urls
