"""The pod a request becomes: names, labels, and the manifest (pure functions).

The pod is shaped like the guide's vNPU pods (``schedulerName:
volcano``, or HAMi's scheduler where the cluster uses it; limits and requests ``huawei.com/<cw>: "1"`` and
``huawei.com/<cw>-memory``), plus what makes admission exact and traceable:

- the node with required node affinity on ``kubernetes.io/hostname``, so the
  scheduler binds it where the portal reserved room, and, under HAMi's
  scheduler (which reads it), the chip pinned with ``hami.io/use-<cw>-uuid``;
- the priority class, and the Volcano queue annotation;
- after a preemption, a toleration of the node hold (``hold_taint``) that
  keeps every other pod off the node while the victims leave;
- labels linking it to the request, and a name derived from the request id and
  attempt, so a retried creation finds the pod instead of making a second.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

POD_PREFIX = "vnpu-req-"
LABEL_REQUEST = "vnpu-portal/request"
LABEL_QUEUE = "vnpu-portal/queue"
LABEL_ATTEMPT = "vnpu-portal/attempt"
LABEL_MANAGED_BY = "app.kubernetes.io/managed-by"
MANAGED_BY = "vnpu-portal"
ANNOTATION_PREEMPTED_BY = "vnpu-portal/preempted-by"
ANNOTATION_PROPOSAL = "vnpu-portal/preemption-proposal"
#: On a pod a drain evicts: the drain's id (apps.scheduling.drain).
ANNOTATION_DRAIN = "vnpu-portal/drain"
VOLCANO_QUEUE = "scheduling.volcano.sh/queue-name"
# A workload's grace period after SIGTERM at most: a release, preemption or
# drain waits for it, and its room stays taken meanwhile.
MAX_GRACE_SECONDS = 3600
HOSTNAME_LABEL = "kubernetes.io/hostname"
CONTAINER_NAME = "main"
#: The taint that holds a node for the requests its preemptions free room for.
HOLD_TAINT_KEY = "vnpu-portal/held"
#: Every hold key the portal has used: today's, and the per-request
#: ``vnpu-portal/held-for-request-<id>`` of earlier releases (lifted on sight).
HOLD_TAINT_PREFIX = HOLD_TAINT_KEY


def pod_name_for(request_id: int, attempt: int) -> str:
    """The pod name of one admission attempt (the first has no suffix).

    A new attempt gets a new name because the previous pod may still be
    terminating: re-using its name would "find" the dying pod.
    """
    base = f"{POD_PREFIX}{request_id}"
    return base if attempt == 0 else f"{base}-{attempt}"


def hold_taint() -> dict[str, str]:
    """The taint that keeps a node's freed room for the requests held there.

    Volcano treats a terminating victim's vNPU as free and serves queues
    before priorities, so a victim's replacement (or any other pod) could be
    bound into the room a preemption frees. While the victims leave, the node
    carries this NoSchedule taint. It is one per node, whatever the number of
    preemptions on it: every held request's pod tolerates it (each is pinned
    to its own node and chip), and it is lifted when the last of them no
    longer waits. One taint per request deadlocked two approved preemptions
    on one node: each pod tolerated only its own taint.
    """
    return {"key": HOLD_TAINT_KEY, "value": "true", "effect": "NoSchedule"}


def legacy_hold_key(request_id: int) -> str:
    """The per-request hold key earlier releases used (lifted, never set)."""
    return f"{HOLD_TAINT_KEY}-for-request-{request_id}"


def uuid_annotation(common_word: str) -> str:
    """HAMi's pin annotation: only these chip UUIDs may serve the pod."""
    return f"hami.io/use-{common_word}-uuid"


def is_pod_of(pod: Mapping[str, Any], request_id: int) -> bool:
    """True when ``pod`` carries the label of request ``request_id``."""
    labels = (pod.get("metadata") or {}).get("labels") or {}
    return labels.get(LABEL_REQUEST) == str(request_id)


