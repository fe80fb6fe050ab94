"""The portal at work in a test: sync and beat in threads, a CI client, request states.

Shared by the end-to-end tests against simcluster and against the real control
plane (tests/realstack) and by bench.burst: the same code paths a deployment
runs (list + watch sync, the beat's scheduling passes, eager Celery for what
they enqueue), with the REST API as a pipeline sees it. Django must be set up
before it is imported.
"""

from __future__ import annotations

import http.client
import json
import threading
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from django.db import connection
from rest_framework.test import APIClient

from apps.accounts.services import token_create, user_ensure
from apps.inventory.sync.engine import sync_run
from apps.scheduling.choices import RequestState
from apps.scheduling.tasks import schedule_clusters_task
from harness.processes import wait_until
from kubestack.scenarios import STOPS_ON_SIGTERM_SECONDS


class Running:
    """Sync (list + watch) and a beat loop in background threads, for a ``with``."""

    def __init__(
        self, cluster: Any, beat_interval: float = 0.5, *, worker: bool = False
    ) -> None:
        """``worker``: the passes a submission or a sync event asks for (a
        pass, a reconciliation: a whole pass serves both) run in a thread of
        their own, as a Celery worker takes them off the request and off sync
        (production), instead of inline in the caller (eager Celery, the
        embedded mode); wishes made while a pass runs are served by one more."""
        self.cluster = cluster
        self.beat_interval = beat_interval
        self.worker = worker
        self.stop = threading.Event()
        self.errors: list[BaseException] = []
        self.passes = 0  # scheduling passes the beat loop has finished
        self._wanted = threading.Event()
        self._runners: dict[str, Any] = {}

    def _sync(self) -> None:
        try:
            sync_run(self.cluster.pk, seconds=600, watch_timeout=5, stop=self.stop)
        except BaseException as exc:
            self.errors.append(exc)
        finally:
            connection.close()

    def _beat(self) -> None:
        try:
            while not self.stop.wait(self.beat_interval):
                schedule_clusters_task()
                self.passes += 1
        except BaseException as exc:
            self.errors.append(exc)
        finally:
            connection.close()

    def wait_passes(self, count: int, timeout: float = 30) -> None:
        """Wait until ``count`` more scheduling passes have finished: the time for
        whatever they would do, before asserting that nothing happened."""
        target = self.passes + count
        wait_until(lambda: self.passes >= target, f"{count} scheduling passes", timeout)

    def wait_mirrored(
        self, pods: Iterable[tuple[str, str]], timeout: float = 30
    ) -> None:
        """Wait until sync has mirrored every pod (namespace, name) as a slice.

        A request submitted before then is placed on the portal's older view,
        where the pods' room is still free: its pod waits for a bind that
        cannot come, until the bind timeout sends it back to the pass.
        """
        from apps.inventory.models import Slice

        wanted = set(pods)

        def missing() -> set[tuple[str, str]]:
            mirrored = Slice.objects.filter(
                cluster=self.cluster, pod_name__in=[name for _, name in wanted]
            ).values_list("namespace", "pod_name")
            return wanted - set(mirrored)

        wait_until(
            lambda: not missing(),
            lambda: f"sync to mirror the pods {sorted(missing())}",
            timeout,
        )

    def _work(self) -> None:
        from apps.scheduling.passes import scheduling_pass

        try:
            while not self.stop.is_set():
                if not self._wanted.wait(0.2):
                    continue
                self._wanted.clear()
                scheduling_pass(self.cluster.pk)
        except BaseException as exc:
            self.errors.append(exc)
        finally:
            connection.close()

    def __enter__(self) -> Running:
        self.threads = [
            threading.Thread(target=self._sync, daemon=True),
            threading.Thread(target=self._beat, daemon=True),
        ]
        if self.worker:
            from apps.scheduling import triggers

            for kind in ("pass", "reconcile"):
                self._runners[kind] = triggers.runner(kind)
                triggers.register(kind, lambda _cluster_id: self._wanted.set())
            self.threads.append(threading.Thread(target=self._work, daemon=True))
        for thread in self.threads:
            thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        for thread in self.threads:
            thread.join(timeout=30)
        if self._runners:
            from apps.scheduling import triggers

            for kind, runner in self._runners.items():
                triggers.register(kind, runner)
        assert not self.errors, self.errors


