"""Faults on the real control plane: nothing lost, nothing done twice, fresh again soon.

Each test injects one fault into the real stack while the portal works (sync
and beat in threads, or a worker process killed with SIGKILL) and the cluster
keeps changing (slice pods created and deleted by a churn thread), then counts
from the database and the cluster:

- requests lost (not Running with exactly one pod in the end);
- requests placed twice (more than one live pod of one request);
- pods orphaned (a pod of the portal whose request does not hold it);
- reservations stuck (a Reservation whose request no longer books room);
- ConfigMap writes lost (the edit is not live) or doubled (more writes than
  edits, counted by etcd itself, so a write whose answer never came back counts);
- seconds until the dashboard is fresh again: the sync state OK, the ledger
  equal to HAMi's accounting of the cluster, the device config equal to the
  live one. Aim: within one resync period (the beat's sync interval).

The figures go to the table printed at the end of the run (``figures.py``).
Issue 14 (Volcano binding onto a terminating victim's room) is not provoked
here: no preemption, and requests go to the 310P node, whose chips are healthy.
"""

from __future__ import annotations

import contextlib
import itertools
import signal
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
from django.conf import settings
from django.db import connection

from apps.audit.models import AuditEvent
from apps.common.exceptions import Conflict, ValidationFailed
from apps.inventory.choices import DeviceConfigSource, SyncState
from apps.inventory.deviceconfig.publishing import deviceconfig_publish
from apps.inventory.deviceconfig.selectors import deviceconfig_latest
from apps.inventory.hami.deviceconfig import parse_device_config
from apps.inventory.models import Cluster, DeviceConfigVersion, SyncCursor
from apps.scheduling.choices import HOLDING_STATES, RequestState
from apps.scheduling.models import Request, Reservation
from apps.scheduling.pods import LABEL_REQUEST
from apps.scheduling.services.requests import request_create
from harness.portal import Running, keep_follow_ups_queued
from kubestack.scenarios import slice_pod
from tests.faults.test_worker_killed import RUN_TASK, spawn
from tests.polling import seconds_until, wait_for
from tests.realstack import test_templates
from tests.realstack.accounting import portal_usage, usage_by_uuid
from tests.realstack.figures import FaultFigures, add

pytestmark = [
    pytest.mark.realstack,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
]

ASCEND = ("Ascend310P", "Ascend910B4")
# The ConfigMap, and Volcano and the device plugin, put back after a publish test.
restored_device_config = test_templates.restored_device_config
CM_NS, CM_NAME, CM_KEY = "kube-system", "hami-scheduler-device", "device-config.yaml"
CHURN_LABEL = "kubestack-churn"
# A publish worker killed right after its PUT returned, before it recorded
# anything: the worst moment (the write is live, the portal does not know).
# The PUT is wrapped here, in the worker, so that the publish code needs no hook.
PUBLISH_KILLED_AFTER_PUT = """
import os, signal, sys
import django
django.setup()
from apps.inventory.deviceconfig import guarded_write, publishing
from apps.inventory.models import Cluster
put = guarded_write._put
def put_then_die(*args, **kwargs):
    put(*args, **kwargs)
    os.kill(os.getpid(), signal.SIGKILL)
guarded_write._put = put_then_die
publishing.deviceconfig_publish(
    cluster=Cluster.objects.get(pk=int(sys.argv[1])), actor=None, reason="killed after PUT"
)
"""


def resync_seconds() -> float:
    """One resync period: how often beat restarts every cluster's watches."""
    return float(settings.CELERY_BEAT_SCHEDULE["sync-all-clusters"]["schedule"])


# --- the cluster keeps changing -----------------------------------------------------


