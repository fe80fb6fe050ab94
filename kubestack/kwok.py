"""KWOK's stages: the kubelet of the fake nodes, adjusted where a real node differs.

The stage files come from KWOK's module (copied beside the binaries at build);
three are changed, where a real node differs:

- pod-ready: a pod that Volcano bound with a vNPU (``hami.io/bind-phase:
  allocating``) starts only after the device plugin's Allocate succeeded, as the
  kubelet waits for the plugin; a failed Allocate leaves it to the plugin to fail
  the pod.
- node-heartbeat: KWOK posts a node's status every 20 to 45 s; the node
  lifecycle controller calls a node NotReady after 50 s without one, so on a
  loaded CI machine a late heartbeat made both nodes NotReady (tainted) until
  KWOK re-initialised them. A kubelet posts every 10 s; this posts more often:
  KWOK's ``jitterDurationMilliseconds`` is the upper bound of the delay, not an
  amount added, and one below ``durationMilliseconds`` *is* the delay, so 10 s
  and a 3 s jitter post every 3 s (free on a few nodes; at a thousand, see
  the scale scenario, which passes its own).
- pod-delete: KWOK removes a deleted pod at once; a real container holds its vNPU
  until it exits, at worst until its grace period ends. Here it is removed at its
  ``deletionTimestamp`` (a process that ignores SIGTERM, like ``sleep``), so a
  terminating pod is seen terminating, as Volcano and the portal see it.
- pod-complete: KWOK ends a Job's pod as soon as it runs; a pod that says how
  long it runs (the job contract's ``SIMCLUSTER_RUN_SECONDS`` or
  ``simcluster.io/run-seconds``) is left to kubestack/jobplayer.py, which
  ends it then.

Beside the stages, the config holds one ``ClusterLogs``: every container
whose pod has no ``Logs`` of its own (the job player makes those) reads an
empty file, as a container that printed nothing, instead of KWOK's error.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from kubestack import versions
from simcluster.jobs import RUN_ANNOTATION, RUN_ENV

NODE_LABEL = "kubestack.io/kwok"
# KWOK leaves a pod with this label alone (--disregard-status-with-label-selector):
# it never starts or removes it, and skips its events before matching any
# stage. Its creator writes its status (the scale scenario: 30,000 pods whose
# events, matched against every stage, kept KWOK so far behind its watch that
# the API server cut it again and again, and each time KWOK listed them all).
# Deleted, such a pod stays until deleted with --grace-period=0.
STARTED_BY_CREATOR = "kubestack.io/started-by-creator"
BIND_PHASE = "hami.io/bind-phase"
HEARTBEAT_SECONDS = 10
HEARTBEAT_JITTER_SECONDS = 3


def _adjust(
    stage: dict[str, Any],
    heartbeat_seconds: float = HEARTBEAT_SECONDS,
    heartbeat_jitter_seconds: float = HEARTBEAT_JITTER_SECONDS,
) -> dict[str, Any]:
    """``stage`` as changed here (module docstring); the heartbeat's delay is
    KWOK's ``durationMilliseconds`` and ``jitterDurationMilliseconds``."""
    name = stage["metadata"]["name"]
    spec = stage["spec"]
    if name == "pod-ready":
        spec["selector"]["matchExpressions"].append(
            {
                "key": f'.metadata.annotations["{BIND_PHASE}"]',
                "operator": "NotIn",
                "values": ["allocating", "failed"],
            }
        )
    if name == "node-heartbeat":
        spec["delay"] = {
            "durationMilliseconds": int(heartbeat_seconds * 1000),
            "jitterDurationMilliseconds": int(heartbeat_jitter_seconds * 1000),
        }
    if name == "pod-complete":
        spec["selector"]["matchExpressions"] += [
            {
                "key": f'.metadata.annotations["{RUN_ANNOTATION}"]',
                "operator": "DoesNotExist",
            },
            {
                "key": f'.spec.containers[0].env[]? | select(.name == "{RUN_ENV}") | .name',
                "operator": "DoesNotExist",
            },
        ]
    if name == "pod-delete":
        spec["delay"] = {
            "durationMilliseconds": 1000,
            "durationFrom": {"expressionFrom": ".metadata.deletionTimestamp"},
        }
    return stage


def no_output_logs(empty_log: Path) -> dict[str, Any]:
    """The ``ClusterLogs`` of every container without a ``Logs`` of its own."""
    return {
        "apiVersion": "kwok.x-k8s.io/v1alpha1",
        "kind": "ClusterLogs",
        "metadata": {"name": "kubestack-no-output"},
        "spec": {"logs": [{"logsFile": str(empty_log), "follow": True}]},
    }


def write_config(
    stages: Path,
    workdir: Path,
    heartbeat_seconds: float = HEARTBEAT_SECONDS,
    heartbeat_jitter_seconds: float = HEARTBEAT_JITTER_SECONDS,
    empty_log: Path | None = None,
) -> Path:
    """Write KWOK's ``--config`` file (every stage, adjusted; the heartbeat
    as :func:`_adjust` takes it; the ``ClusterLogs`` reading ``empty_log``)
    and return its path."""
    documents = []
    for relative in versions.KWOK_STAGES:
        text = (stages / relative.replace("/", "-")).read_text()
        documents.append(
            _adjust(yaml.safe_load(text), heartbeat_seconds, heartbeat_jitter_seconds)
        )
    if empty_log is not None:
        documents.append(no_output_logs(empty_log))
    target = workdir / "kwok.yaml"
    target.write_text(yaml.safe_dump_all(documents, sort_keys=False))
    return target


def command(
    binary: Path,
    kubeconfig: Path,
    config: Path,
    endpoint: tuple[str, int],
    server_port: int,
) -> list[str]:
    """KWOK's command line: the nodes labelled :data:`NODE_LABEL`, pods
    labelled :data:`STARTED_BY_CREATOR` left alone, its kubelet server on
    ``server_port`` (with ``Logs`` objects as a CRD), and every node's
    kubelet endpoint at ``endpoint`` (address, port): the kubelet front
    (kubestack/kubeletfront.py), which hands the reading of logs to KWOK's
    server."""
    address, port = endpoint
    return [
        str(binary),
        f"--kubeconfig={kubeconfig}",
        f"--config={config}",
        "--manage-all-nodes=false",
        f"--manage-nodes-with-label-selector={NODE_LABEL}=true",
        f"--disregard-status-with-label-selector={STARTED_BY_CREATOR}=true",
        f"--node-ip={address}",
        f"--node-port={port}",
        "--cidr=172.16.0.0/16",
        f"--server-address=127.0.0.1:{server_port}",
        "--enable-crds=Logs",
    ]
