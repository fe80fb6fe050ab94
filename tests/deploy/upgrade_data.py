"""The database side of the upgrade test, run as its own process against ``DATABASE_URL``.

``python -m tests.deploy.upgrade_data previous NAMES_JSON KUBECONFIG``
    migrate a fresh database to the previous release's migrations (our apps
    exactly to NAMES_JSON, Django's own apps to their latest) and fill it with
    the rows a portal in use holds; prints the ids the test follows.
``python -m tests.deploy.upgrade_data snapshot NAMES_JSON``
    every row of every table of the previous release, read with the previous
    release's columns only (a later migration may add columns), as JSON.
``python -m tests.deploy.upgrade_data applied``
    the migrations recorded as applied, as JSON.

Rows are written with the *historical* models of the previous release (the
migration state, not ``apps.*.models``): the current models may have fields
the old schema lacks once later migrations exist, and this must keep working
then.
"""

from __future__ import annotations

import hashlib
import json
import sys
from datetime import UTC, datetime, timedelta
from typing import Any

import django

# Ours: pinned to the previous release; those it did not have (``live``, the
# outbox moved out of inventory; ``metering``, usage and cost) are not
# migrated at all. Every other app: its latest on disk.
OUR_APPS = ("accounts", "audit", "inventory", "live", "metering", "scheduling")


def _targets(executor: Any, previous: dict[str, str]) -> list[tuple[str, str]]:
    graph = executor.loader.graph
    targets = list(previous.items())
    for app in sorted(executor.loader.migrated_apps):
        if app not in OUR_APPS:
            targets.extend(graph.leaf_nodes(app))
    return targets


def _old_apps(previous: dict[str, str]) -> Any:
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    executor = MigrationExecutor(connection)
    return executor.loader.project_state(_targets(executor, previous)).apps


def previous_release(previous: dict[str, str], kubeconfig: str) -> dict[str, Any]:
    """Migrate to the previous release and fill the database as a portal in use."""
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    executor = MigrationExecutor(connection)
    targets = _targets(executor, previous)
    executor.migrate(targets)
    # What `migrate` does after migrating: content types and permissions.
    from django.core.management.sql import emit_post_migrate_signal

    emit_post_migrate_signal(verbosity=0, interactive=False, db=connection.alias)
    apps = executor.loader.project_state(targets).apps
    return _fill(apps, kubeconfig)


