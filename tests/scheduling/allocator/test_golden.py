"""The allocator's decisions, pinned: a digest of every outcome on fixed inputs.

Speed work on the allocator (indexes, shortcuts past the look-ahead, cheaper
bookkeeping) must not change a single decision. These seeded snapshots mix
what the other tests take one at a time (terminating slices, quotas, pins,
exclusions, standing proposals, unhealthy and cordoned chips, both strategies,
look-ahead windows from 0 to 30, the scheduler picking the chip), and enough
chips and requests per type that the look-ahead has real choices. The digest
was taken from the allocator before the speed work (issue 38); when a change
is *meant* to change decisions, recompute it with ``python -m
tests.scheduling.allocator.test_golden`` and say why in the commit.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable, Iterator
from dataclasses import astuple

from apps.scheduling.allocator import (
    AllocationResult,
    Chip,
    Policy,
    QueueQuota,
    Request,
    RunningSlice,
    StandingProposal,
    Strategy,
    allocate,
)
from apps.scheduling.allocator.fit import ZERO, Resources, booking, fits
from apps.scheduling.allocator.shapes import resolve_shape
from tests.scheduling.allocator.builders import BY_WORD, RULES, SLOTS

QUEUES = ("a", "b", "c")
SEED = 38
SCENARIOS = 160

#: sha256 of the outcomes of ``snapshots()`` (see the module docstring).
DIGEST = "6a2599f92d544b7f2befd37a72e62fd0b1ac041ab43de199dede02c171bd26cf"

Snapshot = tuple[
    list[Chip], list[RunningSlice], list[Request], list[QueueQuota], Policy, float
]


def _snapshot(rng: random.Random, n_chips: int, n_requests: int) -> Snapshot:
    words = sorted(BY_WORD)
    main = rng.choice(words)
    other = next(w for w in words if w != main)
    per_node = rng.choice((1, 2, 4, 8))
    chips: list[Chip] = []
    running: list[RunningSlice] = []
    for i in range(n_chips):
        word = other if rng.random() < 0.15 else main
        rules = BY_WORD[word]
        total = Resources(
            rules.memory_allocatable, SLOTS[word], rules.ai_core, rules.ai_cpu
        )
        options = [
            resolve_shape(rules, memory=None, template=t.name) for t in rules.templates
        ]
        options.append(resolve_shape(rules, memory=None, template=None))
        used = ZERO
        for k in range(rng.choice((0, 0, 1, 2, 3, 5))):
            shape = rng.choice(options)
            if not fits(total, used, shape):
                continue
            book = booking(shape, total)
            used = Resources(*(u + b for u, b in zip(used, book, strict=True)))
            running.append(
                RunningSlice(
                    id=f"c{i}s{k}",
                    chip_id=f"c{i}",
                    memory=book.memory,
                    ai_core=book.ai_core,
                    ai_cpu=book.ai_cpu,
                    priority=rng.randint(0, 3),
                    started_at_s=float(rng.randint(0, 1000)),
                    queue=rng.choice(QUEUES),
                    namespace="ns",
                    pod=f"p{i}-{k}",
                    terminating=rng.random() < 0.12,
                    preemptable=rng.random() < 0.9,
                )
            )
        extra = min(rng.choice((0, 0, 0, 1000, 3000)), total.memory - used.memory)
        chips.append(
            Chip(
                id=f"c{i}",
                node=f"n{i // per_node}",
                common_word=word,
                memory=total.memory,
                slots=total.slots,
                ai_core=total.ai_core,
                ai_cpu=total.ai_cpu,
                memory_used=used.memory + extra,
                slots_used=used.slots,
                ai_core_used=used.ai_core,
                ai_cpu_used=used.ai_cpu,
                healthy=rng.random() > 0.08,
                cordoned=rng.random() < 0.08,
            )
        )
    chip_ids = [c.id for c in chips]
    requests: list[Request] = []
    for j in range(n_requests):
        word = rng.choice([main] * 8 + [other, "Ascend999"])
        kind = rng.choice(("memory", "memory", "template", "whole"))
        memory = rng.randint(0, 26000) if kind == "memory" else None
        template = None
        if kind == "template" and word in BY_WORD:
            names = [t.name for t in BY_WORD[word].templates]
            template = rng.choice([*names, *names, "vir99"])
        standing = None
        if running and rng.random() < 0.05:
            victims = rng.sample(running, k=min(len(running), rng.randint(1, 2)))
            standing = StandingProposal(
                chip_id=rng.choice([victims[0].chip_id, rng.choice(chip_ids)]),
                victims=frozenset((s.namespace, s.pod) for s in victims),
            )
        excluded: frozenset[str] = frozenset()
        if rng.random() < 0.15:
            excluded = frozenset(rng.sample(chip_ids, k=min(2, len(chip_ids))))
        requests.append(
            Request(
                id=f"r{j}",
                common_word=word,
                memory=memory,
                template=template,
                priority=rng.randint(0, 4),
                submitted_at_s=float(rng.randint(0, 6)),
                queue=rng.choice(QUEUES),
                allow_preemption=rng.random() > 0.2,
                never_preempts=rng.random() < 0.05,
                pinned_chip=rng.choice(
                    [None] * 6 * len(chip_ids) + ["ghost", *chip_ids]
                ),
                excluded_chips=excluded,
                standing=standing,
            )
        )
    quotas: list[QueueQuota] = []
    for queue in QUEUES:
        for word in words:
            if rng.random() < 0.5:
                continue
            ids = {c.id for c in chips if c.common_word == word}
            mine = [s for s in running if s.queue == queue and s.chip_id in ids]
            memory_used = sum(s.memory for s in mine)
            quotas.append(
                QueueQuota(
                    queue=queue,
                    common_word=word,
                    memory_limit=rng.choice(
                        (
                            None,
                            None,
                            memory_used,
                            memory_used + 6144,
                            memory_used + 40000,
                        )
                    ),
                    slots_limit=rng.choice(
                        (None, None, len(mine), len(mine) + 2, len(mine) + 8)
                    ),
                    memory_used=memory_used,
                    slots_used=len(mine),
                )
            )
    policy = Policy(
        strategy=rng.choice(list(Strategy)),
        preemption=rng.random() < 0.8,
        lookahead=rng.choice((0, 1, 2, 6, 12, 12, 30)),
        scheduler_picks_chip=rng.random() < 0.3,
        place_unguaranteed=rng.random() < 0.7,
    )
    return chips, running, requests, quotas, policy, 1000.0


def snapshots() -> Iterator[Snapshot]:
    """The pinned inputs: small to medium clusters, from one seed."""
    rng = random.Random(SEED)
    for _ in range(SCENARIOS):
        size = rng.choice((2, 3, 5, 8, 12, 20, 40, 80))
        yield _snapshot(rng, size, rng.randint(0, max(4, size * 3)))


def digest(run: Callable[..., AllocationResult] = allocate) -> str:
    """sha256 of every outcome of ``run`` over ``snapshots()``, in order."""
    h = hashlib.sha256()
    for chips, running, requests, quotas, policy, now_s in snapshots():
        result = run(
            requests,
            chips,
            RULES,
            policy=policy,
            quotas=quotas,
            running=running,
            now_s=now_s,
        )
        for group in (result.placements, result.proposals, result.waiting):
            h.update(repr([astuple(o) for o in group]).encode())
            h.update(b"|")
    return h.hexdigest()


def test_the_decisions_are_the_pinned_ones() -> None:
    assert digest() == DIGEST


if __name__ == "__main__":
    print(digest())  # noqa: T201
