# Data copied verbatim from the fixtures; long lines kept as they are.
# ruff: noqa: E501, RUF100
"""Data of the ``guide`` scenario, taken from the test fixtures (tests/fixtures/)."""

from __future__ import annotations

from textwrap import indent
from typing import Any

DEVICE_CONFIG_YAML = """\
vnpus:
# Ascend 910B4
- chipName: 910B4
  commonWord: Ascend910B4
  resourceName: huawei.com/Ascend910B4
  resourceMemoryName: huawei.com/Ascend910B4-memory
  memoryAllocatable: 32768
  memoryCapacity: 32768
  aiCore: 20
  aiCPU: 7
  templates:
  - name: vir05_1c_8g
    memory: 8192
    aiCore: 5
    aiCPU: 1
  - name: vir10_3c_16g
    memory: 16384
    aiCore: 10
    aiCPU: 3
# Ascend 310P3
- chipName: 310P3
  commonWord: Ascend310P
  resourceName: huawei.com/Ascend310P
  resourceMemoryName: huawei.com/Ascend310P-memory
  memoryAllocatable: 21527
  memoryCapacity: 24576
  aiCore: 8
  aiCPU: 7
  templates:
  - name: vir01
    memory: 3072
    aiCore: 1
    aiCPU: 1
  - name: vir02
    memory: 6144
    aiCore: 2
    aiCPU: 2
  - name: vir04
    memory: 12288
    aiCore: 4
    aiCPU: 4
"""

# The same chip types in the wrapper shape (``vnpus: {hamiVnpuCore, configs}``),
# the only one device plugin v1.3+ and HAMi v2.9+ read (the nodeconfig scenario).
DEVICE_CONFIG_WRAPPER_YAML = "vnpus:\n  hamiVnpuCore: false\n  configs:\n" + indent(
    DEVICE_CONFIG_YAML.removeprefix("vnpus:\n"), "  "
)

DEVICE_CONFIG_LABELS: dict[str, str] = {
    "app.kubernetes.io/component": "hami-scheduler",
    "app.kubernetes.io/name": "hami",
    "app.kubernetes.io/instance": "hami",
}

VOLCANO_SCHEDULER_CONF = """\
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: drf
  - name: deviceshare
    arguments:
      deviceshare.ASCEND310PVNPUEnable: true
      deviceshare.AscendVNPUEnable: true
      deviceshare.KnownGeometriesCMNamespace: kube-system
      deviceshare.KnownGeometriesCMName: hami-scheduler-device
  - name: predicates
  - name: proportion
  - name: nodeorder
  - name: binpack
"""

# The guide's tiers with the deviceshare arguments upstream Volcano (v1.14+)
# reads, and the node lock: what the portal's health checks ask a guide user
# to change. simcluster's guide scenario and the real stack (kubestack) run
# it. No SchedulePolicy/ScheduleWeight, as in the guide: Volcano then takes
# any fitting chip of the chosen node.
_GUIDE_ARGUMENTS = """\
      deviceshare.ASCEND310PVNPUEnable: true
      deviceshare.AscendVNPUEnable: true
      deviceshare.KnownGeometriesCMNamespace: kube-system
      deviceshare.KnownGeometriesCMName: hami-scheduler-device
"""
VOLCANO_SCHEDULER_CONF_UPSTREAM = VOLCANO_SCHEDULER_CONF.replace(
    _GUIDE_ARGUMENTS,
    """\
      deviceshare.AscendHAMiVNPUEnable: true
      deviceshare.NodeLockEnable: true
      deviceshare.KnownGeometriesCMName: hami-scheduler-device
      deviceshare.KnownGeometriesCMNamespace: kube-system
""",
)
if VOLCANO_SCHEDULER_CONF_UPSTREAM == VOLCANO_SCHEDULER_CONF:
    raise RuntimeError("the guide's deviceshare arguments were not found to replace")

