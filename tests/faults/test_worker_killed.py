"""A worker killed in the middle of each kind of task: nothing lost, nothing done twice.

The "worker" is a real process running the task's function on the test
database and the simulated cluster; it is killed with SIGKILL (no cleanup, no
acknowledgement) at a point of the task: a crash hook of the scheduling code
(``VNPU_PORTAL_CRASH_AT``), or while its call to the API server is in flight
(simcluster delays the call; the server still carries it out after the
client died, the worst case). Then the task runs again, as a redelivered or
re-enqueued task would, and the end state is checked.

Kinds: sync (list and watch), allocation (reservation committed, no pod yet),
admission (pod created, not recorded), eviction (Eviction API call in
flight), publish (ConfigMap PUT in flight).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.db import connection
from kubernetes import client
from kubernetes.client.rest import ApiException

from apps.inventory.models import Chip, DeviceConfigVersion, Slice, Template
from apps.inventory.sync.engine import sync_once, sync_run
from apps.scheduling.choices import ProposalState, RequestState
from apps.scheduling.models import PreemptionProposal, Request, Reservation
from apps.scheduling.passes import scheduling_pass
from apps.scheduling.services.requests import request_create
from harness.portal import keep_follow_ups_queued
from tests.faults.figures import record_and_check
from tests.polling import wait_for

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]
ROOT = Path(__file__).resolve().parents[2]
RUN_TASK = """
import sys
import django
django.setup()
from importlib import import_module
module, name = sys.argv[1].rsplit(".", 1)
getattr(import_module(module), name)(*[int(a) for a in sys.argv[2:]])
"""
PUBLISH = """
import sys
import django
django.setup()
from apps.inventory.models import Cluster
from apps.inventory.deviceconfig.publishing import deviceconfig_publish
deviceconfig_publish(cluster=Cluster.objects.get(pk=int(sys.argv[1])), actor=None, reason="killed mid-PUT")
"""


def _database_url() -> str:
    db = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{db['NAME']}"
    user = db["USER"] + (f":{db['PASSWORD']}" if db.get("PASSWORD") else "")
    return f"postgres://{user}@{db.get('HOST') or '127.0.0.1'}:{db.get('PORT') or 5432}/{db['NAME']}"


def spawn(code: str, *args: str, **env: str) -> subprocess.Popen[str]:
    """A worker process on the test database (settings.test: tasks it enqueues run inline)."""
    return subprocess.Popen(
        [sys.executable, "-c", code, *args],
        cwd=ROOT,
        env={
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "vnpuportal.settings.test",
            "DATABASE_URL": _database_url(),
            "LOCK_DIR": settings.LOCK_DIR,
            **env,
        },
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def kill_when(
    process: subprocess.Popen[str], ready: Callable[[], bool], timeout: float = 30
) -> None:

    def at_the_kill_point() -> bool:
        if ready():
            return True
        if process.poll() is not None:
            pytest.fail(
                f"the worker ended before the kill point:\n{process.stdout.read()}"
            )
        return False

    try:
        # polled often: the kill must land right at the point
        wait_for(at_the_kill_point, "the kill point", timeout, interval=0.02)
    except AssertionError:
        process.kill()
        raise
    os.kill(process.pid, signal.SIGKILL)
    process.wait(timeout=10)


def _in_flight(
    sim, verb: str, resource: str, subresource: str = ""
) -> Callable[[], bool]:
    def seen() -> bool:
        return any(
            e.verb == verb and e.resource == resource and e.subresource == subresource
            for e in list(sim.audit)
        )

    return seen


def _submit(operator, n: int, **extra: Any) -> list[Request]:
    made = []
    for i in range(n):
        request, _ = request_create(
            actor=operator,
            cluster="sim",
            namespace="default",
            chip_type="Ascend310P",
            priority=extra.get("priority", "batch-low"),
            workload={"image": "busybox"},
            idempotency_key=f"kill-{extra.get('tag', 'x')}-{i}",
            **(
                {"template": extra["template"]}
                if "template" in extra
                else {"memory": 3072}
            ),
        )
        made.append(request)
    return made


def _pods_of(core, request: Request) -> list[str]:
    pods = core.list_namespaced_pod(
        "default", label_selector=f"vnpu-portal/request={request.pk}"
    ).items
    return [p.metadata.name for p in pods if not p.metadata.deletion_timestamp]


def _converge(cluster, requests: list[Request]) -> None:
    def running() -> bool:
        """every request Running"""
        scheduling_pass(cluster.pk)
        sync_once(cluster)
        states = set(
            Request.objects.filter(pk__in=[r.pk for r in requests]).values_list(
                "state", flat=True
            )
        )
        return states == {RequestState.RUNNING}

    wait_for(running, timeout=40)


@pytest.fixture
def core(sim, tmp_path) -> client.CoreV1Api:
    return client.CoreV1Api(sim.kubernetes_client(tmp_path / "kc-test"))


@pytest.fixture
def tasks_stay_queued(monkeypatch):
    """Follow-ups of the test's own calls are left for the killed worker (not run inline)."""
    return keep_follow_ups_queued(monkeypatch)


