"""Volcano's configuration as a guide user on Volcano 1.15 has it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kubestack.files import write_atomic
from simcluster import guide_data

SCHEDULER_CONFIGMAP = ("volcano-system", "volcano-scheduler-configmap")
SCHEDULER_CONF_KEY = "volcano-scheduler.conf"

# The guide's tiers with the deviceshare arguments that exist in v1.14+ (the
# guide's ASCEND310PVNPUEnable/AscendVNPUEnable belong to a pre-release fork)
# and the node lock; simcluster's guide scenario has the same.
SCHEDULER_CONF = guide_data.VOLCANO_SCHEDULER_CONF_UPSTREAM

# Created before any component starts: Volcano's namespace, and what the
# read-only kubeconfig context may do (read everything, write nothing).
BOOTSTRAP_YAML = """\
apiVersion: v1
kind: Namespace
metadata:
  name: volcano-system
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: kubestack:readonly
rules:
- apiGroups: ["*"]
  resources: ["*"]
  verbs: ["get", "list", "watch"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: kubestack:readonly
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: kubestack:readonly
subjects:
- apiGroup: rbac.authorization.k8s.io
  kind: Group
  name: kubestack:readonly
"""


def write_scheduler_conf(core: Any, path: Path) -> None:
    """Write the scheduler's conf file from its ConfigMap, as the pod's volume would.

    The scheduler hot-reloads the file; the supervisor rewrites it when the
    ConfigMap changes (a kubelet refreshes a ConfigMap volume the same way).
    Without the ConfigMap (or its key) the default conf above is used.
    """
    from kubernetes.client.rest import ApiException

    text = SCHEDULER_CONF
    try:
        found = core.read_namespaced_config_map(
            SCHEDULER_CONFIGMAP[1], SCHEDULER_CONFIGMAP[0]
        )
        text = (found.data or {}).get(SCHEDULER_CONF_KEY) or SCHEDULER_CONF
    except ApiException as error:
        if error.status != 404:
            raise
    if not path.exists() or path.read_text() != text:
        write_atomic(path, text)
