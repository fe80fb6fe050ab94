"""Bookings (who held which slice, from when to when) and chip-type prices.

Booking is the portal's own knowledge, kept here because slices come and go:
the inventory's ``Slice`` rows describe only what is held *now*, while a
month's report needs every slice held during the month. Use (what the slices
did with what they booked) is never stored: Prometheus has it.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models


class Booking(models.Model):
    """One container slice's hold on one chip, from its start until it ended.

    Opened and closed by ``apps.metering.ledger`` from the synced slices; the
    columns are copied, not linked, so a booking outlives its pod, chip and node.
    """

    cluster = models.ForeignKey(
        "inventory.Cluster", on_delete=models.CASCADE, related_name="bookings"
    )
    # pod uid, container index and chip uuid: one slice, whatever its pod is named
    key = models.CharField(max_length=200)
    namespace = models.CharField(max_length=63)
    pod_name = models.CharField(max_length=253)
    container_index = models.PositiveIntegerField(default=0)
    queue = models.CharField(max_length=253, default="default")
    node_name = models.CharField(max_length=253)
    chip_index = models.PositiveIntegerField(default=0)
    common_word = models.CharField(max_length=63)
    template = models.CharField(max_length=63, blank=True)
    aicore = models.PositiveIntegerField(default=0, help_text="AICores booked")
    chip_aicore = models.PositiveIntegerField(default=0, help_text="the chip's AICores")
    memory = models.PositiveIntegerField(default=0, help_text="MB booked")
    started_at = models.DateTimeField()
    ended_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [
            models.Index(fields=["cluster", "ended_at"]),
            models.Index(fields=["cluster", "started_at"]),
        ]
        constraints = [
            # One open booking per slice: the ledger's diff relies on it.
            models.UniqueConstraint(
                fields=["cluster", "key"],
                condition=models.Q(ended_at__isnull=True),
                name="metering_one_open_booking_per_slice",
            )
        ]

    def __str__(self) -> str:
        return f"{self.namespace}/{self.pod_name}[{self.container_index}] on {self.node_name}/{self.chip_index}"

    @property
    def card_share(self) -> float:
        """The part of the card this slice booked: its AICores over the chip's."""
        if self.chip_aicore <= 0:
            return 0.0
        return min(1.0, self.aicore / self.chip_aicore)


class ChipPrice(models.Model):
    """What one card of a chip type costs per hour, set by an admin."""

    common_word = models.CharField(max_length=63, unique=True)
    price_per_hour = models.DecimalField(max_digits=12, decimal_places=4)
    updated_at = models.DateTimeField(auto_now=True)
    updated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )

    def __str__(self) -> str:
        return f"{self.common_word}: {self.price_per_hour}/h"


class UsageDay(models.Model):
    """What Prometheus measured of one slice key over one whole UTC day.

    Days are rolled up once they are over (``apps.metering.rollup``): a month's
    report then sums at most a day of live queries and the rest from here,
    and outlives Prometheus' retention (15 days by default).
    """

    cluster = models.ForeignKey(
        "inventory.Cluster", on_delete=models.CASCADE, related_name="usage_days"
    )
    day = models.DateField()
    node_name = models.CharField(max_length=253)
    chip_index = models.PositiveIntegerField()
    namespace = models.CharField(max_length=63)
    pod_name = models.CharField(max_length=253)
    seen_hours = models.FloatField(help_text="slice-hours with samples")
    used_hours = models.FloatField(help_text="seen hours times AICore use")
    idle_hours = models.FloatField(
        help_text="seen hours at or under the idle threshold"
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=[
                    "cluster",
                    "day",
                    "node_name",
                    "chip_index",
                    "namespace",
                    "pod_name",
                ],
                name="metering_one_usage_day_per_slice_key",
            )
        ]

    def __str__(self) -> str:
        return f"{self.day} {self.namespace}/{self.pod_name} on {self.node_name}/{self.chip_index}"


class RolledDay(models.Model):
    """A day whose usage is rolled up (also when nothing ran that day)."""

    cluster = models.ForeignKey(
        "inventory.Cluster", on_delete=models.CASCADE, related_name="rolled_days"
    )
    day = models.DateField()
    rolled_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["cluster", "day"], name="metering_one_roll_per_day"
            )
        ]

    def __str__(self) -> str:
        return f"{self.day} rolled at {self.rolled_at}"