def _slice_pod(name: str) -> dict[str, Any]:
    return {
        "metadata": {"name": name},
        "spec": {
            "schedulerName": "volcano",
            "containers": [
                {
                    "name": "c",
                    "image": "busybox",
                    "resources": {
                        "limits": {
                            "huawei.com/Ascend310P": 1,
                            "huawei.com/Ascend310P-memory": 3072,
                        }
                    },
                }
            ],
        },
    }


def test_sync_killed_mid_watch_resumes_and_loses_nothing(sim, sim_cluster, core):
    from apps.inventory.models import SyncCursor

    worker = spawn(
        RUN_TASK,
        "apps.inventory.tasks.sync_cluster_task",
        str(sim_cluster.pk),
        SYNC_TASK_SECONDS="60",
    )
    started = time.time()

    def watching() -> bool:
        cursor = SyncCursor.objects.filter(cluster=sim_cluster, resource="pods").first()
        return bool(
            cursor
            and cursor.last_success_at
            and cursor.last_success_at.timestamp() > started
        )

    wait_for(watching, timeout=30)
    for i in range(10):
        core.create_namespaced_pod("default", _slice_pod(f"before-kill-{i}"))
    # killed while events stream in
    kill_when(
        worker,
        lambda: Slice.objects.filter(pod_name__startswith="before-kill-").exists(),
    )
    for i in range(5):
        core.create_namespaced_pod("default", _slice_pod(f"after-kill-{i}"))
    for i in range(3):
        core.delete_namespaced_pod(
            f"before-kill-{i}", "default", grace_period_seconds=0
        )
    restarts_before = SyncCursor.objects.get(
        cluster=sim_cluster, resource="pods"
    ).restarts
    # the redelivered task: its locks are free (they died with the worker)
    stop = threading.Event()
    thread = threading.Thread(
        target=lambda: (
            sync_run(sim_cluster.pk, seconds=60, watch_timeout=2, stop=stop),
            connection.close(),
        ),
        daemon=True,
    )
    thread.start()
    try:

        def mirrored() -> bool:
            """the slices equal the cluster's"""
            names = set(
                Slice.objects.filter(cluster=sim_cluster).values_list(
                    "pod_name", flat=True
                )
            )
            wanted = {f"before-kill-{i}" for i in range(3, 10)} | {
                f"after-kill-{i}" for i in range(5)
            }
            return wanted <= names and not names & {
                f"before-kill-{i}" for i in range(3)
            }

        wait_for(mirrored, timeout=30)
    finally:
        stop.set()
        thread.join(timeout=30)
    pods = SyncCursor.objects.get(cluster=sim_cluster, resource="pods")
    assert pods.restarts > restarts_before  # resumed from the stored resourceVersion
    rows = list(
        Slice.objects.filter(cluster=sim_cluster).values_list(
            "namespace", "pod_name", "container_index"
        )
    )
    shown = {name for _, name, _ in rows}
    created = {f"before-kill-{i}" for i in range(3, 10)} | {
        f"after-kill-{i}" for i in range(5)
    }
    deleted = {f"before-kill-{i}" for i in range(3)}
    record_and_check(
        "worker killed: sync",
        injected={"sigkill": 1},
        events_after_kill=8,
        lost=len(created - shown),
        # a slice stored twice, or still shown after its pod was deleted
        duplicated=len(rows) - len(set(rows)) + len(shown & deleted),
    )


