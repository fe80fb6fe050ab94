"""The device plugin's DaemonSet pods on the real API server, as its processes see them.

The plugin DaemonSet is a real one: kube-controller-manager makes a pod on
every node it selects and makes a new one when a pod is deleted or the
DaemonSet is rolled; kube-scheduler places it and KWOK runs it. What the
process in that pod reads at start is simcluster's rule
(``simcluster/plugin_start.py``); this module finds the pods and the
ConfigMaps mounted into them, and writes what the kubelet shows of a process
that exits at start.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from simcluster.plugin_start import FLAG_EXIT_CODE, ConfigMapReader

PLUGIN_DAEMONSET = ("kube-system", "hami-ascend-device-plugin")
# The kubelet's first back-off after a container exits (it doubles each time).
FIRST_BACK_OFF = "10s"


def _read(call: Any, name: str, namespace: str) -> Any:
    """``call(name, namespace)``'s object; None when it does not exist."""
    from kubernetes.client.rest import ApiException

    try:
        return call(name, namespace)
    except ApiException as error:
        if error.status == 404:
            return None
        raise


def configmap_reader(core: Any) -> ConfigMapReader:
    """Read ConfigMaps from the API server as a pod's volume shows them."""

    def read(namespace: str, name: str) -> dict[str, str] | None:
        found = _read(core.read_namespaced_config_map, name, namespace)
        return None if found is None else dict(found.data or {})

    return read


def _is_running(pod: dict[str, Any], owner_uid: str) -> bool:
    """A pod of the DaemonSet ``owner_uid`` whose container runs (not being deleted)."""
    meta = pod.get("metadata") or {}
    owners = meta.get("ownerReferences") or []
    return (
        any(o.get("controller") and o.get("uid") == owner_uid for o in owners)
        and (pod.get("status") or {}).get("phase") == "Running"
        and not meta.get("deletionTimestamp")
        and bool((pod.get("spec") or {}).get("nodeName"))
    )


def running_plugin_pods(core: Any, apps: Any) -> dict[str, dict[str, Any]] | None:
    """The running plugin pod of each node (raw JSON); None: no DaemonSet.

    A node whose pod is being deleted, or whose new pod has not started yet,
    has none: its plugin is not running.
    """
    namespace, name = PLUGIN_DAEMONSET
    ds = _read(apps.read_namespaced_daemon_set, name, namespace)
    if ds is None:
        return None
    labels = (ds.spec.selector.match_labels or {}) if ds.spec.selector else {}
    response = core.list_namespaced_pod(
        namespace,
        label_selector=",".join(f"{k}={v}" for k, v in sorted(labels.items())),
        _preload_content=False,
    )
    pods = json.loads(response.data).get("items") or []
    return {
        pod["spec"]["nodeName"]: pod
        for pod in pods
        if _is_running(pod, ds.metadata.uid)
    }


def crash_status(pod: dict[str, Any], now: datetime | None = None) -> dict[str, Any]:
    """The status the kubelet shows for a plugin that exited at start (Go's
    ``flag`` package: exit code 2): the pod Running but not Ready, its
    container waiting in ``CrashLoopBackOff`` after one failed run."""
    at = (now or datetime.now(UTC)).strftime("%Y-%m-%dT%H:%M:%SZ")
    meta = pod["metadata"]
    statuses = []
    for container in pod["spec"]["containers"]:
        message = (
            f"back-off {FIRST_BACK_OFF} restarting failed container="
            f"{container['name']} pod={meta['name']}_{meta['namespace']}({meta['uid']})"
        )
        statuses.append(
            {
                "name": container["name"],
                "image": container["image"],
                "imageID": "",
                "ready": False,
                "started": False,
                "restartCount": 1,
                "state": {
                    "waiting": {"reason": "CrashLoopBackOff", "message": message}
                },
                "lastState": {
                    "terminated": {
                        "exitCode": FLAG_EXIT_CODE,
                        "reason": "Error",
                        "startedAt": at,
                        "finishedAt": at,
                    }
                },
            }
        )
    names = ", ".join(c["name"] for c in pod["spec"]["containers"])
    conditions = [
        {
            "type": kind,
            "status": "False",
            "reason": "ContainersNotReady",
            "message": f"containers with unready status: [{names}]",
            "lastTransitionTime": at,
        }
        for kind in ("Ready", "ContainersReady")
    ]
    return {"conditions": conditions, "containerStatuses": statuses}
