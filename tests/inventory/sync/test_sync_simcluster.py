"""Sync against simcluster: the database equals the simulator after every kind of trouble.

"Equal" is checked on everything sync derives, not samples: every chip (node,
index, uuid, type, health, slots, memory, AICore, AICPU and their use) and every
slice, computed here independently from what a real client (the kubernetes
client) lists from the simulator.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections import defaultdict
from pathlib import Path

import pytest
from django.core.management import call_command
from django.db import connection
from kubernetes import client

from apps.inventory.choices import ConnectionKind, SyncState
from apps.inventory.models import Cluster, Slice, SyncCursor
from apps.inventory.services import cluster_create
from apps.inventory.sync.engine import sync_run
from tests.polling import wait_for
from tests.requires import missing

ROOT = Path(__file__).resolve().parents[3]
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

TEMPLATES = {  # the guide's (commonWord, template) -> (aiCore, aiCPU)
    ("Ascend310P", "vir01"): (1, 1),
    ("Ascend310P", "vir02"): (2, 2),
    ("Ascend310P", "vir04"): (4, 4),
    ("Ascend910B4", "vir05_1c_8g"): (5, 1),
    ("Ascend910B4", "vir10_3c_16g"): (10, 3),
}
CHIP_AICPU = {"Ascend310P": 7, "Ascend910B4": 7}


@pytest.fixture
def sim_options():
    return {"history": 200}  # a small history window, for the 410 test


@pytest.fixture
def kubeconfig(sim, tmp_path):
    return sim.write_kubeconfig(tmp_path / "kubeconfig")


@pytest.fixture
def core(kubeconfig):
    from kubernetes import config

    return client.CoreV1Api(config.new_client_from_config(config_file=str(kubeconfig)))


@pytest.fixture
def cluster(kubeconfig):
    return cluster_create(
        actor=None,
        name="sim",
        connection=ConnectionKind.KUBECONFIG,
        kubeconfig=Path(kubeconfig).read_text(),
    )


class Syncing:
    """Runs the real sync loop in a background thread for the length of a ``with``."""

    def __init__(self, cluster: Cluster, watch_timeout: int = 5) -> None:
        self.cluster, self.watch_timeout = cluster, watch_timeout
        self.stop = threading.Event()
        self.stats: dict = {}

    def __enter__(self) -> Syncing:
        def run() -> None:
            try:
                self.stats = sync_run(
                    self.cluster.pk,
                    seconds=120,
                    watch_timeout=self.watch_timeout,
                    stop=self.stop,
                )
            finally:
                connection.close()

        self.thread = threading.Thread(target=run, daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join(timeout=30)
        assert not self.thread.is_alive()


def expected_state(core: client.CoreV1Api) -> tuple[list[dict], list[tuple]]:
    """Chips and slices as HAMi counts them, from the simulator's objects (independent parser)."""
    nodes = json.loads(core.list_node(_preload_content=False).data)["items"]
    pods = json.loads(core.list_pod_for_all_namespaces(_preload_content=False).data)[
        "items"
    ]
    used = defaultdict(lambda: [0, 0, 0, 0])
    slices = []
    for pod in pods:
        ann = pod["metadata"].get("annotations") or {}
        if "hami.io/vgpu-node" not in ann or pod["status"].get("phase") in (
            "Succeeded",
            "Failed",
        ):
            continue
        for key, value in ann.items():
            if not (key.startswith("hami.io/") and key.endswith("-devices-allocated")):
                continue
            cw = key[len("hami.io/") : -len("-devices-allocated")]
            temps = {
                i["UUID"]: i.get("temp", "")
                for i in json.loads(ann.get(f"huawei.com/{cw}", "[]"))
            }
            for container in value.split(";"):
                for entry in filter(None, container.split(":")):
                    uuid, _type, mem, _cores = entry.split(",")
                    template = temps.get(uuid, "")
                    core_, cpu = TEMPLATES.get((cw, template), (None, CHIP_AICPU[cw]))
                    u = used[uuid]
                    u[0] += 1
                    u[1] += int(mem)
                    u[2] += (
                        core_ if core_ is not None else -1
                    )  # -1: whole card, fixed below
                    u[3] += cpu
                    slices.append(
                        (
                            pod["metadata"]["namespace"],
                            pod["metadata"]["name"],
                            uuid,
                            template,
                            int(mem),
                        )
                    )
    chips = []
    for node in nodes:
        for key, value in (node["metadata"].get("annotations") or {}).items():
            if not key.startswith("hami.io/node-register-"):
                continue
            for dev in json.loads(value):
                dev = {k.lower(): v for k, v in dev.items()}
                u = used[dev["id"]]
                aicore_used = u[2] if u[2] >= 0 else dev.get("devcore", 0)
                chips.append(
                    {
                        "node": node["metadata"]["name"],
                        "index": dev.get("index", 0),
                        "uuid": dev["id"],
                        "chip_type": dev.get("type"),
                        "healthy": bool(dev.get("health", False)),
                        "slots_used": u[0],
                        "slots_total": dev.get("count", 0),
                        "memory_used": u[1],
                        "memory_total": dev.get("devmem", 0),
                        "aicore_used": aicore_used,
                        "aicore_total": dev.get("devcore", 0),
                        "aicpu_used": u[3],
                        "aicpu_total": CHIP_AICPU[dev.get("type")],
                    }
                )
    return sorted(chips, key=lambda c: c["uuid"]), sorted(slices)