@pytest.mark.parametrize(
    ("point", "kind"),
    [("after_reserve", "allocation"), ("after_pod_create", "admission")],
)
def test_scheduling_pass_killed_then_redelivered(
    point, kind, sim, sim_cluster, operator, core, tasks_stay_queued
):
    requests = _submit(operator, 3, tag=point)
    worker = spawn(
        RUN_TASK,
        "apps.scheduling.tasks.allocate_cluster_task",
        str(sim_cluster.pk),
        VNPU_PORTAL_CRASH_AT=point,
    )
    assert worker.wait(timeout=60) == -signal.SIGKILL, worker.stdout.read()
    reserved = Request.objects.filter(
        pk__in=[r.pk for r in requests], state=RequestState.RESERVED
    ).count()
    pods_at_kill = sum(len(_pods_of(core, r)) for r in requests)
    assert reserved >= 1  # the kill came after the reservation committed
    if kind == "allocation":
        assert pods_at_kill == 0
    else:
        assert pods_at_kill >= 1  # a pod exists that the database does not know of yet
    # the redelivered task, then sync and passes as beat runs them
    worker = spawn(
        RUN_TASK, "apps.scheduling.tasks.allocate_cluster_task", str(sim_cluster.pk)
    )
    assert worker.wait(timeout=60) == 0, worker.stdout.read()
    _converge(sim_cluster, requests)
    booked = Request.objects.filter(
        state__in=[RequestState.RESERVED, RequestState.ADMITTED]
    ).count()
    assert Reservation.objects.count() == booked  # no reservation left behind
    ours = [
        p.metadata.name
        for p in core.list_namespaced_pod("default").items
        if p.metadata.name.startswith("vnpu-req-")
    ]
    pods_per_request = [len(_pods_of(core, request)) for request in requests]
    record_and_check(
        f"worker killed: {kind}",
        injected={"sigkill": 1},
        requests=len(requests),
        pods=len(ours),
        lost=pods_per_request.count(0),
        duplicated=sum(n - 1 for n in pods_per_request if n > 1)
        + (len(ours) - sum(pods_per_request)),  # pods no request owns
    )


FILL = [
    # (name, memory, chip index, priority class): every 310P chip full; the one way
    # to fit a vir04 for inference-high is to evict "victim" (batch-low, chip 3).
    ("keep-0a", 12288, 0, "inference-high"),
    ("keep-0b", 6144, 0, "inference-high"),
    *(
        (f"keep-{c}{x}", m, c, "inference-high")
        for c in (1, 2)
        for x, m in (("a", 12288), ("b", 6144), ("c", 3072))
    ),
    ("victim", 12288, 3, "batch-low"),
    ("keep-3b", 6144, 3, "inference-high"),
    ("keep-3c", 3072, 3, "inference-high"),
]


def _fill(core, cluster) -> None:
    uuids = list(
        Chip.objects.filter(cluster=cluster, common_word="Ascend310P")
        .order_by("index")
        .values_list("uuid", flat=True)
    )
    for name, memory, chip, priority in FILL:
        pod = _slice_pod(name)
        pod["metadata"]["annotations"] = {"hami.io/use-Ascend310P-uuid": uuids[chip]}
        pod["spec"]["priorityClassName"] = priority
        pod["spec"]["containers"][0]["resources"]["limits"][
            "huawei.com/Ascend310P-memory"
        ] = memory
        core.create_namespaced_pod("default", pod)

    def bound() -> bool:
        """the filler pods synced"""
        sync_once(cluster)
        return Slice.objects.filter(pod_name__in=[f[0] for f in FILL]).count() == len(
            FILL
        )

    wait_for(bound, timeout=30)