class Churn:
    """Slice pods created and deleted in a thread, at most ``alive`` at once.

    API errors (the server is down) are counted and ignored: the churn goes on.
    """

    def __init__(self, kube_stack: Any, alive: int = 2, every: float = 0.7) -> None:
        from kubernetes import client

        self.core = client.CoreV1Api(kube_stack.kubernetes_client())
        self.alive = alive
        self.every = every
        self.stop = threading.Event()
        self.created = 0
        self.deleted = 0
        self.errors = 0
        self._names: list[str] = []
        self._counter = itertools.count()

    def _step(self) -> None:
        name = f"churn-{time.monotonic_ns() % 10**9}-{next(self._counter)}"
        pod = slice_pod(name, "Ascend310P", 3072, "batch-low")
        pod["metadata"]["labels"]["role"] = CHURN_LABEL
        self.core.create_namespaced_pod("default", pod)
        self._names.append(name)
        self.created += 1
        while len(self._names) > self.alive:
            self.core.delete_namespaced_pod(
                self._names.pop(0), "default", grace_period_seconds=0
            )
            self.deleted += 1

    def _run(self) -> None:
        while not self.stop.wait(self.every):
            try:
                self._step()
            except Exception:  # the API server may be down: go on
                self.errors += 1

    @contextlib.contextmanager
    def running(self) -> Iterator[Churn]:
        thread = threading.Thread(target=self._run, daemon=True)
        self.stop.clear()
        thread.start()
        try:
            yield self
        finally:
            self.stop.set()
            thread.join(timeout=30)


@pytest.fixture
def churn(kube_stack) -> Iterator[Churn]:
    churner = Churn(kube_stack)
    yield churner
    kube_stack.force_delete_pods("default", f"role={CHURN_LABEL}")


@pytest.fixture(scope="module")
def watch_cache_restored(kube_stack) -> Iterator[None]:
    """The tests may turn the API server's watch cache off; the next modules get it back."""
    yield
    if not kube_stack.watch_cache:
        kube_stack.restart_apiserver(watch_cache=True)


@pytest.fixture
def tasks_stay_queued(monkeypatch) -> list[tuple[Any, ...]]:
    """Submissions enqueue their pass instead of running it inline: the killed
    worker is the one to run it."""
    return keep_follow_ups_queued(monkeypatch)


# --- counting -----------------------------------------------------------------------


def _submit(operator, n: int, tag: str) -> list[int]:
    return [
        request_create(
            actor=operator,
            cluster="real",
            namespace="default",
            chip_type="Ascend310P",
            memory=3072,
            priority="batch-medium",
            workload={"image": "busybox", "command": ["sleep", "3600"]},
            idempotency_key=f"fault-{tag}-{i}",
        )[0].pk
        for i in range(n)
    ]


def _live_pods_by_request(core) -> tuple[Counter[int], list[Any]]:
    pods = [
        p
        for p in core.list_pod_for_all_namespaces(label_selector=LABEL_REQUEST).items
        if p.metadata.deletion_timestamp is None
    ]
    return Counter(int(p.metadata.labels[LABEL_REQUEST]) for p in pods), pods


def _all_running(ids: list[int], core) -> bool:
    counts, _ = _live_pods_by_request(core)
    states = dict(Request.objects.filter(pk__in=ids).values_list("pk", "state"))
    return all(states[i] == RequestState.RUNNING and counts[i] == 1 for i in ids)


def _converge(ids: list[int], core, timeout: float) -> float | None:
    """Seconds until every request runs with one pod, or None after ``timeout``."""
    return seconds_until(lambda: _all_running(ids, core), timeout, 0.3)


def _request_figures(cluster, core, ids: list[int]) -> dict[str, int]:
    """lost, doubled, orphaned, stuck: from the database and the cluster."""
    counts, pods = _live_pods_by_request(core)
    requests = {
        r.pk: r
        for r in Request.objects.filter(cluster=cluster).only("state", "pod_name")
    }
    lost = sum(
        1 for i in ids if requests[i].state != RequestState.RUNNING or counts[i] == 0
    )
    doubled = sum(n - 1 for n in counts.values() if n > 1)
    orphaned = 0
    for pod in pods:
        owner = requests.get(int(pod.metadata.labels[LABEL_REQUEST]))
        if (
            owner is None
            or owner.state not in HOLDING_STATES
            or owner.pod_name != pod.metadata.name
        ):
            orphaned += 1
    stuck = (
        Reservation.objects.filter(cluster=cluster)
        .exclude(request__state__in=[RequestState.RESERVED, RequestState.ADMITTED])
        .count()
    )
    return {"lost": lost, "doubled": doubled, "orphaned": orphaned, "stuck": stuck}


def _explain(cluster, core, ids: list[int]) -> str:
    """The requests and their pods as the portal and the cluster show them."""
    lines = [
        f"request {r.pk}: {r.state} ({r.reason}) pod={r.pod_name}"
        for r in Request.objects.filter(pk__in=ids)
    ]
    for pod in core.list_pod_for_all_namespaces(label_selector=LABEL_REQUEST).items:
        annotations = pod.metadata.annotations or {}
        lines.append(
            f"pod {pod.metadata.name}: {pod.status.phase} node={pod.spec.node_name} "
            f"bind-phase={annotations.get('hami.io/bind-phase')} "
            f"deleting={pod.metadata.deletion_timestamp is not None}"
        )
    return "\n".join(lines)


