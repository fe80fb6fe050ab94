"""kubectl get prints the real server's columns: simcluster answers as=Table.

Expected cells are computed here from the stored objects (``sim.store``) with
the printing rules of kube-apiserver's printers; simcluster's printers were
checked against a real kube-apiserver v1.35 for the same objects.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from simcluster import printers, resources

AGE = re.compile(r"^(\d+[smhdy])+$|^<unknown>$")
Row = dict[str, str]


def _ok(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 0, result.stderr
    return result.stdout


def parse(text: str) -> tuple[list[str], list[Row]]:
    """kubectl's aligned output as (headers, rows); cells are cut at header offsets."""
    lines = [line for line in text.splitlines() if line.strip()]
    header = lines[0]
    starts = [m.start() for m in re.finditer(r"(?<!\S)\S+(?: \S+)*", header)]
    names = [
        header[s:e].strip() for s, e in zip(starts, [*starts[1:], None], strict=True)
    ]
    rows = []
    for line in lines[1:]:
        cells = [
            line[s:e].strip() for s, e in zip(starts, [*starts[1:], None], strict=True)
        ]
        rows.append(dict(zip(names, cells, strict=True)))
    return names, rows


def _objects(sim, res: resources.ResourceType) -> list[dict[str, Any]]:
    return [s.obj for s in sim.store.list(res)[1]]


def _by(rows: list[Row], *keys: str) -> dict[tuple[str, ...], Row]:
    return {tuple(r[k] for k in keys): r for r in rows}


def _age_of(obj: dict[str, Any]) -> str:
    created = datetime.fromisoformat(obj["metadata"]["creationTimestamp"])
    return printers.human_duration((datetime.now(UTC) - created).total_seconds())


def _assert_age(cell: str, obj: dict[str, Any]) -> None:
    assert AGE.match(cell), cell
    if not cell.endswith("s"):  # older than two minutes: stable during the test
        assert cell == _age_of(obj)


def _labels(selector: dict[str, str] | None) -> str:
    return ",".join(f"{k}={v}" for k, v in sorted((selector or {}).items())) or "<none>"


@pytest.fixture
def settled(sim, wait_for) -> Any:
    """The guide cluster once every pod is Running and Ready."""

    def ready() -> bool:
        pods = _objects(sim, resources.POD)
        return bool(pods) and all(
            all(cs.get("ready") for cs in p["status"].get("containerStatuses") or [{}])
            for p in pods
        )

    wait_for(ready, timeout=5)
    return sim


# -- pods -----------------------------------------------------------------------
def test_get_pods_all_namespaces(kubectl, settled) -> None:
    headers, rows = parse(_ok(kubectl("get", "pods", "-A")))
    assert headers == ["NAMESPACE", "NAME", "READY", "STATUS", "RESTARTS", "AGE"]
    pods = _objects(settled, resources.POD)
    got = _by(rows, "NAMESPACE", "NAME")
    assert set(got) == {
        (p["metadata"]["namespace"], p["metadata"]["name"]) for p in pods
    }
    for pod in pods:
        row = got[(pod["metadata"]["namespace"], pod["metadata"]["name"])]
        statuses = pod["status"]["containerStatuses"]
        ready = sum(1 for cs in statuses if cs["ready"])
        assert row["READY"] == f"{ready}/{len(pod['spec']['containers'])}"
        assert row["STATUS"] == pod["status"]["phase"] == "Running"
        assert row["RESTARTS"] == str(sum(cs["restartCount"] for cs in statuses))
        _assert_age(row["AGE"], pod)


def test_get_pods_wide(kubectl, settled) -> None:
    headers, rows = parse(_ok(kubectl("get", "pods", "-n", "default", "-o", "wide")))
    assert headers == [
        "NAME",
        "READY",
        "STATUS",
        "RESTARTS",
        "AGE",
        "IP",
        "NODE",
        "NOMINATED NODE",
        "READINESS GATES",
    ]
    got = _by(rows, "NAME")
    for pod in _objects(settled, resources.POD):
        if pod["metadata"]["namespace"] != "default":
            continue
        row = got[(pod["metadata"]["name"],)]
        assert row["IP"] == pod["status"]["podIPs"][0]["ip"]
        assert row["NODE"] == pod["spec"]["nodeName"]
        assert row["NOMINATED NODE"] == "<none>"
        assert row["READINESS GATES"] == "<none>"