def token_client(
    username: str,
    role: str,
    queues: list[str] | None = None,
    *,
    base_url: str | None = None,
) -> Any:
    """A REST client holding a fresh API token of a service account with ``role``:
    DRF's in-process ``APIClient``, or with ``base_url`` an :class:`HttpClient`
    to a portal running in processes of its own.

    Every non-admin token is limited to queues: without ``queues``, it is
    limited to every queue there is now, each cluster's default queue included
    (made here, as a first submission would make it).
    """
    user = user_ensure(username=username, role=role, is_service_account=True)
    if queues is None and role != "admin":
        queues = _every_queue()
    issued = token_create(user=user, queues=queues)
    if base_url is not None:
        return HttpClient(base_url, issued.plaintext)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {issued.plaintext}")
    return client


@dataclass
class HttpAnswer:
    """What :class:`HttpClient` got back, read as a DRF test response is."""

    status_code: int
    content: bytes

    def json(self) -> Any:
        return json.loads(self.content) if self.content else None


class HttpClient:
    """A pipeline's REST client over HTTP, its connection kept alive, with the
    ``post(path, data, format="json")`` of DRF's ``APIClient`` so that the
    helpers here serve a portal in this process and one deployed beside it."""

    def __init__(self, base_url: str, token: str, timeout: float = 60) -> None:
        address = urlsplit(base_url)
        self._connection = http.client.HTTPConnection(
            address.hostname or "127.0.0.1", address.port or 80, timeout=timeout
        )
        self._headers = {
            "Authorization": f"Bearer {token}",
            "Content-Type": "application/json",
        }

    def post(self, path: str, data: Any, format: str = "json") -> HttpAnswer:
        if format != "json":
            raise ValueError(f"HttpClient sends JSON only, not {format!r}")
        self._connection.request("POST", path, json.dumps(data), self._headers)
        response = self._connection.getresponse()
        return HttpAnswer(response.status, response.read())

    def close(self) -> None:
        self._connection.close()


def _every_queue() -> list[str]:
    from apps.inventory.models import Cluster
    from apps.scheduling.models import Queue

    for cluster in Cluster.objects.all():
        Queue.objects.get_or_create(
            cluster=cluster,
            name="default",
            defaults={"description": "created on first use", "open_to_all": True},
        )
    return [
        f"{cluster}/{name}"
        for name, cluster in Queue.objects.values_list("name", "cluster__name")
    ]


def request_state(client: APIClient, request_id: int) -> dict:
    """``GET /api/requests/<id>/`` as ``client`` sees it (must answer 200)."""
    response = client.get(f"/api/requests/{request_id}/")
    assert response.status_code == 200, response.json()
    return response.json()


def wait_running(client: APIClient, request_id: int, timeout: float = 20) -> dict:
    """The request once it runs (as its submitter reads it); a timeout says
    where it stopped (state, reason, attempts)."""
    try:
        return wait_until(
            lambda: (
                (s := request_state(client, request_id))["state"]
                == RequestState.RUNNING
                and s
            ),
            f"request {request_id} to run",
            timeout=timeout,
        )
    except AssertionError as error:
        last = request_state(client, request_id)
        raise AssertionError(
            f"{error}; it is {last['state']} after {last['attempts']} attempt(s): "
            f"{last['reason']}"
        ) from None


def pending_proposal(admin: APIClient, request_id: int, timeout: float = 60) -> dict:
    """The request's pending preemption proposal, once there is one."""

    def found() -> dict | None:
        rows = admin.get("/api/preemptions/?state=pending").json()["results"]
        return next((row for row in rows if row["request"] == request_id), None)

    return wait_until(found, f"a preemption proposal for request {request_id}", timeout)


def approve(admin: APIClient, proposal: dict, reason: str = "release blocker") -> None:
    """Approve a preemption proposal as ``admin`` (must answer 200)."""
    decided = admin.post(
        f"/api/preemptions/{proposal['id']}/approve/", {"reason": reason}, format="json"
    )
    assert decided.status_code == 200, decided.json()


def approve_pending(admin: APIClient, request_id: int) -> dict:
    """Approve the request's pending proposal once there is one; returns it."""
    proposal = pending_proposal(admin, request_id)
    approve(admin, proposal)
    return proposal


def urgent_vir04(cluster: str) -> dict[str, Any]:
    """An inference-high vir04 on a 310P (what the preemption tests ask for),
    as ``POST /api/requests/`` takes it."""
    return {
        "cluster": cluster,
        "namespace": "default",
        "chip_type": "Ascend310P",
        "template": "vir04",
        "priority": "inference-high",
        "workload": {"image": "busybox"},
    }


def submit_urgent_vir04(client: APIClient, cluster: str) -> int:
    """Submit :func:`urgent_vir04` as ``client``; returns the request's id."""
    response = client.post("/api/requests/", urgent_vir04(cluster), format="json")
    assert response.status_code == 201, response.json()
    return response.json()["id"]