def _awaiting_an_answer(thread: threading.Thread) -> bool:
    """Whether ``thread`` has sent an HTTP request and waits for the answer
    (``http.client``, under urllib3, reads the status line)."""
    frame = sys._current_frames().get(thread.ident or 0)
    while frame is not None:
        if frame.f_code.co_name == "_read_status":
            return True
        frame = frame.f_back
    return False


def _live_text(core) -> str:
    return core.read_namespaced_config_map(CM_NAME, CM_NS).data[CM_KEY]


def _fresh(cluster, core) -> bool:
    """What the dashboard shows equals the cluster (see the module doc)."""
    state = Cluster.objects.filter(pk=cluster.pk).values_list("sync_state", flat=True)
    if state.first() != SyncState.OK:
        return False
    if portal_usage(cluster) != usage_by_uuid(core, ASCEND):
        return False
    latest = deviceconfig_latest(cluster)
    return latest is not None and latest.text == _live_text(core)


def _seconds_to_fresh(cluster, core, since: float) -> float:
    """Seconds from ``since`` until fresh; infinity if not within two resync periods."""
    took = seconds_until(
        lambda: _fresh(cluster, core),
        2 * resync_seconds(),
        0.3,
        since=since,
        ignore=(Exception,),  # a read may fail while things recover
    )
    return float("inf") if took is None else took


def _wait_watching(cluster) -> None:
    """Every watcher of the portal has reported success since now."""
    started = time.time()

    def watching() -> bool:
        cursors = list(SyncCursor.objects.filter(cluster=cluster))
        return bool(cursors) and all(
            c.last_success_at and c.last_success_at.timestamp() > started
            for c in cursors
        )

    wait_for(watching, "every watcher to report", timeout=30)


def _cursors(cluster) -> str:
    """Each watcher's resume point and health, for a failure message."""
    return "\n".join(
        f"{c.resource}: rv={c.resource_version} relists={c.relists} "
        f"restarts={c.restarts} success={c.last_success_at} "
        f"error={c.last_error_at} {c.last_error[:200]!r}"
        for c in SyncCursor.objects.filter(cluster=cluster).order_by("resource")
    )


def _cursor_sum(cluster, field: str) -> int:
    return sum(SyncCursor.objects.filter(cluster=cluster).values_list(field, flat=True))


def _finish(
    fault: str,
    cluster,
    core,
    ids: list[int],
    fresh_seconds: float,
    *,
    cm: tuple[int, int] | None = None,
    note: str = "",
    converge_timeout: float = 60,
) -> FaultFigures:
    """Wait for the requests, count, add the row, then check the aim."""
    ran_in = _converge(ids, core, converge_timeout) if ids else 0.0
    # Volcano leaves its node lock behind when a pod vanishes under its
    # device write (the churn deletes pods); the portal releases it.
    locks = AuditEvent.objects.filter(
        cluster=cluster, action="node.lock_release"
    ).count()
    figures = FaultFigures(
        fault=fault,
        requests=len(ids),
        **_request_figures(cluster, core, ids),
        cm_lost=cm[0] if cm else None,
        cm_doubled=cm[1] if cm else None,
        fresh_seconds=fresh_seconds,
        note="; ".join(
            part
            for part in (
                note,
                f"{locks} leaked Volcano node lock(s) released" if locks else "",
                f"all running {ran_in:.0f} s after fresh" if ids and ran_in else "",
            )
            if part
        ),
    )
    add(figures)
    assert (figures.lost, figures.doubled, figures.orphaned, figures.stuck) == (
        0,
        0,
        0,
        0,
    ), f"{figures}\n{_explain(cluster, core, ids)}"
    if cm is not None:
        assert cm == (0, 0), figures
    assert fresh_seconds <= resync_seconds(), figures
    # A restarting API server answers 404 for Volcano's CRDs until it has
    # loaded them: the Queues never count as "not served" (and emptied) for it.
    assert SyncCursor.objects.get(cluster=cluster, resource="volcano-queues").served, (
        _cursors(cluster)
    )
    return figures


# --- the API server and etcd ----------------------------------------------------------