POD_YAML = """\
apiVersion: v1
kind: Pod
metadata: {{name: {name}, namespace: default, annotations: {annotations}}}
spec:
  nodeName: {node}
  containers: [{{name: main, image: busybox}}, {{name: side, image: busybox}}]
"""


def _pod(kubectl, name: str, node: str, annotations: str = "{}") -> None:
    manifest = POD_YAML.format(name=name, node=node, annotations=annotations)
    _ok(kubectl("create", "-f", "-", stdin=manifest))


def _set_status(kubectl, name: str, status: dict[str, Any]) -> None:
    patch = json.dumps({"status": status})
    _ok(
        kubectl(
            "patch", "pod", name, "--subresource=status", "--type=merge", "-p", patch
        )
    )


def test_pod_status_column_follows_the_printer_rules(kubectl, sim, wait_for) -> None:
    # given pods in the states kubectl users meet
    _pod(kubectl, "done", "npu-node-310p-01", '{"simcluster.io/run-seconds": "0"}')
    _pod(kubectl, "leaving", "npu-node-310p-01")
    _pod(kubectl, "creating", "ghost-node")  # no kubelet will start it
    _set_status(
        kubectl,
        "creating",
        {
            "containerStatuses": [
                {
                    "name": n,
                    "ready": False,
                    "restartCount": 0,
                    "image": "busybox",
                    "imageID": "",
                    "state": {"waiting": {"reason": "ContainerCreating"}},
                }
                for n in ("main", "side")
            ]
        },
    )
    _pod(kubectl, "rejected", "ghost-node")
    _set_status(
        kubectl,
        "rejected",
        {"phase": "Failed", "reason": "UnexpectedAdmissionError", "message": "x"},
    )
    _ok(
        kubectl(
            "create",
            "-f",
            "-",
            stdin=POD_YAML.format(
                name="waiting", node="ghost-node", annotations="{}"
            ).replace(
                "  nodeName: ghost-node\n", "  nodeSelector: {nowhere: 'true'}\n"
            ),
        )
    )

    def phase(name: str) -> str:
        found = sim.store.get(resources.POD, "default", name)
        return found.obj["status"].get("phase", "") if found else ""

    wait_for(lambda: phase("done") == "Succeeded" and phase("leaving") == "Running")
    _ok(kubectl("delete", "pod", "leaving", "--grace-period=60", "--wait=false"))
    # when
    _, rows = parse(_ok(kubectl("get", "pods", "-n", "default")))
    got = {r["NAME"]: r for r in rows}
    # then STATUS is what kube-apiserver prints for each
    assert got["done"]["STATUS"] == "Completed"  # the containers' terminated reason
    assert got["done"]["READY"] == "0/2"
    assert got["leaving"]["STATUS"] == "Terminating"  # deletionTimestamp set
    assert got["creating"]["STATUS"] == "ContainerCreating"  # a waiting reason
    assert got["rejected"]["STATUS"] == "UnexpectedAdmissionError"  # status.reason
    assert got["waiting"]["STATUS"] == "Pending"  # the phase, nothing else known
    assert got["waiting"]["READY"] == "0/2"


# -- other kinds ----------------------------------------------------------------
def _node_expected(node: dict[str, Any]) -> Row:
    status, info = node["status"], node["status"]["nodeInfo"]
    ready = next(c for c in status["conditions"] if c["type"] == "Ready")
    addresses = {a["type"]: a["address"] for a in status.get("addresses") or []}
    roles = sorted(
        k.split("/", 1)[1]
        for k in node["metadata"].get("labels") or {}
        if k.startswith("node-role.kubernetes.io/")
    )
    return {
        "NAME": node["metadata"]["name"],
        "STATUS": "Ready" if ready["status"] == "True" else "NotReady",
        "ROLES": ",".join(roles) or "<none>",
        "VERSION": info["kubeletVersion"],
        "INTERNAL-IP": addresses.get("InternalIP", "<none>"),
        "EXTERNAL-IP": addresses.get("ExternalIP", "<none>"),
        "OS-IMAGE": info["osImage"],
        "KERNEL-VERSION": info["kernelVersion"],
        "CONTAINER-RUNTIME": info["containerRuntimeVersion"],
    }


