"""simcluster measured against the real control plane: the same kubectl session on both.

One script of kubectl commands (create, apply, replace, patch in its three
types, label, annotate, get with server-side tables and ``-o wide``, selectors,
watch, delete, eviction, rollout restart, and the errors a person meets) runs
against the real kube-apiserver and against simcluster, in a namespace of its
own on each. What kubectl prints must be the same once the values that differ
between any two clusters are masked (ages, resourceVersions, UIDs, IPs,
timestamps). A difference that remains is listed in simcluster/README.md
("Differences from the real control plane") and in KNOWN below, with its
reason; a listed difference that has gone away fails the test too, so the list
stays true.
"""

from __future__ import annotations

import json
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from simcluster.server import SimCluster
from tests.polling import wait_for

pytestmark = [pytest.mark.realstack, pytest.mark.slow]

NS = "diff"
NODE = "npu-node-310p-01"  # in both guide scenarios


def _pod(name: str, labels: dict[str, str]) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": NS, "labels": labels},
        "spec": {
            "nodeName": NODE,
            "terminationGracePeriodSeconds": 1,
            "tolerations": [{"operator": "Exists"}],
            "containers": [
                {"name": "c", "image": "busybox:1.36", "command": ["sleep", "1d"]}
            ],
        },
    }


DEPLOYMENT = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "web", "namespace": NS},
    "spec": {
        "replicas": 1,
        "selector": {"matchLabels": {"app": "web"}},
        "template": {
            "metadata": {"labels": {"app": "web"}},
            "spec": {
                "nodeName": NODE,
                "terminationGracePeriodSeconds": 1,
                "tolerations": [{"operator": "Exists"}],
                "containers": [{"name": "web", "image": "nginx:1.27"}],
            },
        },
    },
}
CONFIGMAP = {
    "apiVersion": "v1",
    "kind": "ConfigMap",
    "metadata": {"name": "applied", "namespace": NS, "labels": {"tier": "a"}},
    "data": {"k": "v1"},
}


@dataclass(frozen=True)
class Step:
    """One kubectl command; ``last`` compares only the last line of its output."""

    args: tuple[str, ...]
    stdin: str | None = None
    last: bool = False
    watch_seconds: float = 0.0
    wait_for: tuple[str, ...] = ()  # a get that must print this before the step runs


