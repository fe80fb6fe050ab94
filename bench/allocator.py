"""Benchmark of the pure allocator: speed at reference scale, quality on small cases.

Run from the repository root::

    python -m bench.allocator          # full: 5,000 requests on 8,000 chips, 300 instances
    python -m bench.allocator --quick  # under a minute

The last line is always ``placed_per_s=N quality_mean=X quality_worst=Y``:

- ``placed_per_s``: placements per second of ``allocate`` on 5,000 pending
  requests against 1,000 nodes x 8 chips (mixed 310P3 and 910B4, partly used,
  fixed seed). A naive first-fit over every chip runs on the same input for
  comparison. Every timed run starts after ``gc.collect()``, so none pays for
  collecting objects it did not make: building the scenario leaves its
  ~35,000 objects awaiting the collector's first full pass, which the first
  timed run (binpack's) used to pay for.
- ``quality_mean`` / ``quality_worst``: slices placed by ``allocate`` divided by
  the exact optimum (the most requests that can be placed at once, found by
  branch and bound) on random small instances: 2-4 chips, 5-12 requests of one
  priority, so the objective is the number placed.
"""

from __future__ import annotations

import argparse
import functools
import gc
import random
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass

from apps.scheduling.allocator import (
    Chip,
    ChipTypeRules,
    InvalidRequest,
    Policy,
    QueueQuota,
    Request,
    RunningSlice,
    SliceShape,
    Strategy,
    allocate,
)
from apps.scheduling.allocator.fit import Resources, booking, fits
from apps.scheduling.allocator.shapes import resolve_shape

# The guide's chip types, defined once for the tests and this benchmark.
from harness.chip_types import B4 as ASCEND_910B4
from harness.chip_types import P310 as ASCEND_310P
from harness.chip_types import RULES, SLOTS

QUEUES = ("prod", "research", "ci", "batch")


def _total(rules: ChipTypeRules) -> Resources:
    return Resources(
        rules.memory_allocatable, SLOTS[rules.common_word], rules.ai_core, rules.ai_cpu
    )


def _shapes(rules: ChipTypeRules) -> list[SliceShape]:
    return [resolve_shape(rules, memory=None, template=t.name) for t in rules.templates]


def _random_request_memory(
    rng: random.Random, rules: ChipTypeRules
) -> tuple[int | None, str | None]:
    roll = rng.random()
    if roll < 0.08:
        return None, None  # whole card
    if roll < 0.30:
        return None, rng.choice(rules.templates).name
    top = max(t.memory for t in rules.templates)
    return rng.randint(512, top), None


# -- reference scale ---------------------------------------------------------------


@dataclass(frozen=True)
class Scenario:
    chips: list[Chip]
    running: list[RunningSlice]
    requests: list[Request]
    quotas: list[QueueQuota]