def test_apiserver_restarted_mid_watch_and_mid_admission(
    kube_stack, kube_core, real_cluster, operator, cleanup, churn, watch_cache_restored
):
    with Running(real_cluster), churn.running():
        _wait_watching(real_cluster)
        ids = _submit(operator, 1, "api-before")  # its pod is made before the stop
        kube_stack.stop_apiserver(hard=True)
        stopped = time.monotonic()
        # submitted while the server is down: room booked, pods not creatable yet
        down = _submit(operator, 2, "api-down")
        ids += down

        def reserved_now() -> int:
            return Request.objects.filter(
                pk__in=down, state=RequestState.RESERVED
            ).count()

        wait_for(
            lambda: reserved_now() == 2,
            lambda: (
                f"both requests reserved while the server is down; {reserved_now()}"
            ),
            timeout=60,
        )
        reserved = reserved_now()
        # and the outage lasts its 2 s (the figure's name) however soon that was
        time.sleep(max(0.0, 2 - (time.monotonic() - stopped)))
        kube_stack.start_apiserver()
        churn.stop.set()
        since = time.monotonic()  # the fault is over
        fresh = _seconds_to_fresh(real_cluster, kube_core, since)
        figures = _finish(
            "kube-apiserver killed mid-watch, 2 s down",
            real_cluster,
            kube_core,
            ids,
            fresh,
            note=f"{reserved} request(s) reserved while it was down; "
            f"{_cursor_sum(real_cluster, 'relists')} relist(s)",
        )
    assert reserved == 2, figures  # the outage was met, not missed


def test_etcd_compaction_gives_the_watches_a_real_410_and_sync_lists_again(
    kube_stack, kube_core, real_cluster, operator, cleanup, churn, watch_cache_restored
):
    if kube_stack.watch_cache:
        # With its watch cache the API server answers old resourceVersions
        # from memory: a compaction would never reach the portal as a 410.
        kube_stack.restart_apiserver(watch_cache=False)
    with Running(real_cluster):
        _wait_watching(real_cluster)
        relists_before = _cursor_sum(real_cluster, "relists")
        with churn.running():
            ids = _submit(operator, 2, "compact")
            # a fixed stretch on purpose: the cluster changes (churn, the two
            # requests placed) for a while, so the compaction lands mid-traffic
            time.sleep(1.5)
            revision = kube_stack.etcd_compact()
            since = time.monotonic()

        def past_the_compaction() -> bool:
            """every watcher resumed past the compacted revision"""
            versions = SyncCursor.objects.filter(cluster=real_cluster).values_list(
                "resource_version", flat=True
            )
            return all(int(v or 0) >= revision for v in versions)

        # A watch reconnects every watch_timeout (5 s in Running): a quiet
        # stream then asks for a compacted revision and gets 410 Gone.
        try:
            wait_for(past_the_compaction, timeout=30)
        except AssertionError as behind:
            raise AssertionError(
                f"{behind} ({revision}); the cursors:\n{_cursors(real_cluster)}"
            ) from None
        fresh = _seconds_to_fresh(real_cluster, kube_core, since)
        relists = _cursor_sum(real_cluster, "relists") - relists_before
        figures = _finish(
            "etcd compacted (watch cache off)",
            real_cluster,
            kube_core,
            ids,
            fresh,
            note=f"{relists} relist(s) after a real 410",
        )
    assert relists >= 1, figures  # a real 410 was met and answered by a list


# --- Volcano ------------------------------------------------------------------------


def test_volcano_restarted_while_requests_are_pending(
    kube_stack, kube_core, real_cluster, operator, cleanup, churn
):
    """The restarted scheduler never binds the pods pending across its restart
    (it calls the queue overused); the portal's bind timeout (one resync
    period) recreates them, and new pods are bound."""
    with Running(real_cluster), churn.running():
        _wait_watching(real_cluster)
        # Frozen first, so the pods are surely created and unbound when it dies.
        with (
            kube_stack.paused("vc-scheduler"),
            kube_stack.paused("vc-controller-manager"),
        ):
            ids = _submit(operator, 3, "volcano")
            wait_for(
                lambda: (
                    Request.objects.filter(
                        pk__in=ids, state=RequestState.ADMITTED
                    ).count()
                    == len(ids)
                ),
                "the pods to be created",
                timeout=20,
            )
            kube_stack.restart_volcano(hard=True)
        churn.stop.set()
        since = time.monotonic()
        fresh = _seconds_to_fresh(real_cluster, kube_core, since)
        _finish(
            "Volcano scheduler + controller killed, pods pending",
            real_cluster,
            kube_core,
            ids,
            fresh,
            note=f"pods recreated after the {settings.REQUEST_BIND_TIMEOUT_SECONDS} s "
            "bind timeout",
            # the bind timeout, then Volcano's binding of the new pods
            converge_timeout=settings.REQUEST_BIND_TIMEOUT_SECONDS + 30,
        )