def test_eviction_killed_mid_call_evicts_once_and_the_request_runs(
    sim, sim_cluster, operator, admin_user, core, tasks_stay_queued
):
    from apps.scheduling.decisions import proposal_approve

    _fill(core, sim_cluster)
    (urgent,) = _submit(
        operator, 1, tag="urgent", template="vir04", priority="inference-high"
    )
    scheduling_pass(sim_cluster.pk)
    proposal = PreemptionProposal.objects.get(
        request=urgent, state=ProposalState.PENDING
    )
    assert [v["pod"] for v in proposal.victims] == ["victim"]
    proposal_approve(proposal=proposal, actor=admin_user, reason="kill test")
    # the worker's Eviction API call is in flight (delayed) when it is killed
    sim.set_faults(latency_ms=1500)
    worker = spawn(
        RUN_TASK, "apps.scheduling.tasks.evict_victims_task", str(proposal.pk)
    )
    kill_when(worker, _in_flight(sim, "create", "pods", "eviction"))

    def victim_evicted() -> bool:
        """the server carried the eviction out anyway"""
        try:
            pod = core.read_namespaced_pod("victim", "default")
        except ApiException as exc:
            return exc.status == 404
        return pod.metadata.deletion_timestamp is not None

    wait_for(victim_evicted, timeout=20)
    sim.reset_faults()
    # the re-enqueued task (beat finds the approved proposal) and the passes
    worker = spawn(RUN_TASK, "apps.scheduling.tasks.schedule_clusters_task")
    assert worker.wait(timeout=60) == 0, worker.stdout.read()
    _converge(sim_cluster, [urgent])
    evictions = [e for e in sim.audit if e.subresource == "eviction"]
    survivors = {
        p.metadata.name
        for p in core.list_namespaced_pod("default").items
        if not p.metadata.deletion_timestamp
    }
    evicted_wrongly = ({f[0] for f in FILL} - {"victim"}) - survivors
    urgent_pods = len(_pods_of(core, urgent))
    record_and_check(
        "worker killed: eviction",
        injected={"sigkill": 1, "latency": 1},
        eviction_calls=len(evictions),
        victims_evicted=int("victim" not in survivors),
        # the request without its pod, or a pod nobody chose evicted
        lost=int(urgent_pods == 0) + len(evicted_wrongly),
        duplicated=max(0, urgent_pods - 1) + max(0, len(evictions) - 1),
    )
    assert {e.name for e in evictions} == {"victim"}
    assert PreemptionProposal.objects.get(pk=proposal.pk).state == ProposalState.DONE


def test_publish_killed_mid_put_is_recorded_and_nothing_is_lost(
    sim, sim_cluster, admin_client_api, core
):
    # (vir04: no running pod holds it, so the publish breaks none)
    template = Template.objects.get(chip_type__cluster=sim_cluster, name="vir04")
    answer = admin_client_api.patch(
        f"/api/templates/{template.pk}/", {"memory": 9216}, format="json"
    )
    assert answer.status_code == 200, answer.json()
    sim.set_faults(latency_ms=1500)
    worker = spawn(PUBLISH, str(sim_cluster.pk))
    kill_when(worker, _in_flight(sim, "update", "configmaps"))

    def landed() -> bool:
        """the PUT landed after its client died"""
        cm = core.read_namespaced_config_map("hami-scheduler-device", "kube-system")
        return "memory: 9216" in cm.data["device-config.yaml"]

    wait_for(landed, timeout=20)
    sim.reset_faults()
    live = core.read_namespaced_config_map("hami-scheduler-device", "kube-system").data[
        "device-config.yaml"
    ]
    assert "memory: 9216" in live  # written by the killed worker's PUT
    assert not DeviceConfigVersion.objects.filter(
        cluster=sim_cluster, source="published"
    ).exists()
    # the next publish recognises the portal's own write (its pending-write
    # row), records it, and has nothing left to write: no drift, no adopt
    again = admin_client_api.post(
        f"/api/clusters/{sim_cluster.pk}/publish/", {"reason": "retry"}, format="json"
    )
    assert again.status_code == 400, again.json()
    assert again.json()["code"] == "no_change"
    recorded = (
        DeviceConfigVersion.objects.filter(cluster=sim_cluster)
        .order_by("-number")
        .first()
    )
    assert (recorded.source, recorded.reason, recorded.text) == (
        "published",
        "killed mid-PUT",
        live,
    )
    puts = [e for e in sim.audit if e.verb == "update" and e.resource == "configmaps"]
    now_live = core.read_namespaced_config_map(
        "hami-scheduler-device", "kube-system"
    ).data["device-config.yaml"]
    record_and_check(
        "worker killed: publish",
        injected={"sigkill": 1, "latency": 1},
        configmap_writes=len(puts),
        lost=int("memory: 9216" not in now_live),
        duplicated=len(puts) - 1,  # the retry must not write again
    )