def db_state(cluster: Cluster, capsys) -> tuple[list[dict], list[tuple]]:
    capsys.readouterr()
    call_command("inventory", "chips", "--cluster", cluster.name, "--json")
    chips = sorted(json.loads(capsys.readouterr().out), key=lambda c: c["uuid"])
    slices = sorted(
        Slice.objects.filter(cluster=cluster).values_list(
            "namespace", "pod_name", "chip_uuid", "template", "memory"
        )
    )
    return chips, slices


def wait_equal(cluster, core, capsys, timeout: float = 15.0):
    seen: dict[str, tuple[list[dict], list[tuple]]] = {}

    def equal() -> bool:
        seen["expected"], seen["actual"] = (
            expected_state(core),
            db_state(cluster, capsys),
        )
        return seen["expected"] == seen["actual"]

    def differences() -> str:
        """Name the differences, not two long lists."""
        expected, actual = seen["expected"], seen["actual"]
        return (
            "the database to equal the simulator; chips only in the database: "
            f"{[c for c in actual[0] if c not in expected[0]]}, only in the "
            f"simulator: {[c for c in expected[0] if c not in actual[0]]}; slices "
            f"in one only: {sorted(set(actual[1]) ^ set(expected[1]))}"
        )

    wait_for(equal, differences, timeout)
    return seen["expected"]


def slice_pod(name: str, memory: int, cw: str = "Ascend310P") -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "schedulerName": "volcano",
            "containers": [
                {
                    "name": "c",
                    "image": "busybox",
                    "resources": {
                        "limits": {
                            f"huawei.com/{cw}": "1",
                            f"huawei.com/{cw}-memory": str(memory),
                        }
                    },
                }
            ],
        },
    }


def test_initial_list_equals_the_simulator(cluster, core, capsys):
    call_command("sync", "--cluster", "sim", "--once")
    chips, slices = wait_equal(cluster, core, capsys, timeout=0.1)
    assert len(chips) == 12
    assert len(slices) == 2
    assert Cluster.objects.get(pk=cluster.pk).sync_state == SyncState.OK


def test_burst_of_changes(cluster, core, capsys):
    with Syncing(cluster):
        wait_equal(cluster, core, capsys)
        # 61,440 MB in all: room for every pod on the four 310P chips (the
        # simulator no longer over-commits a chip, as it once did here)
        for i in range(15):
            core.create_namespaced_pod(
                "default", slice_pod(f"burst-{i}", [3072, 6144, 3072][i % 3])
            )
        for i in range(0, 15, 4):
            core.delete_namespaced_pod(f"burst-{i}", "default", grace_period_seconds=0)
        _, slices = wait_equal(cluster, core, capsys)
    assert len(slices) == 2 + 15 - 4


def test_dropped_watches_lose_nothing(sim, cluster, core, capsys):
    with Syncing(cluster):
        wait_equal(cluster, core, capsys)
        sim.set_faults(watch_drop_after_events=2)
        for i in range(10):
            core.create_namespaced_pod("default", slice_pod(f"drop-{i}", 3072))
        wait_equal(cluster, core, capsys)
        sim.reset_faults()