# --- the portal's worker killed -----------------------------------------------------


def test_sync_worker_killed_after_applying_a_batch(
    kube_stack, kube_core, real_cluster, operator, cleanup, churn
):
    ids = _submit(operator, 2, "sync")
    with churn.running():
        worker = spawn(
            RUN_TASK,
            "apps.inventory.tasks.sync_cluster_task",
            str(real_cluster.pk),
            SYNC_TASK_SECONDS="60",
            VNPU_PORTAL_CRASH_AT="after_sync_batch",
        )
        assert worker.wait(timeout=60) == -signal.SIGKILL, worker.stdout.read()
        time.sleep(2)  # fixed on purpose: no worker while the cluster changes
    restarts_before = _cursor_sum(real_cluster, "restarts")
    since = time.monotonic()  # the redelivered task starts
    with Running(real_cluster):
        fresh = _seconds_to_fresh(real_cluster, kube_core, since)
        figures = _finish(
            "worker killed: sync (after a batch)",
            real_cluster,
            kube_core,
            ids,
            fresh,
            note="measured from the replacement's start",
        )
    # it resumed from the stored resourceVersions (replaying the dead batch)
    assert _cursor_sum(real_cluster, "restarts") > restarts_before, figures


@pytest.mark.parametrize(
    ("point", "kind"),
    [("after_reserve", "allocation pass"), ("after_pod_create", "admission")],
)
def test_scheduling_worker_killed(
    point,
    kind,
    kube_stack,
    kube_core,
    real_cluster,
    operator,
    cleanup,
    churn,
    tasks_stay_queued,
):
    ids = _submit(operator, 3, point)
    with churn.running():
        worker = spawn(
            RUN_TASK,
            "apps.scheduling.tasks.allocate_cluster_task",
            str(real_cluster.pk),
            VNPU_PORTAL_CRASH_AT=point,
        )
        assert worker.wait(timeout=60) == -signal.SIGKILL, worker.stdout.read()
        reserved = Request.objects.filter(
            pk__in=ids, state=RequestState.RESERVED
        ).count()
        pods_at_kill = sum(_live_pods_by_request(kube_core)[0].values())
        time.sleep(1.5)  # fixed on purpose: no worker while the cluster changes
    since = time.monotonic()
    with Running(real_cluster):
        fresh = _seconds_to_fresh(real_cluster, kube_core, since)
        figures = _finish(
            f"worker killed: {kind} ({point})",
            real_cluster,
            kube_core,
            ids,
            fresh,
            note=f"{reserved} reserved, {pods_at_kill} pod(s) at the kill",
        )
    assert reserved >= 1, figures  # killed after the reservation committed
    assert (pods_at_kill >= 1) == (point == "after_pod_create"), figures


# --- publishing -----------------------------------------------------------------------


def _310p_templates(text: str) -> dict[str, int]:
    return {
        t.name: t.memory
        for ct in parse_device_config(text).chip_types()
        if ct.common_word == "Ascend310P"
        for t in ct.templates
    }


def _publish_again(cluster, actor) -> str:
    """What a user's retry gets: published, drift (409) or no_change (400)."""
    try:
        deviceconfig_publish(cluster=cluster, actor=actor, reason="retry after a fault")
    except Conflict as exc:
        return f"409 {exc.code}"
    except ValidationFailed as exc:
        return f"400 {exc.code}"
    return "published"


def _publish_figures(
    kube_stack, kube_core, cluster, writes_before: int, edits: int
) -> tuple[tuple[int, int], str]:
    """(CM writes lost, doubled) for ``edits`` edits, and whether they were recorded."""
    live = _live_text(kube_core)
    writes = kube_stack.etcd_object_writes("configmaps", CM_NS, CM_NAME) - writes_before
    lost = 0 if _310p_templates(live).get("vir02") == 5120 else 1
    recorded = DeviceConfigVersion.objects.filter(
        cluster=cluster, source=DeviceConfigSource.PUBLISHED, text=live
    ).exists()
    return (lost, max(0, writes - edits)), (
        f"{writes} write(s) in etcd; the live text "
        + ("is recorded as published" if recorded else "is not recorded as published")
    )


