"""Allocation under concurrency: passes at once never book the same room twice.

Run on SQLite (IMMEDIATE transactions serialise writers) and on PostgreSQL
(``DATABASE_URL=postgres://...``: the cluster row lock serialises passes).
Each thread has its own database connection, as two workers would.
"""

from __future__ import annotations

import threading
import time

import pytest
from django.db import connection

from apps.scheduling.choices import RequestState
from apps.scheduling.models import Request, Reservation
from apps.scheduling.passes import scheduling_pass
from apps.scheduling.services import allocations

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("no_auto_pass"),
]


def _in_threads(target, args_list):
    barrier = threading.Barrier(len(args_list))
    errors: list[BaseException] = []
    results: list = [None] * len(args_list)

    def run(index, *args):
        try:
            barrier.wait(timeout=10)
            results[index] = target(*args)
        except BaseException as exc:  # reported in the main thread
            errors.append(exc)
        finally:
            connection.close()

    threads = [
        threading.Thread(target=run, args=(i, *args))
        for i, args in enumerate(args_list)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not errors, errors
    return results


@pytest.fixture
def slow_snapshot(monkeypatch):
    """Widen the window between reading usage and booking, where a race would bite."""
    real = allocations.build_snapshot

    def slow(*args, **kwargs):
        snap = real(*args, **kwargs)
        # A fixed stretch on purpose: nothing to wait for, the point is a wide
        # window in which the other workers run (a barrier here would deadlock
        # against the lock that serialises the passes).
        time.sleep(0.3)
        return snap

    monkeypatch.setattr(allocations, "build_snapshot", slow)


def test_concurrent_allocations_of_different_requests_never_double_book(
    world, operator, fake_ops, slow_snapshot
):
    # given one 310P chip with room for exactly three vir02 (3 x 6144 of 21527 MB),
    # and six requests, each allocated by its own "worker" at the same moment
    (chip,) = world.chips("Ascend310P", 1)
    ids = [world.request(operator, template="vir02", memory=None).pk for _ in range(6)]

    outcomes = _in_threads(
        lambda pk: allocations.allocation_create(
            cluster_id=world.cluster.pk, request_ids=[pk]
        ),
        [(pk,) for pk in ids],
    )

    # then exactly three got room, each once, and the chip is not over-booked
    reserved = sorted(pk for o in outcomes for pk in o.reserved)
    assert len(reserved) == 3
    assert len(set(reserved)) == 3
    rows = Reservation.objects.filter(chip=chip)
    assert rows.count() == 3
    assert sum(r.memory for r in rows) <= chip.memory
    assert Request.objects.filter(state=RequestState.RESERVED).count() == 3


def test_concurrent_full_passes_never_double_book(
    world, operator, fake_ops, slow_snapshot
):
    # given two chips with room for 3 vir02 each and 10 requests
    world.chips("Ascend310P", 2)
    for _ in range(10):
        world.request(operator, template="vir02", memory=None)

    # when four workers run a pass at the same moment (the lock lets one through;
    # the others find it busy or run after it)
    reports = _in_threads(lambda: scheduling_pass(world.cluster.pk), [()] * 4)

    assert any(r is not None for r in reports)
    per_chip: dict[int, int] = {}
    for r in Reservation.objects.all():
        per_chip[r.chip_id] = per_chip.get(r.chip_id, 0) + 1
    assert sorted(per_chip.values()) == [3, 3]
    admitted = Request.objects.filter(state=RequestState.ADMITTED)
    assert admitted.count() == 6
    # one pod per admitted request, never two
    created = [c for c in fake_ops.calls if c[0] == "create_pod"]
    assert len(created) == len({c[2] for c in created}) == 6


def test_a_pass_asked_for_while_one_runs_is_run_by_it(world, operator, fake_ops):
    """A pass that found the lock taken did nothing, and what it was asked
    for waited for the next beat: where nothing beats (the browser tests'
    portal) a request stayed admitted with its pod running."""
    world.chips("Ascend310P", 1)
    first = world.request(operator, template="vir02", memory=None)
    in_admission, go_on = threading.Event(), threading.Event()
    create_pod = fake_ops.create_pod

    def create_pod_held(namespace, body):
        if not in_admission.is_set():  # the first pass waits here, lock held
            in_admission.set()
            assert go_on.wait(30)
        return create_pod(namespace, body)

    fake_ops.create_pod = create_pod_held
    reports: list = []

    def run_first_pass() -> None:
        try:
            reports.append(scheduling_pass(world.cluster.pk))
        finally:
            connection.close()

    # given a pass that is creating a pod (outside any transaction)
    runner = threading.Thread(target=run_first_pass)
    runner.start()
    assert in_admission.wait(30)
    # when a request comes in and its pass finds the lock taken
    second = world.request(operator, template="vir02", memory=None)
    assert scheduling_pass(world.cluster.pk) is None
    go_on.set()
    runner.join(timeout=60)
    # then the running pass ran once more for it: both requests are admitted
    assert not runner.is_alive()
    assert len(reports) == 1
    assert reports[0] is not None
    assert reports[0].admitted == [second.pk]
    states = dict(
        Request.objects.filter(pk__in=[first.pk, second.pk]).values_list("pk", "state")
    )
    assert states == {
        first.pk: RequestState.ADMITTED,
        second.pk: RequestState.ADMITTED,
    }
