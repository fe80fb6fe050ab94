"""Writes of scheduling, one module per concept:

- ``requests``: submitting a request for a vNPU (every field checked against
  the cluster first) and cancelling or releasing one;
- ``queues``: queues with their quotas per chip type and their pod policy;
- ``allocations``: the allocator adapter, one transaction that books the
  allocator's result;
- ``followups``: the work these ask for once their transaction commits.

Callers import from the module (``from apps.scheduling.services.requests
import request_create``); this package exports nothing itself.
"""
