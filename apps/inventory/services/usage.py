"""Usage samples for the charts (one per cluster and chip type), pruned past retention."""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.utils import timezone

from apps.inventory.models import (
    ChipEvent,
    Cluster,
    UsageSample,
)
from apps.inventory.selectors import cluster_summary, fragmentation


def usage_samples_record() -> int:
    """Record one UsageSample per cluster and chip type now; prune past retention."""
    now = timezone.now()
    samples = []
    for cluster in Cluster.objects.all():
        stranded = {f.common_word: f.stranded_memory for f in fragmentation(cluster)}
        for totals in cluster_summary(cluster)["chip_types"]:
            samples.append(
                UsageSample(
                    cluster=cluster,
                    common_word=totals["common_word"],
                    at=now,
                    chips=totals["chips"],
                    slices=totals["slices"],
                    memory_total=totals["memory_total"],
                    memory_used=totals["memory_used"],
                    slots_total=totals["slots_total"],
                    slots_used=totals["slots_used"],
                    aicore_total=totals["aicore_total"],
                    aicore_used=totals["aicore_used"],
                    aicpu_total=totals["aicpu_total"],
                    aicpu_used=totals["aicpu_used"],
                    stranded_memory=stranded.get(totals["common_word"], 0),
                )
            )
    UsageSample.objects.bulk_create(samples)
    UsageSample.objects.filter(
        at__lt=now - timedelta(days=settings.USAGE_SAMPLE_RETENTION_DAYS)
    ).delete()
    # Chip history is kept as long as the usage samples.

    ChipEvent.objects.filter(
        at__lt=now - timedelta(days=settings.USAGE_SAMPLE_RETENTION_DAYS)
    ).delete()
    return len(samples)
