"""Periodic metering work (thin: the logic is in services)."""

from celery import shared_task

from apps.metering.services import metering_refresh


@shared_task(ignore_result=True)
def metering_refresh_task() -> dict[str, int]:
    """Open/close bookings from the synced slices; refresh the derived gauges."""
    return metering_refresh()
