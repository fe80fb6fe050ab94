from django.apps import AppConfig


class SchedulingConfig(AppConfig):
    name = "apps.scheduling"
    label = "scheduling"
    verbose_name = "Scheduling"

    def ready(self) -> None:
        # Imported here, not at the top: this module is loaded while the app
        # registry is being filled, before any model may be imported.
        import apps.scheduling.tasks  # noqa: F401
        from apps.accounts.queue_refs import queue_refs_register
        from apps.audit.selectors import audit_scope_register
        from apps.common.metrics_sources import register_database_families
        from apps.inventory.nodeconfig.health_sources import register_slice_requests
        from apps.inventory.nodeconfig.whatif_data import pending_demands_register
        from apps.inventory.sync.writer import slices_changed, volcano_queues_changed
        from apps.live.events import Event
        from apps.live.logfollow import log_feed_register
        from apps.live.scoping import delta_scope_register
        from apps.scheduling.access import queue_labels, queue_refs_resolve
        from apps.scheduling.live_logs import follow_log
        from apps.scheduling.metrics import attention_families, scheduling_families
        from apps.scheduling.models import PreemptionProposal, Request
        from apps.scheduling.selectors import (
            pending_request_demands,
            pod_requests,
            proposal_delta_scoped,
            proposals_scoped,
            requests_delta_scoped,
            requests_scoped,
        )
        from apps.scheduling.signals import on_slices_changed, on_volcano_queues_changed

        # The tasks register how follow-up work starts (apps.scheduling.triggers).
        # Sync announces slice changes; scheduling listens (inventory never
        # imports scheduling).
        slices_changed.connect(on_slices_changed, dispatch_uid="scheduling-slices")
        volcano_queues_changed.connect(
            on_volcano_queues_changed, dispatch_uid="scheduling-volcano-queues"
        )
        register_database_families("scheduling", scheduling_families)
        register_database_families("scheduling-attention", attention_families)
        # A token limited to queues reads the audit events of their requests
        # and proposals only (audit never imports scheduling).
        audit_scope_register(Request, requests_scoped)
        audit_scope_register(PreemptionProposal, proposals_scoped)
        # Tokens name their queues as cluster/queue (accounts never imports scheduling).
        queue_refs_register(resolve=queue_refs_resolve, label=queue_labels)
        # A socket limited to queues hears their requests and proposals only,
        # as REST shows them (live never imports scheduling).
        delta_scope_register(Event.REQUESTS, requests_delta_scoped)
        delta_scope_register(Event.PROPOSAL, proposal_delta_scoped)
        # The live socket follows a request's job log through scheduling's
        # feed (live never imports scheduling).
        log_feed_register(follow_log)
        # The node config's what-if weighs the pending requests (inventory
        # never imports scheduling).
        pending_demands_register(pending_request_demands)
        # The chip suggestions name the request behind each slice they list
        # (inventory never imports scheduling).
        register_slice_requests(pod_requests)