def vnpu_resources(
    resource_name: str, memory_resource_name: str, memory: int | None
) -> dict[str, str]:
    """Limits (= requests) for one vNPU; no ``-memory`` asks for a whole card."""
    resources = {resource_name: "1"}
    if memory is not None:
        resources[memory_resource_name] = str(memory)
    return resources


def pod_manifest(
    *,
    name: str,
    namespace: str,
    request_id: int,
    attempt: int,
    queue: str,
    priority_class: str,
    common_word: str,
    chip_uuid: str,
    node_hostname: str,
    resources: Mapping[str, str],
    workload: Mapping[str, Any] | None,
    pod_template: Mapping[str, Any] | None,
    security_context: Mapping[str, Any] | None = None,
    tolerate_hold: bool = False,
    scheduler_name: str = "volcano",
    pin_chip: bool = False,
) -> dict[str, Any]:
    """The pod to create for one admission of a request.

    Args:
        name: The pod name (``pod_name_for``).
        namespace: Where the pod runs.
        request_id: The request it serves (label ``vnpu-portal/request``).
        attempt: Which admission attempt this is.
        queue: The request's queue (Volcano annotation and label).
        priority_class: The PriorityClass name.
        common_word: The chip type's commonWord (for the pin annotation).
        chip_uuid: The chip reserved for it.
        node_hostname: The node's ``kubernetes.io/hostname`` label value.
        resources: The vNPU limits (``vnpu_resources``).
        workload: ``{image, command, args, env, grace_seconds?}`` when no pod
            template is given.
        pod_template: A PodTemplateSpec (``{metadata?, spec}``) to start from.
        security_context: The container securityContext of a workload's pod
            (the queue's Pod Security level decides it).
        tolerate_hold: The request's node is held for it (a preemption):
            tolerate that hold's taint.
        scheduler_name: The ``schedulerName`` (Volcano, or HAMi's scheduler).
        pin_chip: Pin the chip with ``hami.io/use-<cw>-uuid``: only where the
            scheduler reads it (HAMi's; Volcano never does, so the pod does
            not claim a promise nobody keeps).

    Returns:
        The Pod object as a dict.
    """
    template = template_of(workload, pod_template, security_context)
    metadata = template.get("metadata") or {}
    spec = template.get("spec") or {}
    labels = {
        **(metadata.get("labels") or {}),
        LABEL_REQUEST: str(request_id),
        LABEL_QUEUE: queue,
        LABEL_ATTEMPT: str(attempt),
        LABEL_MANAGED_BY: MANAGED_BY,
    }
    annotations = {
        **(metadata.get("annotations") or {}),
        VOLCANO_QUEUE: queue,
    }
    if pin_chip:
        annotations[uuid_annotation(common_word)] = chip_uuid
    _set_scheduling(spec, scheduler_name, priority_class)
    _require_node(spec, node_hostname)
    if tolerate_hold:
        _tolerate_hold(spec)
    _limit_first_container(spec, resources)
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": labels,
            "annotations": annotations,
        },
        "spec": spec,
    }


def _set_scheduling(
    spec: dict[str, Any], scheduler_name: str, priority_class: str
) -> None:
    """Name the scheduler and the PriorityClass; the pod restarts never by default."""
    spec["schedulerName"] = scheduler_name
    spec["priorityClassName"] = priority_class
    # The admission controller derives it from the class; a stale copy would be refused.
    spec.pop("priority", None)
    spec.setdefault("restartPolicy", "Never")


def _require_node(spec: dict[str, Any], node_hostname: str) -> None:
    """Keep the pod's own node affinity, but require the reserved node."""
    affinity = spec.setdefault("affinity", {})
    affinity["nodeAffinity"] = {
        **(affinity.get("nodeAffinity") or {}),
        "requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [
                {
                    "matchExpressions": [
                        {
                            "key": HOSTNAME_LABEL,
                            "operator": "In",
                            "values": [node_hostname],
                        }
                    ]
                }
            ]
        },
    }


