"""HAMi's scheduler as its Helm chart deploys it, run beside the stack
(``python -m kubestack up --scheduler hami``).

HAMi's chart (v2.9.0, ``charts/hami/templates/scheduler/``) runs one pod of
two containers and registers one webhook:

- a **kube-scheduler** whose KubeSchedulerConfiguration has the profile
  ``hami-scheduler`` and an *extender*: HAMi's scheduler on 127.0.0.1, over
  HTTPS (``tlsConfig.insecure``), verbs ``filter`` and ``bind``,
  ``nodeCacheCapable``, with the vNPU resources ``ignoredByScheduler`` (only
  the extender counts them);
- **HAMi's scheduler** (``cmd/scheduler``): the extender, plus the mutating
  webhook on the same port, with the device config mounted as a file
  (``--device-config-file``, a ``subPath`` of the ``hami-scheduler-device``
  ConfigMap: read once per process) and ``--enable-ascend=true``;
- the **MutatingWebhookConfiguration** ``hami-webhook`` (``vgpu.hami.io``,
  pods on CREATE, ``failurePolicy: Ignore``): a pod asking for a vNPU gets
  ``schedulerName: hami-scheduler`` and its ``-memory`` trimmed to a template.

Here the two containers are processes: the stack's own kube-scheduler binary
with that configuration, and the ``hami-scheduler`` binary built by
``kubestack/hamibuild.py``. The webhook is registered by URL (the chart's
``customURL`` form) with a serving pair signed by the stack's CA. What HAMi
reads from nodes is what the simulated device plugin writes
(``kubestack/deviceplugin.py``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kubestack.files import write_atomic

SCHEDULER_NAME = "hami-scheduler"
NAMESPACE = "kube-system"
DEPLOYMENT = (NAMESPACE, "hami-scheduler")
DEVICE_CONFIGMAP = (NAMESPACE, "hami-scheduler-device")
DEVICE_CONFIG_KEY = "device-config.yaml"
WEBHOOK = "hami-webhook"
# The image tags a HAMi v2.9.0 site runs: v2.9.0 reads only the wrapper shape
# of ``vnpus``, which the device plugin reads from v1.3.0 on (v1.1.0, the
# guide's, stops on it): the portal reads the versions from these images.
IMAGE = "projecthami/hami:v2.9.0"
PLUGIN_IMAGE = "projecthami/ascend-device-plugin:v1.3.0"
PLUGIN_VERSION = (1, 3)
# The chart's ``devices.ascend.customresources``: the extender's
# managedResources, every one ignoredByScheduler.
ASCEND_RESOURCES = tuple(
    f"huawei.com/{word}{suffix}"
    for word in (
        "Ascend910A",
        "Ascend910B2",
        "Ascend910B3",
        "Ascend910B4",
        "Ascend910B4-1",
        "Ascend310P",
        "Ascend910C",
    )
    for suffix in ("", "-memory", "-core")
)


def wrapper_shape(text: str) -> str:
    """``device-config.yaml`` with ``vnpus`` in the wrapper shape
    (``{hamiVnpuCore: false, configs: [...]}``), comments and order kept.

    HAMi v2.9.0 reads only that shape (a list stops it: ``klog.Fatalf``);
    Volcano v1.15.1 and the device plugin from v1.3.0 read it too. Text that
    has it already is returned unchanged.
    """
    lines = text.splitlines()
    try:
        start = lines.index("vnpus:")
    except ValueError:
        return text
    body = lines[start + 1 :]
    end = next(
        (i for i, line in enumerate(body) if line[:1] not in ("", " ", "-", "#")),
        len(body),
    )
    first = next((line for line in body[:end] if line.strip()[:1] not in ("", "#")), "")
    if not first.lstrip().startswith("-"):
        return text  # a mapping already: the wrapper
    head = ["vnpus:", "  hamiVnpuCore: false", "  configs:"]
    nested = [f"  {line}" if line else line for line in body[:end]]
    return "\n".join([*lines[:start], *head, *nested, *body[end:]]) + "\n"


def write_device_config(core: Any, path: Path) -> None:
    """Write the ConfigMap's ``device-config.yaml`` to ``path``, as the
    chart's ``subPath`` mount gives it to the scheduler's container."""
    found = core.read_namespaced_config_map(DEVICE_CONFIGMAP[1], DEVICE_CONFIGMAP[0])
    write_atomic(path, (found.data or {}).get(DEVICE_CONFIG_KEY, ""))


def scheduler_configuration(kubeconfig: Path, extender: str) -> dict[str, Any]:
    """The chart's KubeSchedulerConfiguration (Kubernetes >= 1.26 form)."""
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        # --kubeconfig is ignored once --config is given.
        "clientConnection": {"kubeconfig": str(kubeconfig)},
        "leaderElection": {"leaderElect": False},
        "profiles": [{"schedulerName": SCHEDULER_NAME}],
        "extenders": [
            {
                "urlPrefix": extender,
                "enableHTTPS": True,
                "tlsConfig": {"insecure": True},
                "filterVerb": "filter",
                "bindVerb": "bind",
                "nodeCacheCapable": True,
                "weight": 1,
                "httpTimeout": "30s",
                "managedResources": [
                    {"name": name, "ignoredByScheduler": True}
                    for name in ASCEND_RESOURCES
                ],
            }
        ],
    }


def scheduler_args(
    binary: Path, port: int, metrics_port: int, cert: Path, key: Path, conf: Path
) -> list[str]:
    """HAMi's scheduler as the chart starts it (its default values), on loopback."""
    return [
        str(binary),
        f"--http_bind=127.0.0.1:{port}",
        f"--cert_file={cert}",
        f"--key_file={key}",
        f"--scheduler-name={SCHEDULER_NAME}",
        f"--metrics-bind-address=127.0.0.1:{metrics_port}",
        "--node-scheduler-policy=binpack",
        "--gpu-scheduler-policy=spread",
        "--force-overwrite-default-scheduler=true",
        f"--device-config-file={conf}",
        "--leader-elect=false",
        "--enable-ascend=true",
        "--v=4",
    ]


def webhook_configuration(url: str, ca_bundle: str) -> dict[str, Any]:
    """The chart's MutatingWebhookConfiguration, by URL instead of Service."""
    ignore = {"key": "hami.io/webhook", "operator": "NotIn", "values": ["ignore"]}
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "MutatingWebhookConfiguration",
        "metadata": {"name": WEBHOOK},
        "webhooks": [
            {
                "name": "vgpu.hami.io",
                "admissionReviewVersions": ["v1beta1"],
                "clientConfig": {"url": url, "caBundle": ca_bundle},
                "failurePolicy": "Ignore",
                "matchPolicy": "Equivalent",
                "namespaceSelector": {"matchExpressions": [ignore]},
                "objectSelector": {"matchExpressions": [ignore]},
                "reinvocationPolicy": "Never",
                "rules": [
                    {
                        "apiGroups": [""],
                        "apiVersions": ["v1"],
                        "operations": ["CREATE"],
                        "resources": ["pods"],
                        "scope": "*",
                    }
                ],
                "sideEffects": "None",
                "timeoutSeconds": 10,
            }
        ],
    }


def registered_nodes(log_text: str) -> set[str]:
    """Nodes whose devices HAMi's scheduler has taken in, from its log."""
    found = set()
    for line in log_text.splitlines():
        if "Node device added" in line or "Node device updated" in line:
            marker = 'nodeName="'
            at = line.find(marker)
            if at >= 0:
                found.add(line[at + len(marker) :].split('"', 1)[0])
    return found