def reference_scenario(
    seed: int, nodes: int, chips_per_node: int, requests: int
) -> Scenario:
    """A realistic, partly used cluster and a backlog of pending requests."""
    rng = random.Random(seed)
    chips: list[Chip] = []
    running: list[RunningSlice] = []
    for n in range(nodes):
        rules = ASCEND_310P if n % 5 < 3 else ASCEND_910B4  # 60 % 310P3 nodes
        total = _total(rules)
        node = f"node-{n:04d}"
        for c in range(chips_per_node):
            chip_id = f"{node}#{c}"
            used = Resources(0, 0, 0, 0)
            # a fifth empty, a fifth full, the rest partly used
            fill = rng.choice((0.0, rng.random(), rng.random(), rng.random(), 1.0))
            if fill == 1.0 and rng.random() < 0.3:
                # a whole card in use
                shape = resolve_shape(rules, memory=None, template=None)
                slices = [shape]
            else:
                slices = []
                for _ in range(total.slots):
                    if used.memory >= fill * total.memory:
                        break
                    shape = rng.choice(_shapes(rules))
                    book = booking(shape, total)
                    trial = Resources(*(u + b for u, b in zip(used, book, strict=True)))
                    if all(t <= cap for t, cap in zip(trial, total, strict=True)):
                        used = trial
                        slices.append(shape)
            used = Resources(0, 0, 0, 0)
            for k, shape in enumerate(slices):
                book = booking(shape, total)
                used = Resources(*(u + b for u, b in zip(used, book, strict=True)))
                running.append(
                    RunningSlice(
                        id=f"{chip_id}/s{k}",
                        chip_id=chip_id,
                        memory=book.memory,
                        ai_core=book.ai_core,
                        ai_cpu=book.ai_cpu,
                        priority=rng.choice((0, 0, 0, 1, 1, 2)),
                        started_at_s=rng.uniform(0, 86_400),
                        queue=rng.choice(QUEUES),
                        namespace="team",
                        pod=f"pod-{chip_id}-{k}",
                        terminating=rng.random() < 0.02,
                    )
                )
            health = rng.random()
            chips.append(
                Chip(
                    id=chip_id,
                    node=node,
                    common_word=rules.common_word,
                    memory=total.memory,
                    slots=total.slots,
                    ai_core=total.ai_core,
                    ai_cpu=total.ai_cpu,
                    memory_used=used.memory,
                    slots_used=used.slots,
                    ai_core_used=used.ai_core,
                    ai_cpu_used=used.ai_cpu,
                    healthy=health > 0.005,
                    cordoned=0.005 < health < 0.01,
                    network_id=0 if c < 4 else 1,
                )
            )
    pending: list[Request] = []
    for i in range(requests):
        rules = ASCEND_310P if rng.random() < 0.6 else ASCEND_910B4
        memory, template = _random_request_memory(rng, rules)
        pending.append(
            Request(
                id=f"req-{i:05d}",
                common_word=rules.common_word,
                memory=memory,
                template=template,
                priority=rng.choice((0, 0, 1, 1, 2, 3)),
                submitted_at_s=rng.uniform(80_000, 90_000),
                queue=rng.choice(QUEUES),
                allow_preemption=rng.random() < 0.9,
            )
        )
    quotas = [
        QueueQuota("ci", "Ascend310P", 4_000_000, None, 3_500_000, 0),
        QueueQuota("batch", "Ascend910B4", None, 2_000, 0, 1_900),
    ]
    return Scenario(chips, running, pending, quotas)


def naive_first_fit(scenario: Scenario) -> int:
    """Serve requests in the same order, taking the first chip (by id) that fits."""
    rules = {r.common_word: r for r in RULES}
    chips = sorted(scenario.chips, key=lambda c: c.id)
    used = [[c.memory_used, c.slots_used, c.ai_core_used, c.ai_cpu_used] for c in chips]
    totals = [Resources(c.memory, c.slots, c.ai_core, c.ai_cpu) for c in chips]
    quota_left = {
        (q.queue, q.common_word): [
            None if q.memory_limit is None else q.memory_limit - q.memory_used,
            None if q.slots_limit is None else q.slots_limit - q.slots_used,
        ]
        for q in scenario.quotas
    }
    placed = 0
    for r in sorted(
        scenario.requests, key=lambda r: (-r.priority, r.submitted_at_s, r.id)
    ):
        try:
            shape = resolve_shape(
                rules[r.common_word], memory=r.memory, template=r.template
            )
        except InvalidRequest:
            continue  # invalid requests stay pending
        left = quota_left.get((r.queue, r.common_word))
        if left is not None and (
            (left[0] is not None and left[0] < shape.memory)
            or (left[1] is not None and left[1] < 1)
        ):
            continue
        for i, c in enumerate(chips):
            if c.common_word != r.common_word or not c.healthy or c.cordoned:
                continue
            if fits(totals[i], Resources(*used[i]), shape):
                book = booking(shape, totals[i])
                for d in range(4):
                    used[i][d] += book[d]
                if left is not None:
                    left[0] = None if left[0] is None else left[0] - book.memory
                    left[1] = None if left[1] is None else left[1] - 1
                placed += 1
                break
    return placed