def test_410_after_the_history_window_relists(sim, cluster, core, capsys):
    call_command("sync", "--cluster", "sim", "--once")
    # while nobody watches, more events than the server keeps (history=200)
    for i in range(60):
        core.create_namespaced_pod(
            "default",
            slice_pod(f"gone-{i}", 3072, cw="Ascend910B4" if i % 2 else "Ascend310P"),
        )
        if i % 3 == 0:
            core.delete_namespaced_pod(f"gone-{i}", "default", grace_period_seconds=0)
    # (the simulator's controllers add their own events: bindings, status)
    pods = SyncCursor.objects.get(cluster=cluster, resource="pods")
    wait_for(
        lambda: int(pods.resource_version) < sim.store.compacted_rv,
        lambda: (
            f"the history window to move past the pods' cursor "
            f"(rv {pods.resource_version}, compacted {sim.store.compacted_rv})"
        ),
        30,
    )
    with Syncing(cluster) as syncing:
        wait_equal(cluster, core, capsys)
        wait_for(
            lambda: SyncCursor.objects.filter(
                cluster=cluster, resource="pods", relists__gte=1
            ).exists(),
            "a relist after the 410",
            10,
        )
    assert syncing.stats["pods"].gone >= 1
    assert Slice.objects.filter(cluster=cluster).count() == len(
        set(
            Slice.objects.filter(cluster=cluster).values_list(
                "namespace", "pod_name", "chip_uuid"
            )
        )
    )


def test_outage_shows_stale_then_recovers_without_duplicates(
    sim, cluster, core, capsys, settings
):
    settings.SYNC_STALE_AFTER_SECONDS = 2
    with Syncing(cluster, watch_timeout=2):
        wait_equal(cluster, core, capsys)
        sim.outage(6)

        def shown_stale() -> bool:
            shown = Cluster.objects.get(pk=cluster.pk)
            return shown.sync_state in (SyncState.STALE, SyncState.ERROR) and bool(
                shown.last_sync_error
            )

        wait_for(shown_stale, "the outage to show as stale with an error", 10)
        wait_for(lambda: not sim.faults.in_outage(), "the outage to end", 10)
        # meanwhile the cluster changed
        core.create_namespaced_pod("default", slice_pod("after-outage", 6144))
        wait_equal(cluster, core, capsys, timeout=40)
        wait_for(
            lambda: Cluster.objects.get(pk=cluster.pk).sync_state == SyncState.OK,
            "the cluster to recover",
            40,
        )


def test_a_token_rotated_in_the_portal_is_used_after_a_401(sim):
    """A 401 makes the watcher read the cluster again: a token an admin
    rotated in the portal is picked up without restarting the worker."""
    from apps.common.crypto import encrypt

    cluster = cluster_create(
        actor=None,
        name="rotated",
        connection=ConnectionKind.TOKEN,
        api_url=sim.url,
        ca_cert=sim.certificate.cert_pem.decode() if sim.certificate else "",
        token="not-the-token",
    )
    stop = threading.Event()
    thread = threading.Thread(
        target=lambda: (
            sync_run(cluster.pk, seconds=60, watch_timeout=2, stop=stop),
            connection.close(),
        ),
        daemon=True,
    )
    thread.start()
    try:
        wait_for(
            lambda: SyncCursor.objects.filter(
                cluster=cluster, last_error__contains="401"
            ).exists(),
            "the old token to be refused",
            timeout=20,
        )
        Cluster.objects.filter(pk=cluster.pk).update(
            token_encrypted=encrypt(sim.tokens.admin)
        )
        wait_for(
            lambda: (
                SyncCursor.objects.filter(cluster=cluster, relists__gte=0)
                .exclude(last_list_at=None)
                .exists()
            ),
            "a list with the rotated token",
            timeout=30,
        )
    finally:
        stop.set()
        thread.join(timeout=30)