def test_get_nodes_and_wide(kubectl, sim) -> None:
    headers, rows = parse(_ok(kubectl("get", "nodes")))
    assert headers == ["NAME", "STATUS", "ROLES", "AGE", "VERSION"]
    headers, wide = parse(_ok(kubectl("get", "nodes", "-o", "wide")))
    assert headers == [
        "NAME",
        "STATUS",
        "ROLES",
        "AGE",
        "VERSION",
        "INTERNAL-IP",
        "EXTERNAL-IP",
        "OS-IMAGE",
        "KERNEL-VERSION",
        "CONTAINER-RUNTIME",
    ]
    nodes = _objects(sim, resources.NODE)
    assert len(rows) == len(wide) == len(nodes)
    got = _by(wide, "NAME")
    for node in nodes:
        row = got[(node["metadata"]["name"],)]
        expected = _node_expected(node)
        assert {k: row[k] for k in expected} == expected
        _assert_age(row["AGE"], node)
    # cordoned: the printer appends SchedulingDisabled
    _ok(kubectl("cordon", "npu-node-310p-01"))
    _, rows = parse(_ok(kubectl("get", "node", "npu-node-310p-01")))
    assert rows[0]["STATUS"] == "Ready,SchedulingDisabled"


SETUP = [
    (
        "create",
        "secret",
        "generic",
        "creds",
        "--from-literal=a=1",
        "--from-literal=b=2",
    ),
    ("create", "serviceaccount", "robot"),
    ("create", "service", "clusterip", "web", "--tcp=80:8080", "--tcp=443"),
    ("create", "service", "nodeport", "edge", "--tcp=81"),
    ("create", "pdb", "guard", "--selector=app=web", "--min-available=1"),
    ("create", "clusterrole", "reader", "--verb=get", "--resource=pods"),
    ("create", "clusterrolebinding", "readers", "--clusterrole=reader", "--user=bob"),
    ("create", "role", "cm-reader", "--verb=get", "--resource=configmaps"),
    (
        "create",
        "rolebinding",
        "cm-readers",
        "--role=cm-reader",
        "--serviceaccount=default:robot",
        "--group=devs",
    ),
]
PODGROUP = """\
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata: {name: gang, namespace: default}
spec: {minMember: 2, queue: default}
"""
EVENT = """\
apiVersion: v1
kind: Event
metadata: {name: ev1, namespace: default}
involvedObject: {kind: Pod, name: npu-pod-310p, namespace: default}
reason: Pulled
message: "  Image pulled  "
type: Normal
source: {component: kubelet, host: npu-node-310p-01}
firstTimestamp: "2026-01-01T00:00:00Z"
lastTimestamp: "2026-01-02T00:00:00Z"
count: 3
"""


def _service_cells(svc: dict[str, Any]) -> dict[str, str]:
    spec = svc["spec"]
    ports = ",".join(
        f"{p['port']}"
        + (f":{p['nodePort']}" if p.get("nodePort") else "")
        + f"/{p['protocol']}"
        for p in spec["ports"]
    )
    return {
        "TYPE": spec["type"],
        "CLUSTER-IP": spec["clusterIP"],
        "EXTERNAL-IP": "<none>",
        "PORT(S)": ports,
        "SELECTOR": _labels(spec.get("selector")),
    }


def _subjects(binding: dict[str, Any], kind: str) -> str:
    return ", ".join(
        (f"{s['namespace']}/{s['name']}" if kind == "ServiceAccount" else s["name"])
        for s in binding.get("subjects") or []
        if s["kind"] == kind
    )


def _binding_cells(binding: dict[str, Any]) -> dict[str, str]:
    ref = binding["roleRef"]
    return {
        "ROLE": f"{ref['kind']}/{ref['name']}",
        "USERS": _subjects(binding, "User"),
        "GROUPS": _subjects(binding, "Group"),
        "SERVICEACCOUNTS": _subjects(binding, "ServiceAccount"),
    }


def _deployment_cells(d: dict[str, Any]) -> dict[str, str]:
    containers = d["spec"]["template"]["spec"]["containers"]
    return {
        "READY": f"{d['status'].get('readyReplicas', 0)}/{d['spec']['replicas']}",
        "UP-TO-DATE": str(d["status"].get("updatedReplicas", 0)),
        "AVAILABLE": str(d["status"].get("availableReplicas", 0)),
        "CONTAINERS": ",".join(c["name"] for c in containers),
        "IMAGES": ",".join(c["image"] for c in containers),
        "SELECTOR": _labels(d["spec"]["selector"]["matchLabels"]),
    }


