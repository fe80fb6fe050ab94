"""Draining a chip, or every chip of a node: empty it of slices, keep it cordoned.

The flow is a preemption's, without a beneficiary request:

- ``plan``: every pod holding a slice there, the portal's own (which request,
  its queue) or foreign, the PodDisruptionBudgets that cover it (read from the
  cluster) and what will happen to it. ``GET .../drain/``.
- ``services.drain_create`` (``POST .../drain/``, with a reason): the chips are
  cordoned at once (the allocator places nothing there while the drain lasts);
  the portal's own pods are evicted and their requests re-queued; foreign pods
  wait for an admin's approval (``drain_approve``; ``drain_reject`` leaves them
  running). A chip with no slice is only cordoned.
- ``evict``: the evictions, through the same step as a preemption's
  (annotation, Event, Eviction API; a PodDisruptionBudget's 429 is retried
  later, nothing is forced), each audited naming who and why.
- ``finish``: the drain is ``drained`` once every slice is gone; the chips stay
  cordoned until ``services.uncordon``.
"""