def _steps() -> list[Step]:
    s = Step
    return [
        s(("create", "namespace", NS)),
        s(("create", "namespace", NS)),  # AlreadyExists
        s(("create", "configmap", "made", "-n", NS, "--from-literal=a=b")),
        s(("apply", "-f", "-"), stdin=json.dumps(CONFIGMAP)),
        s(("apply", "-f", "-"), stdin=json.dumps({**CONFIGMAP, "data": {"k": "v2"}})),
        s(("apply", "-f", "-"), stdin=json.dumps({**CONFIGMAP, "data": {"k": "v2"}})),
        s(("get", "configmap", "applied", "-n", NS, "-o", "jsonpath={.data.k}")),
        s(("replace", "-f", "-"), stdin=json.dumps({**CONFIGMAP, "data": {"k": "v3"}})),
        s(
            (
                "patch",
                "configmap",
                "made",
                "-n",
                NS,
                "--type=merge",
                "-p",
                '{"data":{"m":"1"}}',
            )
        ),
        s(
            (
                "patch",
                "configmap",
                "made",
                "-n",
                NS,
                "--type=json",
                "-p",
                '[{"op":"add","path":"/data/j","value":"2"}]',
            )
        ),
        s(("patch", "configmap", "made", "-n", NS, "-p", '{"data":{"s":"3"}}')),
        s(("get", "configmap", "made", "-n", NS, "-o", "jsonpath={.data}")),
        s(("label", "configmap", "made", "-n", NS, "tier=b")),
        s(("label", "configmap", "made", "-n", NS, "tier=c")),  # needs --overwrite
        s(("label", "configmap", "made", "-n", NS, "tier=c", "--overwrite")),
        s(("annotate", "configmap", "made", "-n", NS, "note=hello")),
        s(("get", "configmaps", "-n", NS)),
        s(("get", "configmaps", "-n", NS, "-l", "tier=c", "--show-labels")),
        s(("get", "configmaps", "-n", NS, "--field-selector", "metadata.name=applied")),
        s(("get", "configmap", "nope", "-n", NS)),  # NotFound
        s(("create", "-f", "-"), stdin=json.dumps(_pod("p1", {"app": "one"}))),
        s(("create", "-f", "-"), stdin=json.dumps(_pod("p2", {"app": "two"}))),
        s(
            ("get", "pods", "-n", NS, "-o", "wide"),
            wait_for=(
                "get",
                "pods",
                "-n",
                NS,
                "-o",
                "jsonpath={.items[*].status.containerStatuses[0].ready}",
                "true true",
            ),
        ),
        s(("get", "pods", "-n", NS, "-l", "app=one")),
        s(("get", "pods", "-n", NS, "-l", "app in (one,two)", "-o", "name")),
        s(
            (
                "get",
                "pods",
                "-n",
                NS,
                "--field-selector",
                "status.phase=Running",
                "-o",
                "name",
            )
        ),
        s(("get", "node", NODE, "-o", "jsonpath={.metadata.labels.ascend}")),
        s(
            ("get", "configmaps", "-n", NS, "--watch", "--output-watch-events"),
            watch_seconds=2.5,
        ),
        s(("apply", "-f", "-"), stdin=json.dumps(DEPLOYMENT)),
        s(
            ("rollout", "status", "deployment/web", "-n", NS, "--timeout=90s"),
            last=True,
        ),
        s(("rollout", "restart", "deployment/web", "-n", NS)),
        s(
            ("rollout", "status", "deployment/web", "-n", NS, "--timeout=90s"),
            last=True,
        ),
        s(("get", "deployment", "web", "-n", NS)),
        s(("delete", "configmap", "made", "-n", NS)),
        s(("delete", "configmap", "made", "-n", NS)),  # NotFound
        s(("delete", "pod", "p2", "-n", NS, "--wait=true")),
        s(
            ("get", "pods", "-n", NS, "-l", "app", "-o", "name"),
            # the rollout's old pod is gone (KWOK keeps it for its grace period)
            wait_for=(
                "get",
                "pods",
                "-n",
                NS,
                "-o",
                "jsonpath={.items[*].metadata.deletionTimestamp}",
                "",
            ),
        ),
    ]


