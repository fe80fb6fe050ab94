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
  KWOK re-initialised them. A kubelet posts every 10 s, and so does this.
- pod-delete: KWOK removes a deleted pod at once; a real container holds its vNPU
  until it exits, at worst until its grace period ends. Here it is removed at its
  ``deletionTimestamp`` (a process that ignores SIGTERM, like ``sleep``), so a
  terminating pod is seen terminating, as Volcano and the portal see it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from kubestack import versions

NODE_LABEL = "kubestack.io/kwok"
BIND_PHASE = "hami.io/bind-phase"
HEARTBEAT_SECONDS = 10
HEARTBEAT_JITTER_SECONDS = 3


def _adjust(stage: dict[str, Any]) -> dict[str, Any]:
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
            "durationMilliseconds": HEARTBEAT_SECONDS * 1000,
            "jitterDurationMilliseconds": HEARTBEAT_JITTER_SECONDS * 1000,
        }
    if name == "pod-delete":
        spec["delay"] = {
            "durationMilliseconds": 1000,
            "durationFrom": {"expressionFrom": ".metadata.deletionTimestamp"},
        }
    return stage


def write_config(stages: Path, workdir: Path) -> Path:
    """Write KWOK's ``--config`` file (every stage, adjusted) and return its path."""
    documents = []
    for relative in versions.KWOK_STAGES:
        text = (stages / relative.replace("/", "-")).read_text()
        documents.append(_adjust(yaml.safe_load(text)))
    target = workdir / "kwok.yaml"
    target.write_text(yaml.safe_dump_all(documents, sort_keys=False))
    return target