def _tolerate_hold(spec: dict[str, Any]) -> None:
    """Tolerate the node hold (this request's pod is held for by a preemption)."""
    taint = hold_taint()
    spec["tolerations"] = [
        *(spec.get("tolerations") or []),
        {
            "key": taint["key"],
            "operator": "Equal",
            "value": taint["value"],
            "effect": taint["effect"],
        },
    ]


def _limit_first_container(spec: dict[str, Any], resources: Mapping[str, str]) -> None:
    """Ask for the vNPU as limits and requests of the first container.

    One vNPU serves one container (HAMi, ascend-docker-runtime): the first.
    """
    first = spec["containers"][0]
    res = first.setdefault("resources", {})
    res["limits"] = {**(res.get("limits") or {}), **resources}
    res["requests"] = {**(res.get("requests") or {}), **resources}


def template_of(
    workload: Mapping[str, Any] | None,
    pod_template: Mapping[str, Any] | None,
    security_context: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The PodTemplateSpec a request's pod is built from (a copy: callers may edit it).

    A pod template is used as given; a workload becomes one container named
    ``main`` with ``security_context``, if any. The pod policy is checked on
    this, before the portal adds its own fields.
    """
    if pod_template:
        return copy.deepcopy(dict(pod_template))
    container = _container(workload or {})
    if security_context:
        container["securityContext"] = copy.deepcopy(dict(security_context))
    spec: dict[str, Any] = {"containers": [container]}
    grace = (workload or {}).get("grace_seconds")
    if grace is not None:
        spec["terminationGracePeriodSeconds"] = grace
    return {"spec": spec}


def _container(workload: Mapping[str, Any]) -> dict[str, Any]:
    container: dict[str, Any] = {
        "name": CONTAINER_NAME,
        "image": workload["image"],
    }
    if workload.get("command"):
        container["command"] = list(workload["command"])
    if workload.get("args"):
        container["args"] = list(workload["args"])
    if workload.get("env"):
        # "secret" is the portal's display mark, not a field of a container's env.
        container["env"] = [
            {"name": e["name"], "value": e["value"]} for e in workload["env"]
        ]
    return container


def pod_problem(pod: Mapping[str, Any]) -> str:
    """A short description of why a terminal or terminating pod stopped."""
    status = pod.get("status") or {}
    parts = [status.get("reason") or "", status.get("message") or ""]
    for cs in status.get("containerStatuses") or []:
        terminated = (cs.get("state") or {}).get("terminated") or {}
        if terminated:
            parts.append(
                f"container {cs.get('name')} exited {terminated.get('exitCode')}"
                + (f" ({terminated['reason']})" if terminated.get("reason") else "")
            )
    return "; ".join(p for p in parts if p)


#: The ``startedAt`` kubelet reports for a container that was never started
#: (the runtime's zero start time, as a Unix time).
_EPOCH = "1970-01-01T00:00:00Z"
#: Terminations of a container that was never started.
_START_FAILURES = frozenset(
    {"StartError", "ContainerCannotRun", "CreateContainerError", "RunContainerError"}
)


def never_ran(pod: Mapping[str, Any]) -> bool:
    """True when ``pod`` is Failed and none of its containers ever started.

    Admission refused it (``UnexpectedAdmissionError``: no container status),
    it was evicted or timed out before starting (containers still waiting),
    or no container could be created (``StartError``: terminated, started at
    the zero time). Such a pod says nothing about the job: the request
    deserves another pod.
    """
    status = pod.get("status") or {}
    if status.get("phase") != "Failed":
        return False
    statuses = [
        *(status.get("initContainerStatuses") or []),
        *(status.get("containerStatuses") or []),
    ]
    for container in statuses:
        for state in (container.get("state") or {}, container.get("lastState") or {}):
            if "running" in state or _started(state.get("terminated") or {}):
                return False
    return True


def _started(terminated: Mapping[str, Any]) -> bool:
    if not terminated:
        return False
    at = terminated.get("startedAt")
    if at:
        return at != _EPOCH
    return terminated.get("reason") not in _START_FAILURES  # no time: the reason says