def keep_follow_ups_queued(monkeypatch: Any) -> list[tuple[Any, tuple[Any, ...]]]:
    """Follow-up tasks (a pass after a submission, an eviction after an
    approval) are recorded instead of run inline, so that a worker the test
    starts, and kills, is the one to run them. Returns the (task, args) list."""
    queued: list[tuple[Any, tuple[Any, ...]]] = []

    def enqueue(task: Any, *args: Any) -> bool:
        queued.append((task, args))
        return True

    # The runners registered with apps.scheduling.triggers call this name.
    monkeypatch.setattr("apps.scheduling.tasks.enqueue", enqueue)
    return queued


def burst_templates(count: int) -> list[str]:
    """The 310P templates of a burst of ``count`` small requests: vir01, vir01,
    vir02, repeated. Mixed on purpose: a chip holds seven vir01 or three vir02
    and a vir01, so where Volcano puts each pod decides what still fits."""
    return ["vir02" if index % 3 == 2 else "vir01" for index in range(count)]


def submit_burst(
    cluster: str,
    templates: list[str],
    *,
    workers: int = 4,
    prefix: str = "burst",
    base_url: str | None = None,
) -> list[int]:
    """Submit one batch-medium 310P request per template, from ``workers`` CI
    pipelines posting in parallel, each with its own service account's token
    (a pipeline may submit THROTTLE_REQUEST_CREATE a minute, 60 by default);
    returns the request ids in submission order (each POST must answer 201).
    With ``base_url`` they POST over HTTP to a portal running there, else to
    this process's."""

    def post(client: Any, chunk: list[tuple[int, str]]) -> list[int]:
        try:
            ids = []
            for index, template in chunk:
                response = client.post(
                    "/api/requests/",
                    {
                        "cluster": cluster,
                        "namespace": "default",
                        "chip_type": "Ascend310P",
                        "template": template,
                        "priority": "batch-medium",
                        "workload": {"image": "busybox", "command": ["sleep", "3600"]},
                        "idempotency_key": f"{prefix}-{index}",
                    },
                    format="json",
                )
                assert response.status_code == 201, response.json()
                ids.append(response.json()["id"])
            return ids
        finally:
            connection.close()
            if isinstance(client, HttpClient):
                client.close()

    numbered = list(enumerate(templates))
    chunks = [numbered[start::workers] for start in range(workers)]
    # The clients (and their service account) are made here: user_ensure from
    # several threads at once would race on the same username.
    clients = [
        token_client(f"{prefix}-ci-{n}", "operator", base_url=base_url)
        for n in range(workers)
    ]
    with ThreadPoolExecutor(workers) as pool:
        return sorted(i for ids in pool.map(post, clients, chunks) for i in ids)


def ci_request(**overrides: Any) -> dict[str, Any]:
    """The body of a pipeline's request on the real stack: 5000 MB of a 310P
    (the guide's vir02) for a busybox sleeping an hour that stops within
    seconds of SIGTERM (released, preempted or drained, its pod goes then, not
    after Kubernetes' 30 s); ``overrides`` replace keys."""
    return {
        "cluster": "real",
        "namespace": "default",
        "chip_type": "Ascend310P",
        "memory": 5000,
        "priority": "batch-medium",
        "workload": {
            "image": "busybox",
            "command": ["sleep", "3600"],
            "grace_seconds": STOPS_ON_SIGTERM_SECONDS,
        },
        **overrides,
    }


def job_workload(
    lines: list[str], run_seconds: float, exit_code: int = 0
) -> dict[str, Any]:
    """A workload that plays simcluster's job contract (docs/simcluster.md):
    it prints ``lines`` over ``run_seconds`` and exits with ``exit_code``."""
    return {
        "image": "busybox",
        "command": ["python", "train.py"],
        "env": {
            "SIMCLUSTER_RUN_SECONDS": str(run_seconds),
            "SIMCLUSTER_EXIT_CODE": str(exit_code),
            "SIMCLUSTER_LOG": "\n".join(lines),
        },
    }


def submit_job(client: APIClient, cluster: str, key: str, **job: Any) -> int:
    """Submit a :func:`job_workload` (3000 MB of a 310P, queue ``ci``); its id."""
    answer = client.post(
        "/api/requests/",
        {
            "cluster": cluster,
            "namespace": "default",
            "chip_type": "Ascend310P",
            "memory": 3000,
            "priority": "batch-medium",
            "queue": "ci",
            "workload": job_workload(**job),
            "idempotency_key": key,
        },
        format="json",
    )
    assert answer.status_code == 201, answer.json()
    return int(answer.json()["id"])