def _fill(apps: Any, kubeconfig: str) -> dict[str, Any]:
    """The rows: users and tokens, two clusters, inventory, publish history, queues,
    requests in every state, preemption, usage, events and audit."""
    model = apps.get_model
    User = model("auth", "User")
    Profile, ApiToken = model("accounts", "Profile"), model("accounts", "ApiToken")
    Cluster, ChipType = model("inventory", "Cluster"), model("inventory", "ChipType")
    Template, Node = model("inventory", "Template"), model("inventory", "Node")
    Chip, Slice = model("inventory", "Chip"), model("inventory", "Slice")
    Version = model("inventory", "DeviceConfigVersion")
    PriorityClass = model("inventory", "PriorityClass")
    Queue, Quota = model("scheduling", "Queue"), model("scheduling", "QueueQuota")
    Request, Reservation = (
        model("scheduling", "Request"),
        model("scheduling", "Reservation"),
    )
    Proposal = model("scheduling", "PreemptionProposal")
    Audit = model("audit", "AuditEvent")
    ChipEvent, Usage = (
        model("inventory", "ChipEvent"),
        model("inventory", "UsageSample"),
    )
    Cursor = model("inventory", "SyncCursor")

    t0 = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)
    users = {}
    for name, role in (
        ("ada", "admin"),
        ("otto", "operator"),
        ("vera", "viewer"),
        ("ci", "operator"),
    ):
        user = User.objects.create(
            username=name,
            email=f"{name}@example.com",
            password="pbkdf2_sha256$870000$salt$"
            + hashlib.sha256(name.encode()).hexdigest(),
            is_staff=role == "admin",
            is_superuser=role == "admin",
            date_joined=t0,
        )
        Profile.objects.create(user=user, role=role, is_service_account=name == "ci")
        users[name] = user
    tokens = [
        ApiToken.objects.create(
            user=users["ci"],
            name="gitlab runner",
            prefix="vnpu_ci0001",
            key_hash=hashlib.sha256(b"ci-secret").hexdigest(),
            queues=["ci"],
            last_used_at=t0 + timedelta(days=3),
        ),
        ApiToken.objects.create(
            user=users["otto"],
            name="old laptop",
            prefix="vnpu_ot0002",
            key_hash=hashlib.sha256(b"otto-secret").hexdigest(),
            revoked_at=t0 + timedelta(days=1),
        ),
    ]

    # "live" is the cluster the running worker schedules for; "archive" only
    # holds history nobody may touch.
    clusters = {}
    for name in ("live", "archive"):
        clusters[name] = Cluster.objects.create(
            name=name,
            description=f"{name} cluster",
            connection="kubeconfig",
            kubeconfig_path=kubeconfig,
            device_config_namespace="kube-system",
            device_config_name="hami-scheduler-device",
            sync_state="ok",
            last_sync_at=t0,
        )
    pending: list[int] = []
    for cname, cluster in clusters.items():
        chip_type = ChipType.objects.create(
            cluster=cluster,
            common_word="Ascend310P",
            chip_name="310P3",
            resource_name="huawei.com/Ascend310P",
            resource_memory_name="huawei.com/Ascend310P-memory",
            memory_allocatable=21527,
            memory_capacity=24576,
            ai_core=8,
            ai_cpu=7,
        )
        for position, (tname, memory, core, cpu) in enumerate(
            (("vir01", 3072, 1, 1), ("vir02", 6144, 2, 2), ("vir04", 12288, 4, 4))
        ):
            Template.objects.create(
                chip_type=chip_type,
                name=tname,
                memory=memory,
                ai_core=core,
                ai_cpu=cpu,
                position=position,
            )
        for value, pname in (
            (100, "batch-low"),
            (1000, "batch-medium"),
            (100000, "inference-high"),
        ):
            PriorityClass.objects.create(cluster=cluster, name=pname, value=value)
        chips = []
        for n in range(2):
            node = Node.objects.create(
                cluster=cluster,
                name=f"npu-node-310p-{n:02d}",
                uid=f"uid-{cname}-{n}",
                labels={
                    "ascend": "on",
                    "kubernetes.io/hostname": f"npu-node-310p-{n:02d}",
                },
                ready=True,
                ascend_enabled=True,
                hami_vnpu_core=True,
                resource_version=str(100 + n),
                synced_at=t0,
            )
            for i in range(2):
                chips.append(
                    Chip.objects.create(
                        cluster=cluster,
                        node=node,
                        common_word="Ascend310P",
                        uuid=f"{cname}-{n}-{i}-52E6B438",
                        index=i,
                        slots=7,
                        memory=21527,
                        aicore=8,
                        aicpu=7,
                        healthy=True,
                        handshake="Reported",
                        handshake_at=t0,
                    )
                )
        Slice.objects.create(
            cluster=cluster,
            chip=chips[0],
            chip_uuid=chips[0].uuid,
            common_word="Ascend310P",
            namespace="default",
            pod_name="infer-0",
            pod_uid="pod-uid-0",
            node_name="npu-node-310p-00",
            template="vir04",
            memory=12288,
            aicore=4,
            aicpu=4,
            priority=100000,
            priority_class="inference-high",
            phase="Running",
            started_at=t0,
        )
        text = "vnpus:\n- chipName: 310P3\n  commonWord: Ascend310P\n"
        for number, (source, author) in enumerate(
            (
                ("observed", None),
                ("imported", users["ada"]),
                ("published", users["ada"]),
            ),
            1,
        ):
            Version.objects.create(
                cluster=cluster,
                number=number,
                text=text + f"# v{number}\n",
                shape="list",
                source=source,
                author=author,
                reason=f"version {number}",
                sha256=hashlib.sha256(f"{cname}{number}".encode()).hexdigest(),
                resource_version=str(500 + number),
            )
        queue = Queue.objects.create(cluster=cluster, name="ci", description="CI jobs")
        Quota.objects.create(
            queue=queue, common_word="Ascend310P", memory_limit=200000, slots_limit=20
        )
        other = Queue.objects.create(cluster=cluster, name="research")

        def request(
            state: str,
            n: int,
            cluster: Any = cluster,
            cname: str = cname,
            queue: Any = queue,
            other: Any = other,
            **extra: Any,
        ) -> Any:
            fields = {
                "cluster": cluster,
                "namespace": "default",
                "common_word": "Ascend310P",
                "template": "vir02",
                "priority_class": "batch-low",
                "priority": 100,
                "queue": queue if n % 2 else other,
                "workload": {"image": "ascend/infer:1.0", "command": ["sleep", "3600"]},
                "time_limit_seconds": 3600,
                "idempotency_key": f"{cname}-{state}-{n}",
                "fingerprint": hashlib.sha256(
                    f"{cname}{state}{n}".encode()
                ).hexdigest(),
                "submitted_by": users["ci" if n % 2 else "otto"],
                "state": state,
            }
            return Request.objects.create(**{**fields, **extra})

        for n, state in enumerate(("succeeded", "failed", "cancelled", "expired")):
            request(
                state, n, reason=f"ended: {state}", finished_at=t0 + timedelta(hours=n)
            )
        blocked = request(
            "pending", 11, priority_class="inference-high", priority=100000
        )
        proposal = Proposal.objects.create(
            cluster=cluster,
            request=blocked,
            chip=chips[0],
            chip_uuid=chips[0].uuid,
            node="npu-node-310p-00",
            template="vir04",
            memory=12288,
            victims=[{"namespace": "default", "name": "infer-0", "priority": 100}],
            max_victim_priority=100,
            state="rejected",
            reason="not now",
            decided_by=users["ada"],
            decided_at=t0,
        )
        if cname == "live":
            pending = [request("pending", 20 + n).pk for n in range(3)]
            pending.append(blocked.pk)
        else:
            # Held on a chip of a cluster nobody schedules: it must stay exactly so
            # (on "live" the worker's reconcile would end it: its pod is not there).
            request("pending", 30)
            running = request(
                "running",
                9,
                chip=chips[1],
                chip_uuid=chips[1].uuid,
                node="npu-node-310p-00",
                template_booked="vir02",
                memory_booked=6144,
                pod_name=f"vnpu-req-{cname}-run",
                running_at=t0,
            )
            Reservation.objects.create(
                request=running,
                cluster=cluster,
                chip=chips[1],
                template="vir02",
                memory=6144,
                aicore=2,
                aicpu=2,
            )
        for hour in range(3):
            Usage.objects.create(
                cluster=cluster,
                common_word="Ascend310P",
                at=t0 + timedelta(hours=hour),
                chips=4,
                slices=1,
                memory_total=86108,
                memory_used=12288,
                slots_total=28,
                slots_used=1,
            )
        ChipEvent.objects.create(
            cluster=cluster,
            chip_uuid=chips[0].uuid,
            kind="placed",
            namespace="default",
            pod_name="infer-0",
            template="vir04",
            memory=12288,
            priority=100000,
            at=t0,
        )
        Cursor.objects.create(
            cluster=cluster,
            resource="nodes",
            resource_version="1234",
            last_success_at=t0,
        )
        for action in (
            "cluster.create",
            "deviceconfig.publish",
            "queue.create",
            "preemption.reject",
        ):
            Audit.objects.create(
                cluster=cluster,
                actor=users["ada"],
                actor_name="ada",
                action=action,
                object_type="cluster",
                object_id=str(cluster.pk),
                object_repr=cname,
                reason="upgrade test",
                before={"n": 1},
                after={"n": 2},
            )
        _ = proposal
    return {
        "clusters": {name: cluster.pk for name, cluster in clusters.items()},
        "pending": pending,
        "tokens": [token.pk for token in tokens],
    }


