"""Nodes, namespaces, configmaps, secrets, service accounts, services, events."""

from __future__ import annotations

from datetime import datetime

from simcluster.columndocs import DOCS
from simcluster.printers.base import (
    AGE,
    NAME,
    Cells,
    Column,
    Obj,
    Printer,
    age_of,
    format_labels,
    meta_of,
    parse_time,
    since,
    spec_of,
    status_of,
)


def _node_roles(labels: dict[str, str]) -> str:
    roles = set()
    for key, value in labels.items():
        if key.startswith("node-role.kubernetes.io/") and key[24:]:
            roles.add(key[24:])
        elif key == "kubernetes.io/role" and value:
            roles.add(value)
    return ",".join(sorted(roles)) or "<none>"


def _node_address(node: Obj, kind: str) -> str:
    for address in status_of(node).get("addresses") or []:
        if address.get("type") == kind:
            return str(address.get("address", ""))
    return "<none>"


def _node_cells(node: Obj, now: datetime) -> Cells:
    status, info = status_of(node), status_of(node).get("nodeInfo") or {}
    ready = next(
        (c for c in status.get("conditions") or [] if c.get("type") == "Ready"), None
    )
    states = (
        ["Unknown"]
        if ready is None
        else ["Ready" if ready.get("status") == "True" else "NotReady"]
    )
    if spec_of(node).get("unschedulable"):
        states.append("SchedulingDisabled")
    return [
        meta_of(node).get("name", ""),
        ",".join(states),
        _node_roles(meta_of(node).get("labels") or {}),
        age_of(node, now),
        info.get("kubeletVersion", ""),
        _node_address(node, "InternalIP"),
        _node_address(node, "ExternalIP"),
        info.get("osImage") or "<unknown>",
        info.get("kernelVersion") or "<unknown>",
        info.get("containerRuntimeVersion") or "<unknown>",
    ]


NODE = Printer(
    (
        NAME,
        Column("Status", "The status of the node"),
        Column("Roles", "The roles of the node"),
        AGE,
        Column("Version", DOCS["NodeSystemInfo.kubeletVersion"]),
        Column("Internal-IP", DOCS["NodeStatus.addresses"], priority=1),
        Column("External-IP", DOCS["NodeStatus.addresses"], priority=1),
        Column("OS-Image", DOCS["NodeSystemInfo.osImage"], priority=1),
        Column("Kernel-Version", DOCS["NodeSystemInfo.kernelVersion"], priority=1),
        Column(
            "Container-Runtime",
            DOCS["NodeSystemInfo.containerRuntimeVersion"],
            priority=1,
        ),
    ),
    _node_cells,
)


# -- small core kinds ------------------------------------------------------------
NAMESPACE = Printer(
    (NAME, Column("Status", "The status of the namespace"), AGE),
    lambda o, now: [
        meta_of(o).get("name", ""),
        status_of(o).get("phase", ""),
        age_of(o, now),
    ],
)
CONFIGMAP = Printer(
    (NAME, Column("Data", DOCS["ConfigMap.data"]), AGE),
    lambda o, now: [
        meta_of(o).get("name", ""),
        len(o.get("data") or {}) + len(o.get("binaryData") or {}),
        age_of(o, now),
    ],
)


def _secret_cells(secret: Obj, now: datetime) -> Cells:
    # The server folds stringData into data when it decodes a Secret.
    keys = set(secret.get("data") or {}) | set(secret.get("stringData") or {})
    return [
        meta_of(secret).get("name", ""),
        secret.get("type") or "Opaque",
        len(keys),
        age_of(secret, now),
    ]


SECRET = Printer(
    (
        NAME,
        Column("Type", DOCS["Secret.type"]),
        Column("Data", DOCS["Secret.data"]),
        AGE,
    ),
    _secret_cells,
)
SERVICEACCOUNT = Printer(
    (NAME, AGE), lambda o, now: [meta_of(o).get("name", ""), age_of(o, now)]
)