def _daemonset_cells(ds: dict[str, Any]) -> dict[str, str]:
    status, template = ds["status"], ds["spec"]["template"]["spec"]
    return {
        "DESIRED": str(status["desiredNumberScheduled"]),
        "CURRENT": str(status["currentNumberScheduled"]),
        "READY": str(status["numberReady"]),
        "UP-TO-DATE": str(status.get("updatedNumberScheduled", 0)),
        "AVAILABLE": str(status.get("numberAvailable", 0)),
        "NODE SELECTOR": _labels(template.get("nodeSelector")),
        "CONTAINERS": ",".join(c["name"] for c in template["containers"]),
        "IMAGES": ",".join(c["image"] for c in template["containers"]),
        "SELECTOR": _labels(ds["spec"]["selector"]["matchLabels"]),
    }


Expect = Callable[[dict[str, Any]], dict[str, str]]
KINDS: list[tuple[str, resources.ResourceType, list[str], Expect]] = [
    (
        "namespaces",
        resources.NAMESPACE,
        ["NAME", "STATUS", "AGE"],
        lambda o: {"STATUS": o["status"]["phase"]},
    ),
    (
        "configmaps",
        resources.CONFIGMAP,
        ["NAMESPACE", "NAME", "DATA", "AGE"],
        lambda o: {
            "DATA": str(len(o.get("data") or {}) + len(o.get("binaryData") or {}))
        },
    ),
    (
        "secrets",
        resources.SECRET,
        ["NAMESPACE", "NAME", "TYPE", "DATA", "AGE"],
        lambda o: {"TYPE": o["type"], "DATA": str(len(o.get("data") or {}))},
    ),
    (
        "serviceaccounts",
        resources.SERVICEACCOUNT,
        ["NAMESPACE", "NAME", "AGE"],
        lambda o: {},
    ),
    (
        "services",
        resources.SERVICE,
        [
            "NAMESPACE",
            "NAME",
            "TYPE",
            "CLUSTER-IP",
            "EXTERNAL-IP",
            "PORT(S)",
            "AGE",
            "SELECTOR",
        ],
        _service_cells,
    ),
    (
        "deployments",
        resources.DEPLOYMENT,
        [
            "NAMESPACE",
            "NAME",
            "READY",
            "UP-TO-DATE",
            "AVAILABLE",
            "AGE",
            "CONTAINERS",
            "IMAGES",
            "SELECTOR",
        ],
        _deployment_cells,
    ),
    (
        "daemonsets",
        resources.DAEMONSET,
        [
            "NAMESPACE",
            "NAME",
            "DESIRED",
            "CURRENT",
            "READY",
            "UP-TO-DATE",
            "AVAILABLE",
            "NODE SELECTOR",
            "AGE",
            "CONTAINERS",
            "IMAGES",
            "SELECTOR",
        ],
        _daemonset_cells,
    ),
    (
        "priorityclasses",
        resources.PRIORITYCLASS,
        ["NAME", "VALUE", "GLOBAL-DEFAULT", "AGE", "PREEMPTIONPOLICY"],
        lambda o: {
            "VALUE": str(o["value"]),
            "GLOBAL-DEFAULT": str(bool(o.get("globalDefault"))).lower(),
            "PREEMPTIONPOLICY": o.get("preemptionPolicy", "PreemptLowerPriority"),
        },
    ),
    (
        "poddisruptionbudgets",
        resources.PDB,
        [
            "NAMESPACE",
            "NAME",
            "MIN AVAILABLE",
            "MAX UNAVAILABLE",
            "ALLOWED DISRUPTIONS",
            "AGE",
        ],
        lambda o: {
            "MIN AVAILABLE": str(o["spec"].get("minAvailable", "N/A")),
            "MAX UNAVAILABLE": str(o["spec"].get("maxUnavailable", "N/A")),
            "ALLOWED DISRUPTIONS": str(o["status"]["disruptionsAllowed"]),
        },
    ),
    (
        "clusterrolebindings",
        resources.CLUSTERROLEBINDING,
        ["NAME", "ROLE", "AGE", "USERS", "GROUPS", "SERVICEACCOUNTS"],
        _binding_cells,
    ),
    (
        "rolebindings",
        resources.ROLEBINDING,
        ["NAMESPACE", "NAME", "ROLE", "AGE", "USERS", "GROUPS", "SERVICEACCOUNTS"],
        _binding_cells,
    ),
    # No printer upstream: the default table, creation time as RFC 3339.
    (
        "clusterroles",
        resources.CLUSTERROLE,
        ["NAME", "CREATED AT"],
        lambda o: {"CREATED AT": o["metadata"]["creationTimestamp"]},
    ),
    (
        "roles",
        resources.ROLE,
        ["NAMESPACE", "NAME", "CREATED AT"],
        lambda o: {"CREATED AT": o["metadata"]["creationTimestamp"]},
    ),
    # Volcano's CRDs: their additionalPrinterColumns (Queue has no AGE column).
    (
        "queues",
        resources.QUEUE,
        ["NAME", "PARENT"],
        lambda o: {"PARENT": o["spec"].get("parent", "")},
    ),
    (
        "podgroups",
        resources.PODGROUP,
        ["NAMESPACE", "NAME", "STATUS", "MINMEMBER", "RUNNINGS", "AGE", "QUEUE"],
        lambda o: {
            "STATUS": (o.get("status") or {}).get("phase", ""),
            "MINMEMBER": str(o["spec"]["minMember"]),
            "QUEUE": o["spec"]["queue"],
        },
    ),
    (
        "events",
        resources.EVENT,
        [
            "NAMESPACE",
            "LAST SEEN",
            "TYPE",
            "REASON",
            "OBJECT",
            "SUBOBJECT",
            "SOURCE",
            "MESSAGE",
            "FIRST SEEN",
            "COUNT",
            "NAME",
        ],
        lambda o: {
            "TYPE": o["type"],
            "REASON": o["reason"],
            "OBJECT": f"{o['involvedObject']['kind'].lower()}/{o['involvedObject']['name']}",
            "SOURCE": f"{o['source']['component']}, {o['source']['host']}",
            "MESSAGE": o["message"].strip(),
            "COUNT": str(o["count"]),
            "NAME": o["metadata"]["name"],
        },
    ),
]