def _plain(value: Any) -> Any:
    if isinstance(value, (datetime,)):
        return value.isoformat()
    if isinstance(value, (bytes, memoryview)):
        return bytes(value).hex()
    if isinstance(value, str) and value[:1] in "{[":
        # JSON columns come back as text on SQLite and as objects on PostgreSQL.
        try:
            return json.loads(value)
        except ValueError:
            return value
    if value is None or isinstance(value, (bool, int, float, str, list, dict)):
        return value
    return str(value)


#: Columns of later migrations that the snapshot reads too, where they exist:
#: the targets of data a migration moved (test_upgrade.MOVED and RENAMED).
MOVED_TO: dict[str, tuple[str, ...]] = {
    "inventory_cluster": ("kubeconfig_encrypted",),
    "accounts_apitoken": ("queue_ids",),
}


def snapshot(previous: dict[str, str]) -> dict[str, dict[str, dict[str, Any]]]:
    """Every row of every table of the previous release, by primary key, with its old columns."""
    from django.db import connection

    apps = _old_apps(previous)
    tables: dict[str, dict[str, dict[str, Any]]] = {}
    quote = connection.ops.quote_name
    with connection.cursor() as cursor:
        for historical in apps.get_models(include_auto_created=True):
            meta = historical._meta
            if not meta.managed or meta.proxy:
                continue
            present = {
                c.name
                for c in connection.introspection.get_table_description(
                    cursor, meta.db_table
                )
            }
            # A column a later migration dropped is missing from the row, and
            # the test asks where it went (test_upgrade.RENAMED).
            columns = [
                field.column
                for field in meta.concrete_fields
                if field.column in present
            ]
            columns += [c for c in MOVED_TO.get(meta.db_table, ()) if c in present]
            pk = meta.pk.column
            cursor.execute(
                f"SELECT {', '.join(quote(c) for c in columns)} FROM {quote(meta.db_table)}"  # noqa: S608 - names from the migration state
            )
            rows = {}
            for values in cursor.fetchall():
                row = {
                    column: _plain(v) for column, v in zip(columns, values, strict=True)
                }
                rows[str(row[pk])] = row
            tables[meta.db_table] = rows
    return tables


def applied() -> list[list[str]]:
    """The migrations recorded as applied."""
    from django.db import connection
    from django.db.migrations.recorder import MigrationRecorder

    return sorted(
        [app, name] for app, name in MigrationRecorder(connection).applied_migrations()
    )


def main(argv: list[str]) -> int:
    django.setup()
    command = argv[1]
    if command == "previous":
        sys.stdout.write(
            json.dumps(previous_release(json.loads(argv[2]), argv[3])) + "\n"
        )
    elif command == "snapshot":
        sys.stdout.write(
            json.dumps(snapshot(json.loads(argv[2])), sort_keys=True) + "\n"
        )
    elif command == "applied":
        sys.stdout.write(json.dumps(applied()) + "\n")
    else:
        sys.stderr.write(f"unknown command {command}\n")
        return 64
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