def _retry_and_record(
    fault, kube_stack, kube_core, cluster, actor, churn, writes_before, note=""
) -> tuple[str, str]:
    """After a publish fault: a user's retry, then the fault's row of figures.

    Returns what the retry got (published, 409 drift, 400 no_change) and
    what became of the write (recorded as published or not).
    """
    retry = _publish_again(cluster, actor)
    churn.stop.set()
    fresh = _seconds_to_fresh(cluster, kube_core, time.monotonic())
    cm, figures = _publish_figures(
        kube_stack, kube_core, cluster, writes_before, edits=1
    )
    _finish(
        fault,
        cluster,
        kube_core,
        [],
        fresh,
        cm=cm,
        note=f"{note}retry: {retry}; {figures}",
    )
    return retry, figures


@pytest.mark.usefixtures("restored_device_config")
def test_publish_worker_killed_after_its_write(
    kube_stack,
    kube_core,
    real_cluster,
    admin_user,
    cleanup,
    churn,
):
    test_templates._vir02(real_cluster, 5120, admin_user)
    writes_before = kube_stack.etcd_object_writes("configmaps", CM_NS, CM_NAME)
    with Running(real_cluster), churn.running():
        _wait_watching(real_cluster)
        worker = spawn(PUBLISH_KILLED_AFTER_PUT, str(real_cluster.pk))
        assert worker.wait(timeout=60) == -signal.SIGKILL, worker.stdout.read()
        retry, note = _retry_and_record(
            "worker killed: publish (after its PUT)",
            kube_stack,
            kube_core,
            real_cluster,
            admin_user,
            churn,
            writes_before,
        )
    # The portal recorded what it was about to write: the retry finds its own
    # write live, records it as published and is not refused as drift.
    assert not retry.startswith("409"), retry
    assert "is recorded as published" in note, note


@pytest.mark.usefixtures("restored_device_config")
def test_apiserver_killed_mid_publish(
    kube_stack,
    kube_core,
    real_cluster,
    admin_user,
    cleanup,
    churn,
    watch_cache_restored,
    monkeypatch,
):
    from apps.inventory.deviceconfig import guarded_write

    test_templates._vir02(real_cluster, 5120, admin_user)
    writes_before = kube_stack.etcd_object_writes("configmaps", CM_NS, CM_NAME)
    at_put, go = threading.Event(), threading.Event()
    put = guarded_write._put

    def put_when_told(*args: Any, **kwargs: Any) -> str:
        at_put.set()
        go.wait(30)
        return put(*args, **kwargs)

    monkeypatch.setattr(guarded_write, "_put", put_when_told)
    outcome: list[str] = []

    def publish() -> None:
        try:
            deviceconfig_publish(
                cluster=real_cluster, actor=admin_user, reason="mid-publish fault"
            )
            outcome.append("published")
        except Exception as exc:  # what the caller would have seen
            outcome.append(type(exc).__name__)
        finally:
            connection.close()

    with Running(real_cluster), churn.running():
        _wait_watching(real_cluster)
        publisher = threading.Thread(target=publish, daemon=True)
        publisher.start()
        assert at_put.wait(30), "the publish never reached its PUT"
        # etcd frozen: the API server takes the PUT and waits on etcd, and dies so
        with kube_stack.paused("etcd"):
            go.set()
            wait_for(
                lambda: _awaiting_an_answer(publisher),
                "the publish's PUT to be sent",
                timeout=30,
                interval=0.05,
            )
            # What the API server does with it is not visible from here: a
            # moment for it to pass the write on to (frozen) etcd.
            time.sleep(0.5)
            kube_stack.stop_apiserver(hard=True)
        publisher.join(timeout=60)
        kube_stack.start_apiserver()
        monkeypatch.setattr(guarded_write, "_put", put)
        _retry_and_record(
            "kube-apiserver killed mid-publish (etcd frozen)",
            kube_stack,
            kube_core,
            real_cluster,
            admin_user,
            churn,
            writes_before,
            note=f"publish: {outcome[0] if outcome else 'hung'}; ",
        )
