"""deploy/: the manifests apply to a cluster (simcluster, server-side dry run and for real),
and their ClusterRole grants exactly the calls in apps.common.kube_permissions."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from apps.common.kube_permissions import (
    PORTAL_CALLS,
    cluster_role_rules,
    granted_atoms,
    rule_atoms,
)
from simcluster import resources

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
FILES = sorted(DEPLOY.glob("*.yaml"))


def _documents() -> list[dict]:
    docs = []
    for path in FILES:
        docs.extend(d for d in yaml.safe_load_all(path.read_text()) if d)
    return docs


def _one(kind: str, name: str) -> dict:
    found = [
        d for d in _documents() if d["kind"] == kind and d["metadata"]["name"] == name
    ]
    assert len(found) == 1, (kind, name)
    return found[0]


def _deployments() -> list[dict]:
    return [d for d in _documents() if d["kind"] == "Deployment"]


# --- what the files say ----------------------------------------------------------


def test_the_cluster_role_is_exactly_the_registry():
    role = _one("ClusterRole", "vnpuportal")
    # exact: nothing the code does is missing, nothing else is granted
    assert rule_atoms(role["rules"]) == granted_atoms()
    # and written the way the registry generates it (no wildcard, no duplicate)
    assert role["rules"] == cluster_role_rules()
    for rule in role["rules"]:
        assert "*" not in rule["verbs"] + rule["resources"] + rule["apiGroups"]


def test_the_role_grants_no_write_beyond_the_brief():
    writes = {
        (group, resource, verb, name)
        for group, resource, verb, name in granted_atoms()
        if verb not in ("get", "list", "watch")
    }
    assert writes == {
        ("", "configmaps", "update", "hami-scheduler-device"),
        # the device plugin's node config (isolation, a node's mode): updated,
        # never created
        ("", "configmaps", "update", "hami-device-node-config"),
        ("", "pods", "create", "*"),
        ("", "pods", "delete", "*"),
        ("", "pods", "patch", "*"),
        ("", "pods/eviction", "create", "*"),
        ("", "events", "create", "*"),
        # a preemption holds its node with a taint while the victims leave
        ("", "nodes", "patch", "*"),
        ("apps", "daemonsets", "patch", "hami-ascend-device-plugin"),
        ("apps", "deployments", "patch", "hami-scheduler"),
        ("apps", "deployments", "patch", "volcano-scheduler"),
        # each portal queue's Volcano Queue (never deleted, never opened/closed)
        ("scheduling.volcano.sh", "queues", "create", "*"),
        ("scheduling.volcano.sh", "queues", "update", "*"),
    }
    # never secrets or RBAC objects, in any way
    touched = {resource for _, resource, _, _ in granted_atoms()}
    assert not touched & {"secrets", "clusterroles", "clusterrolebindings", "roles"}


def test_registry_names_match_the_default_settings(settings):
    from apps.common import kube_permissions as k

    assert f"kube-system/{k.DEVICE_PLUGIN}" == settings.DEVICE_PLUGIN_DAEMONSET
    assert f"kube-system/{k.NODE_CONFIG}" == settings.DEVICE_NODE_CONFIGMAP
    assert settings.VOLCANO_SCHEDULER_CONFIGMAP.endswith("/" + k.VOLCANO_CONFIG)
    assert sorted(r.split("/")[1] for r in settings.WATCHED_DEPLOYMENTS) == sorted(
        k.RESTARTED_DEPLOYMENTS
    )
    from apps.inventory.models import Cluster

    assert Cluster._meta.get_field("device_config_name").default == k.DEVICE_CONFIG


def test_the_binding_gives_the_role_to_the_service_account():
    binding = _one("ClusterRoleBinding", "vnpuportal")
    assert binding["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "ClusterRole",
        "name": "vnpuportal",
    }
    assert binding["subjects"] == [
        {"kind": "ServiceAccount", "name": "vnpuportal", "namespace": "vnpu-system"}
    ]
    _one("ServiceAccount", "vnpuportal")


def test_every_kind_is_one_simcluster_serves():
    served = {(r.group_version, r.kind) for r in resources.RESOURCES}
    for doc in _documents():
        assert (doc["apiVersion"], doc["kind"]) in served, doc["kind"]


@pytest.mark.parametrize("component", ["web", "worker", "beat"])
def test_workloads_run_hardened(component):
    deployment = _one("Deployment", f"vnpuportal-{component}")
    pod = deployment["spec"]["template"]["spec"]
    assert pod["serviceAccountName"] == "vnpuportal"
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["runAsUser"] == 10001
    assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    (container,) = pod["containers"]
    assert container["args"] == [component]
    security = container["securityContext"]
    assert security["allowPrivilegeEscalation"] is False
    assert security["readOnlyRootFilesystem"] is True
    assert security["capabilities"] == {"drop": ["ALL"]}
    assert container["resources"]["requests"]
    assert container["resources"]["limits"]["memory"]
    assert {"secretRef": {"name": "vnpuportal"}} in container["envFrom"]
    # the app writes only to scratch volumes
    mounts = {m["mountPath"] for m in container["volumeMounts"]}
    assert "/tmp" in mounts  # noqa: S108 - an emptyDir, not a shared /tmp


def test_web_has_probes_and_a_service_and_beat_is_single():
    web = _one("Deployment", "vnpuportal-web")["spec"]["template"]["spec"]
    (container,) = web["containers"]
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert {
        "name": "POD_IP",
        "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}},
    } in container["env"]
    service = _one("Service", "vnpuportal-web")
    assert service["spec"]["selector"] == {
        "app.kubernetes.io/name": "vnpuportal",
        "app.kubernetes.io/component": "web",
    }
    beat = _one("Deployment", "vnpuportal-beat")["spec"]
    assert beat["replicas"] == 1
    assert beat["strategy"] == {"type": "Recreate"}
    assert beat["template"]["spec"]["automountServiceAccountToken"] is False


def test_no_secret_value_is_applied_from_the_directory():
    # the example Secret sits in a subdirectory that `kubectl apply -f deploy/` skips
    assert not [d for d in _documents() if d["kind"] == "Secret"]
    assert (DEPLOY / "examples" / "secret.example.yaml").is_file()


# --- against a cluster ------------------------------------------------------------


@pytest.mark.slow
def test_kubectl_apply_server_dry_run_then_for_real(sim, kubectl):
    # given the namespace (a dry run cannot create what later objects live in)
    namespace = kubectl("apply", "-f", str(DEPLOY / "00-namespace.yaml"))
    assert namespace.returncode == 0, namespace.stderr
    before = sim.store.rv
    # when every manifest is applied with a server-side dry run
    dry = kubectl("apply", "--dry-run=server", "-f", str(DEPLOY))
    # then the server accepted each object and stored none of them
    assert dry.returncode == 0, dry.stderr
    assert dry.stdout.count("(server dry run)") == len(_documents())
    # (what changed meanwhile is the simulator's own: node heartbeats, leases)
    changed, _ = sim.store.events_since(before, 0)
    ours = {doc["metadata"]["name"] for doc in _documents()}
    stored = [
        f"{event.res_key} {event.obj['metadata']['name']}"
        for event in changed
        if event.obj["metadata"]["name"] in ours
    ]
    assert stored == []
    assert sim.store.get(resources.CLUSTERROLE, "", "vnpuportal") is None
    # and a real apply, twice, creates then leaves them unchanged
    first = kubectl("apply", "-f", str(DEPLOY))
    assert first.returncode == 0, first.stderr
    again = kubectl("apply", "-f", str(DEPLOY))
    assert again.returncode == 0, again.stderr
    assert "deployment.apps/vnpuportal-web unchanged" in again.stdout
    role = sim.store.get(resources.CLUSTERROLE, "", "vnpuportal")
    assert role is not None
    assert role.obj["rules"] == cluster_role_rules()


def test_every_registered_call_says_why():
    assert all(call.why for call in PORTAL_CALLS)


def test_worker_liveness_watches_the_file_its_entrypoint_names():
    worker = _one("Deployment", "vnpuportal-worker")["spec"]["template"]["spec"]
    (container,) = worker["containers"]
    probe = " ".join(container["livenessProbe"]["exec"]["command"])
    entrypoint = (ROOT / "docker" / "entrypoint-worker.sh").read_text()
    assert "WORKER_ALIVE_FILE:-/tmp/vnpu-worker-alive" in entrypoint
    assert "/tmp/vnpu-worker-alive" in probe  # noqa: S108 - the container's own /tmp
    # well above the 2 s heartbeat, so that a broker restart is survived
    assert "-90 seconds" in probe