def measure_speed(
    scenario: Scenario, strategy: Strategy, repeat: int
) -> tuple[int, float]:
    best = float("inf")
    placed = 0
    for _ in range(repeat):
        gc.collect()  # see the module docstring
        start = time.perf_counter()
        result = allocate(
            scenario.requests,
            scenario.chips,
            RULES,
            policy=Policy(strategy),
            quotas=scenario.quotas,
            running=scenario.running,
            now_s=90_000.0,
        )
        best = min(best, time.perf_counter() - start)
        placed = len(result.placements)
    print(
        f"  {strategy.value:8s} placed={placed} proposals={len(result.proposals)} "
        f"waiting={len(result.waiting)} time={best:.3f}s -> {placed / best:,.0f} placements/s"
    )
    return placed, best


# -- quality against the exact optimum ---------------------------------------------


def small_instance(rng: random.Random) -> tuple[list[Chip], list[Request]]:
    """2-4 chips of one type, partly used, and 5-12 requests of one priority."""
    rules = rng.choice(RULES)
    total = _total(rules)
    chips: list[Chip] = []
    for c in range(rng.randint(2, 4)):
        used = Resources(0, 0, 0, 0)
        for _ in range(rng.choice((0, 0, 1, 2))):
            book = booking(rng.choice(_shapes(rules)), total)
            trial = Resources(*(u + b for u, b in zip(used, book, strict=True)))
            if all(t <= cap for t, cap in zip(trial, total, strict=True)):
                used = trial
        chips.append(
            Chip(
                id=f"c{c}",
                node="n",
                common_word=rules.common_word,
                memory=total.memory,
                slots=total.slots,
                ai_core=total.ai_core,
                ai_cpu=total.ai_cpu,
                memory_used=used.memory,
                slots_used=used.slots,
                ai_core_used=used.ai_core,
                ai_cpu_used=used.ai_cpu,
            )
        )
    requests = []
    for i in range(rng.randint(5, 12)):
        memory, template = _random_request_memory(rng, rules)
        requests.append(
            Request(
                f"r{i:02d}",
                rules.common_word,
                memory,
                template,
                0,
                float(rng.randint(0, 100)),
                "q",
            )
        )
    return chips, requests


def optimum(chips: Sequence[Chip], requests: Sequence[Request]) -> int:
    """The most requests that can be placed at once (branch and bound)."""
    rules = {r.common_word: r for r in RULES}
    totals = [Resources(c.memory, c.slots, c.ai_core, c.ai_cpu) for c in chips]
    shapes: list[SliceShape] = []
    for r in requests:
        try:
            shapes.append(
                resolve_shape(
                    rules[r.common_word], memory=r.memory, template=r.template
                )
            )
        except InvalidRequest:
            continue  # invalid requests can never be placed
    # Small shapes first: good solutions come early and tighten the bound.
    shapes.sort(key=lambda s: (s.memory, s.ai_core, s.ai_cpu))
    start = [
        Resources(c.memory_used, c.slots_used, c.ai_core_used, c.ai_cpu_used)
        for c in chips
    ]
    best = 0

    def bound(i: int, used: list[Resources]) -> int:
        # Shapes are sorted by memory: at most as many more as the smallest
        # remaining ones that fit in the total free memory and free slots.
        free_mem = sum(t.memory - u.memory for t, u in zip(totals, used, strict=True))
        free_slots = sum(t.slots - u.slots for t, u in zip(totals, used, strict=True))
        extra = 0
        for s in shapes[i:]:
            if free_mem < s.memory or free_slots < 1:
                break
            free_mem -= s.memory
            free_slots -= 1
            extra += 1
        return extra

    def search(i: int, used: list[Resources], placed: int) -> None:
        nonlocal best
        best = max(best, placed)
        if i == len(shapes) or placed + bound(i, used) <= best:
            return
        seen: set[tuple[Resources, Resources]] = set()
        for k, (t, u) in enumerate(zip(totals, used, strict=True)):
            if (t, u) in seen or not fits(t, u, shapes[i]):
                continue
            seen.add((t, u))  # identical chips are interchangeable
            book = booking(shapes[i], t)
            after = list(used)
            after[k] = Resources(*(a + b for a, b in zip(u, book, strict=True)))
            search(i + 1, after, placed + 1)
        search(i + 1, used, placed)

    search(0, start, 0)
    return best


