"""A drain ends ``drained`` once its pods are evicted and its chips hold no slice.

Sync's mirror counts a terminating pod's slice until the pod is gone (its
vNPU is not free before), so "no Slice left on the chips" is the cluster's
own word that the chips are empty. Run with every reconciliation.
"""

from __future__ import annotations

from django.utils import timezone

from apps.inventory.hami.messages import N_
from apps.inventory.models import Cluster, Slice
from apps.scheduling.choices import DrainState
from apps.scheduling.models import Drain
from apps.scheduling.progress import progress_fields


def drains_finish(cluster: Cluster) -> list[int]:
    """Mark drained the evicting drains whose chips are empty; returns their ids."""
    done = []
    for drain in Drain.objects.filter(cluster=cluster, state=DrainState.EVICTING):
        if not all(v.get("evicted") for v in drain.victims):
            continue
        left = Slice.objects.filter(cluster=cluster, chip_uuid__in=drain.chip_uuids)
        if left.exists():
            late = sorted(
                {f"{s.namespace}/{s.pod_name}" for s in left}
                - {f"{v['namespace']}/{v['pod']}" for v in drain.victims}
            )
            progress = N_(
                "every pod evicted, but pods placed since by the cluster's own "
                "scheduler hold slices there: %(pods)s",
                pods=", ".join(late),
            )
            if late and drain.progress != progress:
                # The cordon is the portal's; chip isolation keeps them off.
                Drain.objects.filter(pk=drain.pk).update(
                    **progress_fields(progress), updated_at=timezone.now()
                )
            continue
        if Drain.objects.filter(pk=drain.pk, state=DrainState.EVICTING).update(
            state=DrainState.DRAINED,
            **progress_fields(
                N_("every slice is gone; the chips stay cordoned until uncordoned")
            ),
            next_attempt_at=None,
            updated_at=timezone.now(),
        ):
            done.append(drain.pk)
    return done