def test_get_every_kind_prints_the_servers_columns(kubectl, settled) -> None:
    # given one object of each kind the guide scenario lacks
    for args in SETUP:
        _ok(kubectl(*args))
    _ok(kubectl("create", "-f", "-", stdin=PODGROUP))
    _ok(kubectl("create", "-f", "-", stdin=EVENT))
    for plural, res, headers, expect in KINDS:
        # when
        out = _ok(kubectl("get", plural, "-o", "wide", "-A"))
        # then
        got_headers, rows = parse(out)
        assert got_headers == headers, plural
        objects = _objects(settled, res)
        assert len(rows) == len(objects), plural
        for obj, row in zip(objects, rows, strict=True):
            assert row["NAME"] == obj["metadata"]["name"], plural
            expected = expect(obj)
            assert {k: row[k] for k in expected} == expected, plural
            if "AGE" in row:
                _assert_age(row["AGE"], obj)


def test_get_one_object_sorting_and_labels(kubectl, settled) -> None:
    headers, rows = parse(_ok(kubectl("get", "pod", "npu-pod-910b", "--show-labels")))
    assert headers == ["NAME", "READY", "STATUS", "RESTARTS", "AGE", "LABELS"]
    pod = settled.store.get(resources.POD, "default", "npu-pod-910b").obj
    assert rows[0]["LABELS"] == _labels(pod["metadata"]["labels"])
    # --sort-by needs the whole object: kubectl asks includeObject=Object
    _, rows = parse(_ok(kubectl("get", "pods", "-A", "--sort-by=.status.podIP")))
    pods = sorted(_objects(settled, resources.POD), key=lambda p: p["status"]["podIP"])
    assert [r["NAME"] for r in rows] == [p["metadata"]["name"] for p in pods]


def test_kubectl_get_watch_prints_table_rows(
    kubectl, kubeconfig: Path, sim, wait_for
) -> None:
    watcher = subprocess.Popen(
        [
            "kubectl",
            "--kubeconfig",
            str(kubeconfig),
            "get",
            "cm",
            "-w",
            "--request-timeout=3s",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    wait_for(  # kubectl's watch is open
        lambda: any(
            e.verb == "watch" and e.resource == "configmaps" for e in sim.audit
        ),
        timeout=10,
    )
    _ok(
        kubectl(
            "create", "configmap", "seen", "--from-literal=a=1", "--from-literal=b=2"
        )
    )
    try:
        out, _ = watcher.communicate(timeout=10)
    finally:
        watcher.kill()
    headers, rows = parse(out)
    assert headers == ["NAME", "DATA", "AGE"]
    # first the namespace's kube-root-ca.crt (the initial list), then the new one
    assert [row["NAME"] for row in rows] == ["kube-root-ca.crt", "seen"]
    assert rows[1]["DATA"] == "2"