def optimum_in_order(chips: Sequence[Chip], requests: Sequence[Request]) -> int:
    """The most requests placed when, as the allocator must, each request in
    priority-then-age order is placed whenever some chip fits it; only the
    choice of chip is free (exhaustive search, memoised on the chips' state)."""
    rules = {r.common_word: r for r in RULES}
    shapes: list[SliceShape] = []
    for r in sorted(requests, key=lambda r: (-r.priority, r.submitted_at_s, r.id)):
        try:
            shapes.append(
                resolve_shape(
                    rules[r.common_word], memory=r.memory, template=r.template
                )
            )
        except InvalidRequest:
            continue

    @functools.cache
    def search(i: int, state: tuple[tuple[Resources, Resources], ...]) -> int:
        if i == len(shapes):
            return 0
        best = -1
        for k, (total, used) in enumerate(state):
            if (k and state[k - 1] == state[k]) or not fits(total, used, shapes[i]):
                continue
            after = list(state)
            book = booking(shapes[i], total)
            after[k] = (
                total,
                Resources(*(u + b for u, b in zip(used, book, strict=True))),
            )
            best = max(best, 1 + search(i + 1, tuple(sorted(after))))
        return search(i + 1, state) if best < 0 else best

    start = tuple(
        sorted(
            (
                Resources(c.memory, c.slots, c.ai_core, c.ai_cpu),
                Resources(c.memory_used, c.slots_used, c.ai_core_used, c.ai_cpu_used),
            )
            for c in chips
        )
    )
    return search(0, start)


def measure_quality(
    instances: int, seed: int, strategy: Strategy
) -> tuple[float, float]:
    rng = random.Random(seed)
    ratios, in_order = [], []
    for _ in range(instances):
        chips, requests = small_instance(rng)
        best, best_in_order = (
            optimum(chips, requests),
            optimum_in_order(chips, requests),
        )
        got = len(allocate(requests, chips, RULES, policy=Policy(strategy)).placements)
        if not got <= best_in_order <= best:
            raise RuntimeError(f"inconsistent: {got=} {best_in_order=} {best=}")
        ratios.append(1.0 if best == 0 else got / best)
        in_order.append(1.0 if best_in_order == 0 else got / best_in_order)
    mean, worst = statistics.fmean(ratios), min(ratios)
    print(
        f"  {strategy.value:8s} vs optimum: mean={mean:.4f} worst={worst:.4f} "
        f"below={sum(1 for x in ratios if x < 1)}/{instances}; "
        f"vs same-rules optimum: mean={statistics.fmean(in_order):.4f} "
        f"worst={min(in_order):.4f} below={sum(1 for x in in_order if x < 1)}/{instances}"
    )
    return mean, worst


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__.splitlines()[0] if __doc__ else None
    )
    parser.add_argument(
        "--quick", action="store_true", help="smaller run, under a minute"
    )
    args = parser.parse_args(argv)

    requests, instances, repeat = (1_000, 100, 1) if args.quick else (5_000, 300, 3)
    scenario = reference_scenario(
        seed=20_240_601, nodes=1_000, chips_per_node=8, requests=requests
    )
    print(
        f"speed: {len(scenario.requests)} requests, {len(scenario.chips)} chips, "
        f"{len(scenario.running)} running slices"
    )
    placed, seconds = measure_speed(scenario, Strategy.BINPACK, repeat)
    measure_speed(scenario, Strategy.SPREAD, repeat)
    gc.collect()  # the same clean start as each allocate run
    start = time.perf_counter()
    naive_placed = naive_first_fit(scenario)
    naive_seconds = time.perf_counter() - start
    rate, naive_rate = placed / seconds, naive_placed / naive_seconds
    print(
        f"  naive first-fit placed={naive_placed} time={naive_seconds:.3f}s -> "
        f"{naive_rate:,.0f} placements/s; allocate is {rate / naive_rate:.1f}x faster"
    )

    print(
        f"quality: placed / exact optimum on {instances} small instances "
        "(one priority; the same-rules optimum also serves requests oldest first)"
    )
    mean, worst = measure_quality(instances, seed=7, strategy=Strategy.BINPACK)
    measure_quality(instances, seed=7, strategy=Strategy.SPREAD)
    print(f"placed_per_s={rate:.0f} quality_mean={mean:.4f} quality_worst={worst:.4f}")


if __name__ == "__main__":
    main()