def _service_external_ip(spec: Obj, status: Obj) -> str:
    external = list(spec.get("externalIPs") or [])
    kind = spec.get("type") or "ClusterIP"
    if kind in ("ClusterIP", "NodePort"):
        return ",".join(external) or "<none>"
    if kind == "LoadBalancer":
        ingress = (status.get("loadBalancer") or {}).get("ingress") or []
        balancers = sorted(
            {i.get("ip") or i.get("hostname") for i in ingress} - {None, ""}
        )
        return ",".join(balancers + external) or "<pending>"
    if kind == "ExternalName":
        return str(spec.get("externalName", ""))
    return "<unknown>"


def _service_cells(svc: Obj, now: datetime) -> Cells:
    spec = spec_of(svc)
    ips = spec.get("clusterIPs") or (
        [spec["clusterIP"]] if spec.get("clusterIP") else []
    )
    ports = []
    for port in spec.get("ports") or []:
        proto = port.get("protocol") or "TCP"
        node_port = port.get("nodePort") or 0
        middle = f":{node_port}" if node_port > 0 else ""
        ports.append(f"{port.get('port', 0)}{middle}/{proto}")
    return [
        meta_of(svc).get("name", ""),
        spec.get("type") or "ClusterIP",
        ips[0] if ips else "<none>",
        _service_external_ip(spec, status_of(svc)),
        ",".join(ports) or "<none>",
        age_of(svc, now),
        format_labels(spec.get("selector")),
    ]


SERVICE = Printer(
    (
        NAME,
        Column("Type", DOCS["ServiceSpec.type"]),
        Column("Cluster-IP", DOCS["ServiceSpec.clusterIP"]),
        Column("External-IP", DOCS["ServiceSpec.externalIPs"]),
        Column("Port(s)", DOCS["ServiceSpec.ports"]),
        AGE,
        Column("Selector", DOCS["ServiceSpec.selector"], priority=1),
    ),
    _service_cells,
)


def _event_cells(event: Obj, now: datetime) -> Cells:
    first = since(event.get("firstTimestamp"), now)
    if parse_time(event.get("firstTimestamp")) is None:
        first = since(event.get("eventTime"), now)
    last = since(event.get("lastTimestamp"), now)
    if parse_time(event.get("lastTimestamp")) is None:
        last = first
    count = int(event.get("count") or 0)
    series = event.get("series")
    if series is not None:
        last = since(series.get("lastObservedTime"), now)
        count = int(series.get("count") or 0)
    elif count == 0:
        count = 1  # singleton events of the events.k8s.io API carry no count
    involved = event.get("involvedObject") or {}
    target = str(involved.get("kind", "")).lower()
    if involved.get("name"):
        target = f"{target}/{involved['name']}"
    source = event.get("source") or {}
    component = source.get("component") or event.get("reportingComponent") or ""
    instance = source.get("host") or event.get("reportingInstance") or ""
    return [
        last,
        event.get("type", ""),
        event.get("reason", ""),
        target,
        involved.get("fieldPath", ""),
        f"{component}, {instance}" if instance else component,
        str(event.get("message", "")).strip(),
        first,
        count,
        meta_of(event).get("name", ""),
    ]


EVENT = Printer(
    (
        Column("Last Seen", DOCS["Event.lastTimestamp"]),
        Column("Type", DOCS["Event.type"]),
        Column("Reason", DOCS["Event.reason"]),
        Column("Object", DOCS["Event.involvedObject"]),
        Column("Subobject", DOCS["ObjectReference.fieldPath"], priority=1),
        Column("Source", DOCS["Event.source"], priority=1),
        Column("Message", DOCS["Event.message"]),
        Column("First Seen", DOCS["Event.firstTimestamp"], priority=1),
        Column("Count", DOCS["Event.count"], priority=1),
        Column("Name", DOCS["meta.name"], format="name", priority=1),
    ),
    _event_cells,
)
