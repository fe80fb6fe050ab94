"""Property-based tests: random snapshots, checked against a brute-force replay.

The replay walks the result in processing order and rebuilds the state each
request saw (placements, reservations and proposals of the requests before it).
At every step it checks, by brute force, that the outcome was the right one:

- a placement fits now (all four dimensions) and within the quota;
- a request waiting for capacity being freed could not be placed now, and will
  fit its reserved chip once terminating slices and victims are gone;
- a proposal was needed (nothing fits now or once freed) and is the best one
  over every allowed chip and every subset of strictly lower-priority slices;
- a request left waiting could not be placed, reserved or given a proposal.

From these follow the headline properties: no chip or quota is ever
over-committed (also after proposals), a request never waits when it fits,
and a lower-priority request never takes the place of a higher one.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Sequence
from dataclasses import dataclass, field

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from apps.scheduling.allocator import (
    AllocationResult,
    Chip,
    InvalidRequest,
    Placement,
    Policy,
    PreemptionProposal,
    QueueQuota,
    Request,
    RunningSlice,
    SliceShape,
    Strategy,
    Waiting,
    WaitReason,
    allocate,
    resolve_shape,
)
from apps.scheduling.allocator.fit import ZERO, Resources, booking, fits
from apps.scheduling.allocator.policy import chip_key
from tests.scheduling.allocator.builders import BY_WORD, RULES, SLOTS

pytestmark = pytest.mark.slow

NOW_S = 1000.0
# (highest victim priority, victims, seconds lost, chip id, victim ids)
ProposalRank = tuple[int, int, float, str, tuple[str, ...]]
QUEUES = ("a", "b")


@dataclass
class Scenario:
    requests: list[Request]
    chips: list[Chip]
    running: list[RunningSlice]
    quotas: list[QueueQuota]
    policy: Policy

    def run(self) -> AllocationResult:
        return allocate(
            self.requests,
            self.chips,
            RULES,
            policy=self.policy,
            quotas=self.quotas,
            running=self.running,
            now_s=NOW_S,
        )


@st.composite
def scenarios(draw: st.DrawFn) -> Scenario:
    chips: list[Chip] = []
    running: list[RunningSlice] = []
    # Mostly one chip type, so that requests meet chips they can use.
    main, other = draw(st.permutations(sorted(BY_WORD)))
    for i in range(draw(st.integers(1, 6))):
        word = other if draw(st.integers(0, 6)) == 0 else main
        rules = BY_WORD[word]
        total = Resources(
            rules.memory_allocatable, SLOTS[word], rules.ai_core, rules.ai_cpu
        )
        options = [
            resolve_shape(rules, memory=None, template=t.name) for t in rules.templates
        ]
        options.append(resolve_shape(rules, memory=None, template=None))
        used = ZERO
        for k in range(draw(st.integers(0, 5))):
            shape = draw(st.sampled_from(options))
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
                    priority=draw(st.integers(0, 3)),
                    started_at_s=float(draw(st.integers(0, 1000))),
                    queue=draw(st.sampled_from(QUEUES)),
                    namespace="ns",
                    pod=f"p{i}{k}",
                    terminating=draw(st.integers(0, 5)) == 0,
                )
            )
        # usage that no known slice explains (another scheduler's pod, say)
        extra = min(
            draw(st.sampled_from([0, 0, 0, 1000, 3000])), total.memory - used.memory
        )
        chips.append(
            Chip(
                id=f"c{i}",
                node=f"n{i // 2}",
                common_word=word,
                memory=total.memory,
                slots=total.slots,
                ai_core=total.ai_core,
                ai_cpu=total.ai_cpu,
                memory_used=used.memory + extra,
                slots_used=used.slots,
                ai_core_used=used.ai_core,
                ai_cpu_used=used.ai_cpu,
                healthy=draw(st.integers(0, 9)) > 0,
                cordoned=draw(st.integers(0, 9)) == 0,
            )
        )
    chip_ids = [c.id for c in chips]

    requests = []
    for j in range(draw(st.integers(0, 12))):
        word = draw(st.sampled_from([main] * 8 + [other, "Ascend999"]))
        kind = draw(st.sampled_from(["memory", "memory", "template", "whole"]))
        memory = draw(st.integers(0, 26000)) if kind == "memory" else None
        template = None
        if kind == "template" and word in BY_WORD:
            names = [t.name for t in BY_WORD[word].templates]
            template = draw(st.sampled_from([*names, *names, "vir99"]))
        requests.append(
            Request(
                id=f"r{j}",
                common_word=word,
                memory=memory,
                template=template,
                priority=draw(st.integers(0, 4)),
                submitted_at_s=float(draw(st.integers(0, 4))),
                queue=draw(st.sampled_from(QUEUES)),
                allow_preemption=draw(st.integers(0, 4)) > 0,
                pinned_chip=draw(
                    st.sampled_from([None] * 3 * len(chip_ids) + ["ghost", *chip_ids])
                ),
                excluded_chips=frozenset(
                    draw(st.lists(st.sampled_from(chip_ids), max_size=1))
                    if draw(st.integers(0, 4)) == 0
                    else ()
                ),
            )
        )

    quotas = []
    for queue in QUEUES:
        for word in sorted(BY_WORD):
            if draw(st.booleans()):
                continue
            mine = [
                s
                for s in running
                if s.queue == queue
                and s.chip_id in {c.id for c in chips if c.common_word == word}
            ]
            memory_used = sum(s.memory for s in mine)
            quotas.append(
                QueueQuota(
                    queue=queue,
                    common_word=word,
                    memory_limit=draw(
                        st.sampled_from([None, None, memory_used, memory_used + 6144])
                    ),
                    slots_limit=draw(
                        st.sampled_from([None, None, len(mine), len(mine) + 2])
                    ),
                    memory_used=memory_used,
                    slots_used=len(mine),
                )
            )

    policy = Policy(
        strategy=draw(st.sampled_from(list(Strategy))),
        preemption=draw(st.integers(0, 4)) > 0,
        lookahead=draw(st.sampled_from([0, 6])),
    )
    return Scenario(requests, chips, running, quotas, policy)


# -- the brute-force replay --------------------------------------------------------------


def _add(a: Sequence[int], b: Sequence[int]) -> Resources:
    return Resources(*(x + y for x, y in zip(a, b, strict=True)))


def _sub(a: Sequence[int], b: Sequence[int]) -> Resources:
    return Resources(*(x - y for x, y in zip(a, b, strict=True)))


@dataclass
class Replay:
    scenario: Scenario
    chips: dict[str, Chip] = field(init=False)
    now: dict[str, Resources] = field(init=False)
    future: dict[str, Resources] = field(init=False)
    quota_now: dict[tuple[str, str], list[int]] = field(init=False)
    quota_future: dict[tuple[str, str], list[int]] = field(init=False)
    limits: dict[tuple[str, str], tuple[int | None, int | None]] = field(init=False)
    claimed: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        sc = self.scenario
        self.chips = {c.id: c for c in sc.chips}
        self.now = {
            c.id: Resources(c.memory_used, c.slots_used, c.ai_core_used, c.ai_cpu_used)
            for c in sc.chips
        }
        self.future = dict(self.now)
        for s in sc.running:
            if s.terminating:
                self.future[s.chip_id] = _sub(self.future[s.chip_id], self._amounts(s))
        self.limits = {
            (q.queue, q.common_word): (q.memory_limit, q.slots_limit) for q in sc.quotas
        }
        self.quota_now = {
            (q.queue, q.common_word): [q.memory_used, q.slots_used] for q in sc.quotas
        }
        self.quota_future = {k: list(v) for k, v in self.quota_now.items()}
        for s in sc.running:
            key = (s.queue, self.chips[s.chip_id].common_word)
            if s.terminating and key in self.quota_future:
                f = self.quota_future[key]
                f[0], f[1] = max(0, f[0] - s.memory), max(0, f[1] - 1)

    @staticmethod
    def _amounts(s: RunningSlice) -> Resources:
        return Resources(s.memory, 1, s.ai_core, s.ai_cpu)

    def total(self, chip_id: str) -> Resources:
        c = self.chips[chip_id]
        return Resources(c.memory, c.slots, c.ai_core, c.ai_cpu)

    def used(self, chip_id: str) -> Resources:
        return Resources(*map(max, self.now[chip_id], self.future[chip_id]))

    def allowed(self, r: Request) -> list[str]:
        return [
            c.id
            for c in self.scenario.chips
            if c.healthy
            and not c.cordoned
            and c.common_word == r.common_word
            and c.id not in r.excluded_chips
            and (r.pinned_chip is None or r.pinned_chip == c.id)
        ]

    def quota_ok(self, r: Request, shape: SliceShape, *, future_only: bool) -> bool:
        key = (r.queue, r.common_word)
        if key not in self.limits:
            return True
        f = self.quota_future[key]
        used = (
            f
            if future_only
            else [max(a, b) for a, b in zip(self.quota_now[key], f, strict=True)]
        )
        return all(
            limit is None or u + need <= limit
            for u, limit, need in zip(
                used, self.limits[key], (shape.memory, 1), strict=True
            )
        )

    def placeable(self, r: Request, shape: SliceShape) -> list[str]:
        if not self.quota_ok(r, shape, future_only=False):
            return []
        return [c for c in self.allowed(r) if fits(self.total(c), self.used(c), shape)]

    def freeable(self, r: Request, shape: SliceShape) -> list[str]:
        if not self.quota_ok(r, shape, future_only=True):
            return []
        return [
            c for c in self.allowed(r) if fits(self.total(c), self.future[c], shape)
        ]

    def best_proposal(self, r: Request, shape: SliceShape) -> ProposalRank | None:
        key = (r.queue, r.common_word)
        quota_need = [0, 0]
        if key in self.limits:
            f = self.quota_future[key]
            quota_need = [
                0 if limit is None else max(0, u + need - limit)
                for u, limit, need in zip(
                    f, self.limits[key], (shape.memory, 1), strict=True
                )
            ]
        best = None
        for chip_id in self.allowed(r):
            pool = [
                s
                for s in self.scenario.running
                if s.chip_id == chip_id
                and not s.terminating
                and s.id not in self.claimed
                and s.priority < r.priority
            ]
            for size in range(1, len(pool) + 1):
                for victims in itertools.combinations(pool, size):
                    freed = ZERO
                    for s in victims:
                        freed = _add(freed, self._amounts(s))
                    after = _sub(self.future[chip_id], freed)
                    if not fits(self.total(chip_id), after, shape):
                        continue
                    mine = [s for s in victims if s.queue == r.queue]
                    if (
                        sum(s.memory for s in mine) < quota_need[0]
                        or len(mine) < quota_need[1]
                    ):
                        continue
                    rank = (
                        max(s.priority for s in victims),
                        size,
                        sum(NOW_S - s.started_at_s for s in victims),
                        chip_id,
                        tuple(sorted(s.id for s in victims)),
                    )
                    if best is None or rank < best:
                        best = rank
        return best

    def book_quota(self, r: Request, memory: int, *, now: bool) -> None:
        key = (r.queue, r.common_word)
        if key in self.limits:
            self.quota_future[key][0] += memory
            self.quota_future[key][1] += 1
            if now:
                self.quota_now[key][0] += memory
                self.quota_now[key][1] += 1

    def key(self, chip_id: str) -> tuple[int, float, str]:
        used = self.used(chip_id)
        strategy = self.scenario.policy.strategy
        return chip_key(
            strategy, chip_id, self.total(chip_id).memory, used.memory, used.slots
        )

    def place(self, r: Request, shape: SliceShape, got: Placement) -> None:
        book = booking(shape, self.total(got.chip_id))
        assert (got.template, got.memory, got.ai_core, got.ai_cpu) == (
            shape.template,
            book.memory,
            book.ai_core,
            book.ai_cpu,
        )
        self.now[got.chip_id] = _add(self.now[got.chip_id], book)
        self.future[got.chip_id] = _add(self.future[got.chip_id], book)
        self.book_quota(r, book.memory, now=True)

    def reserve(self, r: Request, shape: SliceShape, chip_id: str | None) -> None:
        assert chip_id is not None
        book = booking(shape, self.total(chip_id))
        self.future[chip_id] = _add(self.future[chip_id], book)
        self.book_quota(r, book.memory, now=False)

    def propose(self, r: Request, shape: SliceShape, got: PreemptionProposal) -> None:
        by_id = {s.id: s for s in self.scenario.running}
        for v in got.victims:
            s = by_id[v]
            assert s.chip_id == got.chip_id
            assert s.priority < r.priority
            assert not s.terminating
            assert v not in self.claimed
            self.future[got.chip_id] = _sub(self.future[got.chip_id], self._amounts(s))
            key = (s.queue, r.common_word)
            if key in self.quota_future:
                f = self.quota_future[key]
                f[0], f[1] = max(0, f[0] - s.memory), max(0, f[1] - 1)
        self.claimed.update(got.victims)
        self.reserve(r, shape, got.chip_id)

    def reoffer(
        self,
        chip_id: str,
        passed_over: list[tuple[Request, SliceShape]],
        outcomes: dict[str, Placement | PreemptionProposal | Waiting],
    ) -> list[tuple[Request, SliceShape]]:
        """After a proposal on a chip, earlier waiting requests get its spare room."""
        still = []
        for r, shape in passed_over:
            got = outcomes[r.id]
            if chip_id in self.placeable(r, shape):
                assert isinstance(got, Placement), (r.id, got)
                assert got.chip_id == chip_id
                self.place(r, shape, got)
            elif chip_id in self.freeable(r, shape):
                assert isinstance(got, Waiting), (r.id, got)
                assert got.chip_id == chip_id
                assert got.code is WaitReason.CAPACITY_FREEING
                self.reserve(r, shape, chip_id)
            else:
                still.append((r, shape))
            self.check_bounds()
        return still

    def check_bounds(self) -> None:
        for chip_id in self.chips:
            total = self.total(chip_id)
            for state in (self.now[chip_id], self.future[chip_id]):
                assert all(u <= t for u, t in zip(state, total, strict=True)), (
                    chip_id,
                    state,
                )
                assert all(u >= 0 for u in state), (chip_id, state)
        for key, (memory_limit, slots_limit) in self.limits.items():
            for quota_state in (self.quota_now[key], self.quota_future[key]):
                assert memory_limit is None or quota_state[0] <= memory_limit, key
                assert slots_limit is None or quota_state[1] <= slots_limit, key


def _shape(r: Request) -> SliceShape | None:
    rules = BY_WORD.get(r.common_word)
    if rules is None:
        return None
    try:
        return resolve_shape(rules, memory=r.memory, template=r.template)
    except InvalidRequest:
        return None


def check_result(sc: Scenario, result: AllocationResult) -> None:
    outcomes: dict[str, Placement | PreemptionProposal | Waiting] = {}
    everything: list[Placement | PreemptionProposal | Waiting] = [
        *result.placements,
        *result.proposals,
        *result.waiting,
    ]
    for o in everything:
        assert o.request_id not in outcomes, f"{o.request_id} answered twice"
        outcomes[o.request_id] = o
    assert sorted(outcomes) == sorted(r.id for r in sc.requests), (
        "a request was dropped"
    )

    world = Replay(sc)
    world.check_bounds()
    # Requests that were left waiting when served (chips exist, nothing fitted,
    # no proposal). A later proposal may free room for them; see _reoffer.
    passed_over: list[tuple[Request, SliceShape]] = []
    for r in sorted(sc.requests, key=lambda r: (-r.priority, r.submitted_at_s, r.id)):
        got = outcomes[r.id]
        shape = _shape(r)
        if isinstance(got, Waiting) and got.code is WaitReason.INVALID:
            assert shape is None
            continue
        assert shape is not None
        if isinstance(got, Waiting) and got.code is WaitReason.NO_ELIGIBLE_CHIP:
            assert not world.allowed(r)
            continue
        assert world.allowed(r)
        placeable = world.placeable(r, shape)
        freeable = world.freeable(r, shape)
        may_preempt = sc.policy.preemption and r.allow_preemption
        best = world.best_proposal(r, shape) if may_preempt else None

        if placeable:
            assert isinstance(got, Placement), (r.id, got, placeable)
            assert got.chip_id in placeable
            if sc.policy.strategy is Strategy.SPREAD or sc.policy.lookahead == 0:
                assert got.chip_id == min(placeable, key=world.key), (
                    "not the strategy's chip"
                )
            # A lower-priority (or younger) request never takes a chip that an
            # earlier, waiting request could take at this very moment.
            for earlier, earlier_shape in passed_over:
                assert got.chip_id not in world.placeable(earlier, earlier_shape), (
                    earlier.id
                )
            world.place(r, shape, got)
        elif freeable:
            assert isinstance(got, Waiting), (r.id, got, freeable)
            assert got.code is WaitReason.CAPACITY_FREEING
            assert got.chip_id in freeable
            world.reserve(r, shape, got.chip_id)
        elif best is not None:
            assert isinstance(got, PreemptionProposal), (r.id, got, best)
            max_priority, count, lost, chip_id, victims = best
            assert (got.chip_id, got.victims) == (chip_id, victims)
            assert (got.max_victim_priority, got.lost_seconds) == (max_priority, lost)
            assert len(got.victims) == count
            world.propose(r, shape, got)
            world.check_bounds()
            passed_over = world.reoffer(chip_id, passed_over, outcomes)
        else:
            # Left waiting now; maybe given room later by a proposal.
            passed_over.append((r, shape))
            if isinstance(got, Waiting) and got.code in (
                WaitReason.NO_CAPACITY,
                WaitReason.QUOTA,
            ):
                quota_blocked = not world.quota_ok(r, shape, future_only=True)
                assert got.code is (
                    WaitReason.QUOTA if quota_blocked else WaitReason.NO_CAPACITY
                )
                assert got.reason
        world.check_bounds()

    for r, _ in passed_over:
        assert isinstance(outcomes[r.id], Waiting), f"{r.id} was never offered its room"


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sc=scenarios())
def test_every_outcome_is_right_for_the_state_it_saw(sc: Scenario) -> None:
    check_result(sc, sc.run())


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sc=scenarios(), seed=st.integers(0, 2**32 - 1))
def test_same_input_same_output_whatever_the_order(sc: Scenario, seed: int) -> None:
    expected = sc.run()
    rng = random.Random(seed)
    shuffled = Scenario(
        rng.sample(sc.requests, len(sc.requests)),
        rng.sample(sc.chips, len(sc.chips)),
        rng.sample(sc.running, len(sc.running)),
        rng.sample(sc.quotas, len(sc.quotas)),
        sc.policy,
    )

    assert shuffled.run() == expected
    assert sc.run() == expected


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sc=scenarios())
def test_victims_always_have_strictly_lower_priority(sc: Scenario) -> None:
    result = sc.run()
    priority = {r.id: r.priority for r in sc.requests}
    running = {s.id: s for s in sc.running}

    seen: set[str] = set()
    for p in result.proposals:
        assert p.victims
        for v in p.victims:
            assert running[v].priority < priority[p.request_id]
            assert running[v].chip_id == p.chip_id
            assert not running[v].terminating
            assert v not in seen
            seen.add(v)