# Masked: what differs between any two clusters holding the same objects.
MASKS = [
    # before the ages: a hash of digits ending in d, h, m or s reads as one
    # (cold fresh-clone run f18: "web-<age>-xkfdr")
    (re.compile(r"web-[0-9a-z]{8,10}-[0-9a-z]{5}\b"), "web-<hash>"),
    (re.compile(r"\b\d+(\.\d+)?(ms|s|m|h|d)(\d+(s|m|h))?\b"), "<age>"),
    (re.compile(r"\b\d{1,3}(\.\d{1,3}){3}\b"), "<ip>"),
    (
        re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b"),
        "<uid>",
    ),
    (re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"), "<time>"),
    (re.compile(r"[ \t]+"), " "),
]

# Differences that remain, each with its reason (also in simcluster/README.md).
KNOWN: dict[tuple[str, ...], str] = {}


def _mask(text: str) -> str:
    for pattern, replacement in MASKS:
        text = pattern.sub(replacement, text)
    return "\n".join(line.rstrip() for line in text.strip().splitlines())


class Kubectl:
    """The built kubectl against one cluster."""

    def __init__(self, binary: Path, kubeconfig: Path) -> None:
        self.binary, self.kubeconfig = binary, kubeconfig

    def __call__(self, step: Step) -> str:
        command = [str(self.binary), "--kubeconfig", str(self.kubeconfig), *step.args]
        if step.wait_for:
            *args, expected = step.wait_for
            self._wait(args, expected)
        try:
            done = subprocess.run(
                command,
                input=step.stdin,
                capture_output=True,
                text=True,
                timeout=step.watch_seconds or 120,
                check=False,
            )
            out, err, code = done.stdout, done.stderr, str(done.returncode)
        except subprocess.TimeoutExpired as stopped:
            if not step.watch_seconds:
                raise
            out = (
                (stopped.stdout or b"").decode()
                if isinstance(stopped.stdout, bytes)
                else stopped.stdout or ""
            )
            err, code = "", "watching"
        if step.last:
            out = out.strip().splitlines()[-1] if out.strip() else ""
        return f"exit {code}\n{_mask(out)}\n{_mask(err)}"

    def _wait(self, args: list[str], expected: str) -> None:
        printed: list[str] = []

        def prints() -> bool:
            done = subprocess.run(
                [str(self.binary), "--kubeconfig", str(self.kubeconfig), *args],
                capture_output=True,
                text=True,
                check=False,
            )
            printed[:] = [done.stdout.strip() + done.stderr.strip()]
            return done.stdout.strip() == expected

        wait_for(
            prints,
            lambda: f"{' '.join(args)} to print {expected!r}; last: {printed}",
            60,
            0.3,
        )


@pytest.fixture
def simulated(tmp_path):
    sim = SimCluster(
        scenario="guide", port=0, ready_delay=0.2, pod_shutdown_seconds=1.0
    ).start()
    yield sim
    sim.stop()


def test_kubectl_sees_simcluster_as_it_sees_the_real_api_server(
    kube_stack, simulated, tmp_path
):
    kubectl = kube_stack.kubectl_path
    real = Kubectl(kubectl, kube_stack.write_kubeconfig(tmp_path / "real.kubeconfig"))
    sim = Kubectl(kubectl, simulated.write_kubeconfig(tmp_path / "sim.kubeconfig"))
    try:
        differences = []
        for step in _steps():
            real_out, sim_out = real(step), sim(step)
            if (real_out != sim_out) != (step.args in KNOWN):
                differences.append(
                    f"$ kubectl {' '.join(step.args)}\n--- real\n{real_out}\n--- simcluster\n{sim_out}"
                )
    finally:
        kube_stack.kubectl("delete", "namespace", NS, "--wait=false", check=False)
    assert not differences, "\n\n".join(differences)


def _leaving(core, namespace: str) -> bool:
    """Whether the evicted pod is terminating or already gone.

    Which of the two depends on how fast the node side finishes a one-second
    grace period, so on a busy machine the pod may be gone before we look.
    """
    from kubernetes.client.rest import ApiException

    try:
        pod = core.read_namespaced_pod("free", namespace)
    except ApiException as error:
        if error.status == 404:
            return True
        raise
    return pod.metadata.deletion_timestamp is not None


def _eviction_answers(api_client, namespace: str) -> list[tuple]:
    """Create pods and a PodDisruptionBudget, then ask the Eviction API three times."""
    from kubernetes import client
    from kubernetes.client.rest import ApiException

    core, policy = client.CoreV1Api(api_client), client.PolicyV1Api(api_client)
    core.create_namespace({"metadata": {"name": namespace}})
    for name, app in (("free", "free"), ("kept", "kept")):
        pod = _pod(name, {"app": app})
        pod["metadata"]["namespace"] = namespace
        core.create_namespaced_pod(namespace, pod)
    policy.create_namespaced_pod_disruption_budget(
        namespace,
        {
            "metadata": {"name": "keep"},
            "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "kept"}}},
        },
    )

    def counted() -> bool:
        """the disruption controller to count the kept pod"""
        status = policy.read_namespaced_pod_disruption_budget("keep", namespace).status
        return bool(status and status.current_healthy == 1)

    wait_for(counted, timeout=60, interval=0.3)
    answers = []
    for name in ("free", "kept", "missing"):
        body = {"metadata": {"name": name, "namespace": namespace}}
        try:
            core.create_namespaced_pod_eviction(name, namespace, body)
            answers.append((name, 201, ""))
        except ApiException as error:
            answers.append(
                (name, error.status, _mask(json.loads(error.body)["message"]))
            )
    answers.append(("free is terminating or gone", _leaving(core, namespace), ""))
    return answers


def test_the_eviction_api_answers_alike(kube_stack, simulated, tmp_path):
    real = _eviction_answers(kube_stack.kubernetes_client(), "diff-evict")
    sim = _eviction_answers(
        simulated.kubernetes_client(tmp_path / "sim.kubeconfig"), "diff-evict"
    )
    kube_stack.kubectl("delete", "namespace", "diff-evict", "--wait=false", check=False)
    assert sim == real
    assert [status for _, status, _ in real] == [201, 429, 404, True]
