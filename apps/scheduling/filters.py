"""FilterSets of the scheduling API (one per list endpoint)."""

import django_filters

from apps.common.filters import IdFilter
from apps.scheduling.choices import DrainState, ProposalState, RequestState
from apps.scheduling.models import Drain, PreemptionProposal, Queue, Request


class RequestFilterSet(django_filters.FilterSet):
    cluster = IdFilter(field_name="cluster_id")
    cluster_name = django_filters.CharFilter(field_name="cluster__name")
    queue = django_filters.CharFilter(field_name="queue__name")
    state = django_filters.MultipleChoiceFilter(choices=RequestState.choices)
    chip = IdFilter(field_name="chip_id")
    chip_type = django_filters.CharFilter(field_name="common_word")
    submitted_by = django_filters.CharFilter(field_name="submitted_by__username")

    class Meta:
        model = Request
        fields = ["namespace", "idempotency_key", "pod_name", "chip_uuid"]


class PreemptionProposalFilterSet(django_filters.FilterSet):
    cluster = IdFilter(field_name="cluster_id")
    chip = IdFilter(field_name="chip_id")
    queue = django_filters.CharFilter(
        field_name="request__queue__name", label="the queue of the waiting request"
    )
    state = django_filters.MultipleChoiceFilter(choices=ProposalState.choices)
    request = IdFilter(field_name="request_id")

    class Meta:
        model = PreemptionProposal
        fields = ["chip_uuid", "node", "auto_approved"]


class QueueFilterSet(django_filters.FilterSet):
    cluster = IdFilter(field_name="cluster_id")
    cluster_name = django_filters.CharFilter(field_name="cluster__name")

    class Meta:
        model = Queue
        fields = ["name"]


class DrainFilterSet(django_filters.FilterSet):
    cluster = IdFilter(field_name="cluster_id")
    chip = IdFilter(field_name="chip_id", label="the chip of a chip drain")
    state = django_filters.MultipleChoiceFilter(choices=DrainState.choices)

    class Meta:
        model = Drain
        fields = ["node", "scope"]