NODE_310P = "npu-node-310p-01"
NODE_910B = "npu-node-910b-01"
# (die ID, healthy) per chip, in index order, as registered in the fixtures.
CHIPS_310P: list[tuple[str, bool]] = [
    ("52E6B438-F2A74DE4-269E0D37-6513270E-A6A3A450", True),
    ("0C5C7FD0-128B2F33-D23F0824-892F902B-1818E811", True),
    ("5D9DC9F8-9531985D-0ED90475-E8E25D94-81E74EF5", True),
    ("36F675CC-099950D8-1600A35A-6F03675A-6B0D549B", True),
]
CHIPS_910B: list[tuple[str, bool]] = [
    ("8D116ECE-6CAD4A26-0F21DDB6-D3AC94AF-90C192CF", True),
    ("1FB17C23-F28C105D-39263059-A170B338-A09F76B5", True),
    ("953F48F1-F29D0DA9-0FD630F1-93BD04CF-95E60AF5", True),
    ("658CDA14-0CB1E29C-F9EBDACC-3898D190-0BECD7B0", True),
    ("8E81973E-DBC496CB-2217BEAD-4A23D596-6B4CB242", True),
    ("24EDE6A4-8A6A63EC-1E27A1C0-92276658-4EF8AA38", False),
    ("8F6D0558-D0EDA82F-AE97BA94-2E44158B-1A61DBE2", True),
    ("94E3BF91-923A7369-A38FD547-301850C5-5F557203", True),
]
NODE_UIDS = {
    NODE_310P: "0c9d1f4e-11e2-4b7e-9a1d-17383d9c1724",
    NODE_910B: "0c9d1f4e-18f1-4b7e-9a1d-b64c8c38fb29",
}
NODE_CREATED = "2026-11-02T03:11:45Z"
NODE_STATUS: dict[str, Any] = {
    "capacity": {
        "cpu": "192",
        "memory": "1056432196Ki",
        "pods": "110",
        "huawei.com/Ascend310P": "28",
    },
    "allocatable": {
        "cpu": "192",
        "memory": "1056329796Ki",
        "pods": "110",
        "huawei.com/Ascend310P": "28",
    },
    "conditions": [
        {
            "type": "Ready",
            "status": "True",
            "reason": "KubeletReady",
            "lastHeartbeatTime": "2026-11-30T08:15:00Z",
            "lastTransitionTime": "2026-11-02T03:12:30Z",
        }
    ],
    "nodeInfo": {
        "architecture": "arm64",
        "kubeletVersion": "v1.31.4",
        "osImage": "openEuler 22.03 (LTS-SP2)",
        "containerRuntimeVersion": "containerd://1.7.22",
    },
}
POD_310P: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {
        "name": "npu-pod-310p",
        "namespace": "default",
        "uid": "5b2a7c1e-1012-4f0a-8c3b-0f42907a70c3",
        "creationTimestamp": "2026-11-30T07:58:10Z",
        "labels": {"app": "npu-pod-310p"},
        "annotations": {
            "hami.io/vgpu-node": "npu-node-310p-01",
            "hami.io/vgpu-time": "1764489491",
            "predicate-time": "1764489491",
            "hami.io/Ascend310P-devices-to-allocate": ";",
            "hami.io/Ascend310P-devices-allocated": "52E6B438-F2A74DE4-269E0D37-6513270E-A6A3A450,Ascend310P,3072,0:;",
            "huawei.com/Ascend310P": '[{"UUID":"52E6B438-F2A74DE4-269E0D37-6513270E-A6A3A450","temp":"vir01","memory":3072}]',
            "hami.io/bind-phase": "success",
            "hami.io/bind-time": "1764489491",
        },
    },
    "spec": {
        "schedulerName": "volcano",
        "nodeName": "npu-node-310p-01",
        "priorityClassName": "batch-low",
        "priority": 100,
        "containers": [
            {
                "name": "npu-container",
                "image": "swr.cn-south-1.myhuaweicloud.com/ascendhub/ascend-pytorch:24.0.RC1-A2-1.11.0-ubuntu20.04",
                "command": ["sleep"],
                "args": ["100000"],
                "resources": {
                    "limits": {
                        "cpu": "1",
                        "memory": "1000Mi",
                        "huawei.com/Ascend310P": "1",
                        "huawei.com/Ascend310P-memory": "3072",
                    },
                    "requests": {
                        "cpu": "1",
                        "memory": "1000Mi",
                        "huawei.com/Ascend310P": "1",
                        "huawei.com/Ascend310P-memory": "3072",
                    },
                },
            }
        ],
    },
    "status": {
        "phase": "Running",
        "startTime": "2026-11-30T07:58:12Z",
        "hostIP": "10.20.0.11",
        "podIP": "172.16.3.41",
    },
}
POD_910B: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {
        "name": "npu-pod-910b",
        "namespace": "default",
        "uid": "5b2a7c1e-9e77-4f0a-8c3b-7f1534b9b5df",
        "creationTimestamp": "2026-11-30T07:58:10Z",
        "labels": {"app": "npu-pod-910b"},
        "annotations": {
            "hami.io/vgpu-node": "npu-node-910b-01",
            "hami.io/vgpu-time": "1764489491",
            "predicate-time": "1764489491",
            "hami.io/Ascend910B4-devices-to-allocate": ";",
            "hami.io/Ascend910B4-devices-allocated": "8F6D0558-D0EDA82F-AE97BA94-2E44158B-1A61DBE2,Ascend910B4,8192,0:;",
            "huawei.com/Ascend910B4": '[{"UUID":"8F6D0558-D0EDA82F-AE97BA94-2E44158B-1A61DBE2","temp":"vir05_1c_8g","memory":8192}]',
            "hami.io/bind-phase": "success",
            "hami.io/bind-time": "1764489491",
        },
    },
    "spec": {
        "schedulerName": "volcano",
        "nodeName": "npu-node-910b-01",
        "priorityClassName": "inference-high",
        "priority": 100000,
        "containers": [
            {
                "name": "npu-container",
                "image": "swr.cn-south-1.myhuaweicloud.com/ascendhub/ascend-pytorch:24.0.RC1-A2-1.11.0-ubuntu20.04",
                "command": ["sleep"],
                "args": ["100000"],
                "resources": {
                    "limits": {
                        "cpu": "1",
                        "memory": "1000Mi",
                        "huawei.com/Ascend910B4": "1",
                        "huawei.com/Ascend910B4-memory": "8192",
                    },
                    "requests": {
                        "cpu": "1",
                        "memory": "1000Mi",
                        "huawei.com/Ascend910B4": "1",
                        "huawei.com/Ascend910B4-memory": "8192",
                    },
                },
            }
        ],
    },
    "status": {
        "phase": "Running",
        "startTime": "2026-11-30T07:58:12Z",
        "hostIP": "10.20.0.11",
        "podIP": "172.16.3.41",
    },
}