def test_two_workers_never_watch_the_same_stream(cluster):
    url = _database_url()
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "vnpuportal.settings.test",
        "DATABASE_URL": url,
    }
    command = [
        sys.executable,
        "manage.py",
        "sync",
        "--cluster",
        "sim",
        "--seconds",
        "4",
    ]
    workers = [
        subprocess.Popen(
            command,
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    outputs = [w.communicate(timeout=90) for w in workers]
    watched = [
        {
            line.split()[1].rstrip(":")
            for line in out.splitlines()
            if line.startswith("watched ")
        }
        for out, _ in outputs
    ]
    assert all(w.returncode == 0 for w in workers), [err for _, err in outputs]
    assert watched[0].isdisjoint(watched[1])
    assert len(watched[0] | watched[1]) == 11  # every stream watched exactly once


def _database_url() -> str:
    db = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{db['NAME']}"
    host = db.get("HOST") or "127.0.0.1"
    auth = db["USER"] + (f":{db['PASSWORD']}" if db.get("PASSWORD") else "")
    return f"postgres://{auth}@{host}:{db.get('PORT') or 5432}/{db['NAME']}"


@pytest.mark.timeout(90)  # the bug waited 600 s: fail fast instead
def test_a_sync_task_without_any_lock_leaves_at_once(cluster):
    """While one worker watches every stream, a second sync task (beat queues
    one every 30 s) returns at once instead of waiting out its 600 s."""
    holding = threading.Event()
    stop = threading.Event()
    first = threading.Thread(
        target=lambda: (
            sync_run(
                cluster.pk,
                seconds=60,
                watch_timeout=1,
                stop=stop,
                on_start=lambda watchers: holding.set(),
            ),
            connection.close(),
        ),
        daemon=True,
    )
    first.start()
    try:
        assert holding.wait(20), "the first sync never started"
        started = time.monotonic()
        stats = sync_run(cluster.pk, seconds=600, watch_timeout=1)
        assert stats == {}  # every lock was held: nothing watched here
        assert time.monotonic() - started < 30  # not the 600 s it asked for
    finally:
        stop.set()
        first.join(timeout=30)


DEEP = "vnpus: " + "[" * 5000 + "]" * 5000  # the hand edit that stopped sync


def _device_config(core, cluster) -> tuple[str, str]:
    cm = core.read_namespaced_config_map(
        cluster.device_config_name, cluster.device_config_namespace
    )
    return cm.data["device-config.yaml"], cm.metadata.resource_version


def _set_device_config(core, cluster, text: str) -> str:
    cm = core.patch_namespaced_config_map(
        cluster.device_config_name,
        cluster.device_config_namespace,
        {"data": {"device-config.yaml": text}},
    )
    return cm.metadata.resource_version


def _device_config_cursor(cluster) -> SyncCursor | None:
    return SyncCursor.objects.filter(
        cluster=cluster, resource="configmap:device-config"
    ).first()


def _watcher_alive(cluster) -> bool:
    name = f"sync-{cluster.pk}-configmap:device-config"
    return any(t.name == name and t.is_alive() for t in threading.enumerate())


def test_a_bad_configmap_is_skipped_and_the_restored_good_one_is_synced(cluster, core):
    from apps.inventory.models import ClusterObject, DeviceConfigVersion

    good, _ = _device_config(core, cluster)
    with Syncing(cluster, watch_timeout=2):
        wait_for(
            lambda: DeviceConfigVersion.objects.filter(cluster=cluster).exists(),
            "the device config was never adopted",
        )
        # given a hand edit nested 5,000 levels deep
        bad_rv = _set_device_config(core, cluster, DEEP)
        # then sync records it, with its reason, and goes on
        cursor = wait_for(
            lambda: (
                (c := _device_config_cursor(cluster))
                and any(e["resource_version"] == bad_rv for e in c.skipped_objects)
                and c
            ),
            "the deep ConfigMap was never recorded as skipped",
        )
        (entry,) = cursor.skipped_objects
        assert entry["kind"] == "ConfigMap"
        assert (entry["namespace"], entry["name"]) == (
            cluster.device_config_namespace,
            cluster.device_config_name,
        )
        assert "nested deeper than 64 levels" in entry["reason"]
        shown = wait_for(
            lambda: (
                "skipped ConfigMap"
                in (c := Cluster.objects.get(pk=cluster.pk)).last_sync_error
                and c
            ),
            "last_sync_error does not name the skipped object",
        )
        assert "nested deeper than 64 levels" in shown.last_sync_error
        assert _watcher_alive(cluster)
        # the stored object is still the last good one, not the bad one
        stored = ClusterObject.objects.get(
            cluster=cluster, kind="ConfigMap", name=cluster.device_config_name
        )
        assert stored.resource_version != bad_rv
        # when a good config is restored (an edited one: a new version to see)
        restored = good + "# restored by hand\n"
        good_rv = _set_device_config(core, cluster, restored)
        # then it is synced, the skip is cleared, and the watcher is alive
        wait_for(
            lambda: DeviceConfigVersion.objects.filter(
                cluster=cluster, text=restored, resource_version=good_rv
            ).exists(),
            "the restored good ConfigMap was never picked up",
        )
        wait_for(
            lambda: (
                (c := _device_config_cursor(cluster))
                and not c.skipped_objects
                and int(c.resource_version) >= int(good_rv)
            ),
            "the skip was never cleared, or the stream never moved past it",
        )
        assert not DeviceConfigVersion.objects.filter(
            cluster=cluster, text=DEEP
        ).exists()
        wait_for(
            lambda: not Cluster.objects.get(pk=cluster.pk).last_sync_error,
            "last_sync_error still names the skipped object",
        )
        assert _watcher_alive(cluster)


def test_a_bad_configmap_in_a_full_list_is_skipped(cluster, core, viewer_client):
    # given the deep hand edit is in place before the first list
    bad_rv = _set_device_config(core, cluster, DEEP)
    # when sync lists everything once
    call_command("sync", "--cluster", "sim", "--once")
    # then every other stream is in, and the ConfigMap is recorded as skipped
    cursor = _device_config_cursor(cluster)
    assert [e["resource_version"] for e in cursor.skipped_objects] == [bad_rv]
    assert cursor.resource_version  # the list still moved the stream on
    assert Slice.objects.filter(cluster=cluster).count() == 2
    assert "skipped ConfigMap" in Cluster.objects.get(pk=cluster.pk).last_sync_error
    # and the API shows it on the stream's sync status
    status = viewer_client.get(f"/api/clusters/{cluster.pk}/sync-status/")
    assert status.status_code == 200
    (shown,) = [c for c in status.json() if c["resource"] == "configmap:device-config"]
    assert shown["skipped_objects"] == [
        {
            "kind": "ConfigMap",
            "namespace": cluster.device_config_namespace,
            "name": cluster.device_config_name,
            "resource_version": bad_rv,
            "reason": "device-config.yaml: invalid YAML at line 1: "
            "nested deeper than 64 levels",
            "at": shown["skipped_objects"][0]["at"],
        }
    ]


def _advisory_lock_holders() -> list[int]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted"
            " AND database = (SELECT oid FROM pg_database"
            " WHERE datname = current_database())"
        )
        return [row[0] for row in cursor.fetchall()]


def _cut_every_other_session() -> int:
    # What a PostgreSQL restart or failover does to the workers' sessions.
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
            " WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
        return cursor.fetchone()[0]


@pytest.mark.timeout(180)
def test_a_database_blip_never_leaves_two_watchers_per_stream(cluster):
    """Sync locks are advisory locks on their own sessions: a PostgreSQL blip
    freed them without the watchers noticing, and beat's next task started a
    second watcher for every stream (18 watches instead of 9)."""
    if connection.vendor != "postgresql":
        missing(
            "needs PostgreSQL: advisory locks are PostgreSQL's; on SQLite sync "
            "locks are file locks, which a database blip cannot free"
        )
    from apps.inventory.sync import engine
    from apps.inventory.sync.targets import targets_for

    names = {f"sync-{cluster.pk}-{t.key}" for t in targets_for(cluster)}
    one_each = dict.fromkeys(sorted(names), 1)

    def watchers() -> dict[str, int]:
        alive = [t.name for t in threading.enumerate() if t.is_alive()]
        return {name: alive.count(name) for name in sorted(names)}

    def task(stop: threading.Event, started: threading.Event | None = None):
        def run() -> None:
            try:
                task.stats.append(  # type: ignore[attr-defined]
                    sync_run(
                        cluster.pk,
                        seconds=120,
                        watch_timeout=2,
                        stop=stop,
                        on_start=lambda w: started and started.set(),
                    )
                )
            finally:
                connection.close()

        thread = threading.Thread(target=run, daemon=True)
        thread.start()
        return thread

    task.stats = []  # type: ignore[attr-defined]
    stop_a, stop_b, started = threading.Event(), threading.Event(), threading.Event()
    first = second = task(stop_a, started)
    try:
        assert started.wait(30), "the first sync task never started"
        wait_for(lambda: watchers() == one_each, "the first task's watchers")
        holders = set(_advisory_lock_holders())
        assert len(holders) == len(names)  # a session per lock

        # given a blip that cuts every session, the locks' included
        assert _cut_every_other_session() >= len(names)
        # then the task notices and takes its locks back on new sessions
        wait_for(
            lambda: (
                len(now := _advisory_lock_holders()) == len(names)
                and not holders & set(now)
            ),
            "the lost locks were never taken back",
            timeout=engine.LOCK_CHECK_SECONDS * 3 + 10,
        )
        assert watchers() == one_each
        # so beat's next task finds every lock held and leaves at once
        started_at = time.monotonic()
        second = task(stop_b)
        second.join(timeout=30)
        assert not second.is_alive()
        assert task.stats[-1] == {}
        assert time.monotonic() - started_at < 30
        assert watchers() == one_each

        # given another blip, with beat's task arriving at once (the worst case:
        # it takes the freed locks before the first task checks them)
        _cut_every_other_session()
        stop_b.clear()
        started_b = threading.Event()
        second = task(stop_b, started_b)
        wait_for(
            lambda: started_b.is_set() or not second.is_alive(),
            "the second task neither started nor left",
        )
        # then within a few lock checks (and a watcher's stop) every stream
        # has one watcher: the two tasks split the streams between them
        settle = engine.LOCK_CHECK_SECONDS * 3 + 15
        wait_for(
            lambda: watchers() == one_each,
            lambda: f"one watcher per stream; now {watchers()}",
            settle,
        )
        # and it stays so: never two, never none (10 s of samples: a fixed
        # stretch on purpose, nothing may change during it)
        seen = []
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            seen.append(watchers())
            time.sleep(0.2)
        assert all(s == one_each for s in seen), [s for s in seen if s != one_each][:3]
        assert len(_advisory_lock_holders()) == len(names)
    finally:
        stop_a.set()
        stop_b.set()
        first.join(timeout=60)
        second.join(timeout=60)


def test_any_object_whose_handler_fails_is_skipped_and_the_rest_applied(
    cluster, core, capsys, monkeypatch
):
    from apps.inventory.sync.writer import ClusterWriter

    real = ClusterWriter.apply_pod_events

    def refuses_poison(self, events):
        events = list(events)
        if any(obj["metadata"]["name"] == "poison" for _, obj in events):
            raise RuntimeError("cannot take this pod")
        return real(self, events)

    # given a writer that fails on one pod, whatever batch it comes in
    monkeypatch.setattr(ClusterWriter, "apply_pod_events", refuses_poison)
    with Syncing(cluster, watch_timeout=2):
        wait_equal(cluster, core, capsys)
        # when it arrives among good pods
        for name in ("good-1", "poison", "good-2", "good-3"):
            core.create_namespaced_pod("default", slice_pod(name, 3072))
        # then the good ones are in, and the bad one is recorded with its reason
        wait_for(
            lambda: (
                set(
                    Slice.objects.filter(
                        cluster=cluster, pod_name__startswith="good-"
                    ).values_list("pod_name", flat=True)
                )
                == {"good-1", "good-2", "good-3"}
            ),
            "the good pods around the bad one were not applied",
        )
        cursor = wait_for(
            lambda: (
                (
                    c := SyncCursor.objects.get(cluster=cluster, resource="pods")
                ).skipped_objects
                and c
            ),
            "the bad pod was not recorded",
        )
        assert {(e["kind"], e["name"]) for e in cursor.skipped_objects} == {
            ("Pod", "poison")
        }
        assert all(
            e["reason"] == "RuntimeError: cannot take this pod"
            for e in cursor.skipped_objects
        )
        # and the stream goes on
        core.create_namespaced_pod("default", slice_pod("after", 3072))
        wait_for(
            lambda: Slice.objects.filter(cluster=cluster, pod_name="after").exists(),
            "the stream stopped after the bad pod",
        )
