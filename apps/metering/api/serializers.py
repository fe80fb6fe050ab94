"""Usage and cost: query parameters and answers (the answers are plain data)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from django.conf import settings
from django.utils.translation import gettext as _
from rest_framework import serializers

from apps.inventory.models import Cluster
from apps.metering.models import ChipPrice
from apps.metering.report import GROUPINGS
from apps.metering.selectors import MAX_POINTS, window_for

#: The longest history or report period one answer covers.
MAX_PERIOD = timedelta(days=93)


class MetricsStatusSerializer(serializers.Serializer):
    configured = serializers.BooleanField(help_text="PROMETHEUS_URL is set")
    available = serializers.BooleanField(
        help_text="the used figures are in this answer"
    )
    reason = serializers.CharField(
        help_text="why not, for an admin; empty when available"
    )
    queried_at = serializers.DateTimeField()


class ClusterQuerySerializer(serializers.Serializer):
    cluster = serializers.IntegerField(
        min_value=1,
        required=False,
        help_text="the cluster's id; may be left out when there is one",
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        attrs = super().validate(attrs)
        if "cluster" not in attrs:
            ids = list(Cluster.objects.values_list("id", flat=True)[:2])
            if len(ids) != 1:
                raise serializers.ValidationError(
                    {
                        "cluster": [
                            _("required: the portal has more than one cluster")
                            if ids
                            else _("no cluster is registered")
                        ]
                    }
                )
            attrs["cluster"] = ids[0]
        return attrs


class SliceUsageQuerySerializer(ClusterQuerySerializer):
    flag = serializers.ChoiceField(choices=["idle", "over_memory"], required=False)


class ChipMeasuredSerializer(serializers.Serializer):
    chip = serializers.IntegerField()
    node = serializers.CharField()
    index = serializers.IntegerField()
    common_word = serializers.CharField()
    healthy = serializers.BooleanField(help_text="as the device plugin registered it")
    hardware_healthy = serializers.BooleanField(
        allow_null=True, help_text="as npu-exporter reports it; null: not measured"
    )
    aicore = serializers.IntegerField()
    aicore_booked = serializers.IntegerField()
    aicore_used_percent = serializers.FloatField(allow_null=True)
    memory_mb = serializers.IntegerField()
    memory_booked_mb = serializers.IntegerField()
    memory_used_mb = serializers.FloatField(allow_null=True)
    slices = serializers.IntegerField()
    flags = serializers.ListField(
        child=serializers.ChoiceField(["health_mismatch", "idle_slices", "over_memory"])
    )


class SliceMeasuredSerializer(serializers.Serializer):
    slice = serializers.IntegerField()
    namespace = serializers.CharField()
    pod_name = serializers.CharField()
    container_index = serializers.IntegerField()
    queue = serializers.CharField()
    node = serializers.CharField()
    chip = serializers.IntegerField(allow_null=True)
    chip_index = serializers.IntegerField(allow_null=True)
    common_word = serializers.CharField()
    template = serializers.CharField()
    aicore = serializers.IntegerField()
    memory_mb = serializers.IntegerField()
    aicore_used_percent = serializers.FloatField(allow_null=True)
    memory_used_mb = serializers.FloatField(allow_null=True)
    idle_seconds = serializers.FloatField(
        allow_null=True,
        help_text="since its AICore use last went over IDLE_SLICE_PERCENT; at most "
        "twice IDLE_SLICE_AFTER_SECONDS (an hour at least): idle at least that long",
    )
    flags = serializers.ListField(
        child=serializers.ChoiceField(["idle", "over_memory"])
    )


class ChipMeasuredListSerializer(serializers.Serializer):
    metrics = MetricsStatusSerializer()
    results = ChipMeasuredSerializer(many=True)


class SliceMeasuredListSerializer(serializers.Serializer):
    metrics = MetricsStatusSerializer()
    results = SliceMeasuredSerializer(many=True)


class HistoryQuerySerializer(serializers.Serializer):
    start = serializers.DateTimeField(
        required=False, help_text="default: an hour before end"
    )
    end = serializers.DateTimeField(required=False, help_text="default: now")
    step = serializers.IntegerField(
        min_value=1, required=False, help_text="seconds; default: about 300 points"
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        try:
            window = window_for(attrs.get("start"), attrs.get("end"), attrs.get("step"))
        except (OverflowError, ValueError):
            # An hour before year 1 (or its like) is no date.
            raise serializers.ValidationError({"end": [_("out of range")]}) from None
        if window.start >= window.end:
            raise serializers.ValidationError({"start": [_("must be before end")]})
        if window.end - window.start > MAX_PERIOD:
            raise serializers.ValidationError(
                {"start": [_("at most 93 days before end")]}
            )
        if (window.end - window.start).total_seconds() / window.step > MAX_POINTS:
            raise serializers.ValidationError(
                {
                    "step": [
                        _("too fine: more than %(points)d points")
                        % {"points": MAX_POINTS}
                    ]
                }
            )
        return {"window": window}


class PointField(serializers.ListField):
    child = serializers.FloatField()


class SeriesSerializer(serializers.Serializer):
    name = serializers.ChoiceField(
        [
            "aicore_used_percent",
            "memory_used_mb",
            "aicore_booked_percent",
            "memory_booked_mb",
        ]
    )
    unit = serializers.ChoiceField(["%", "MB"])
    points = serializers.ListField(
        child=PointField(min_length=2, max_length=2),
        help_text="[epoch seconds, value] pairs",
    )


class HistorySerializer(serializers.Serializer):
    metrics = MetricsStatusSerializer()
    start = serializers.DateTimeField()
    end = serializers.DateTimeField()
    step = serializers.IntegerField()
    series = SeriesSerializer(many=True)


class ReportQuerySerializer(ClusterQuerySerializer):
    group_by = serializers.ChoiceField(GROUPINGS, default="namespace")
    month = serializers.RegexField(
        r"^(19[7-9]\d|2\d{3})-(0[1-9]|1[0-2])$",
        required=False,
        help_text="YYYY-MM (UTC), 1970-01 to 2999-12",
    )
    start = serializers.DateTimeField(required=False)
    end = serializers.DateTimeField(required=False)
    format = serializers.ChoiceField(
        ["json", "csv"], default="json", help_text="csv: text/csv, one row per group"
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        attrs = super().validate(attrs)
        month = attrs.pop("month", None)
        if month:
            if "start" in attrs or "end" in attrs:
                raise serializers.ValidationError(
                    {"month": [_("give either month or start and end")]}
                )
            year, number = (int(part) for part in month.split("-"))
            attrs["start"] = datetime(year, number, 1, tzinfo=UTC)
            attrs["end"] = datetime(year + number // 12, number % 12 + 1, 1, tzinfo=UTC)
        elif "start" not in attrs or "end" not in attrs:
            missing = "start" if "start" not in attrs else "end"
            raise serializers.ValidationError(
                {missing: [_("required unless month is given")]}
            )
        if attrs["start"] >= attrs["end"]:
            raise serializers.ValidationError({"start": [_("must be before end")]})
        if attrs["end"] - attrs["start"] > MAX_PERIOD:
            raise serializers.ValidationError(
                {"start": [_("at most 93 days before end")]}
            )
        return attrs


class ReportRowSerializer(serializers.Serializer):
    group = serializers.CharField()
    slices = serializers.IntegerField()
    slice_hours = serializers.FloatField(help_text="hours the slices were booked")
    card_hours = serializers.FloatField(
        help_text="slice-hours times the part of the card each slice booked"
    )
    measured_slice_hours = serializers.FloatField(
        allow_null=True,
        help_text="slice-hours Prometheus has samples for (used and idle are of these)",
    )
    used_slice_hours = serializers.FloatField(
        allow_null=True, help_text="slice-hours times their AICore use"
    )
    idle_slice_hours = serializers.FloatField(
        allow_null=True, help_text="slice-hours at or under IDLE_SLICE_PERCENT"
    )
    cost = serializers.DecimalField(
        max_digits=18,
        decimal_places=2,
        allow_null=True,
        help_text="card-hours times the chip type's price; null: no price set",
    )


class ReportSerializer(serializers.Serializer):
    metrics = MetricsStatusSerializer()
    start = serializers.DateTimeField()
    end = serializers.DateTimeField()
    hours = serializers.FloatField(help_text="the period measured (until now at most)")
    group_by = serializers.ChoiceField(GROUPINGS)
    currency = serializers.CharField()
    rows = ReportRowSerializer(many=True)
    totals = ReportRowSerializer()
    unpriced = serializers.ListField(
        child=serializers.CharField(), help_text="chip types booked without a price"
    )


class ChipPriceSerializer(serializers.ModelSerializer):
    currency = serializers.SerializerMethodField()

    class Meta:
        model = ChipPrice
        fields = ["common_word", "price_per_hour", "currency", "updated_at"]
        read_only_fields = ["common_word", "updated_at"]

    def get_currency(self, price: ChipPrice) -> str:
        return settings.COST_CURRENCY


class ChipPriceWriteSerializer(serializers.Serializer):
    price_per_hour = serializers.DecimalField(
        max_digits=12, decimal_places=4, min_value=0
    )
