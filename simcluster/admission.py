"""What kube-apiserver does to a written object before it stores it.

The body is checked (unknown fields, kind, apiVersion, namespace, name), and a
new object is defaulted and admitted as the real server's admission chain
would: pods get their defaults and Priority (403 for an unknown class),
namespaces their phase and name label, Services a cluster IP and node ports,
Secrets their ``stringData`` folded into ``data``.
"""

from __future__ import annotations

import base64
import re
from typing import TYPE_CHECKING, Any

from simcluster import errors, resources
from simcluster.resources import ResourceType
from simcluster.store import Obj, Store

if TYPE_CHECKING:
    from simcluster.api import ApiRequest

_DNS_SUBDOMAIN = re.compile(
    r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
)


def check_body(req: ApiRequest, obj: Any, allowed: frozenset[str]) -> Obj:
    """The body as an object without unknown fields (400 for them under
    ``fieldValidation=Strict``, dropped otherwise, as kube-apiserver does)."""
    if not isinstance(obj, dict):
        raise errors.bad_request("the body must be a JSON object")
    unknown = sorted(k for k in obj if k not in allowed)
    unknown += sorted(
        "metadata." + k
        for k in (obj.get("metadata") or {})
        if k not in resources.META_FIELDS
    )
    if unknown:
        if req.query.get("fieldValidation", "").lower() == "strict":
            kind = req.res.kind
            detail = ", ".join(f'unknown field "{u}"' for u in unknown)
            raise errors.bad_request(
                f'{kind} in version "{req.res.version}" cannot be handled as a '
                f"{kind}: strict decoding error: {detail}"
            )
        for key in unknown:
            if key.startswith("metadata."):
                obj["metadata"].pop(key[9:], None)
            else:
                obj.pop(key, None)
    return obj


def check_identity(req: ApiRequest, obj: Obj) -> Obj:
    """The body's kind, apiVersion and namespace checked against the request's;
    the namespace is filled in."""
    res = req.res
    kind, api_version = obj.get("kind"), obj.get("apiVersion")
    if kind and kind != res.kind:
        raise errors.bad_request(
            f"the kind of the object ({kind}) does not match the expected kind "
            f"({res.kind})"
        )
    if api_version and api_version != res.group_version:
        raise errors.bad_request(
            f"the API version in the data ({api_version}) does not match the "
            f"expected API version ({res.group_version})"
        )
    meta = obj.setdefault("metadata", {})
    if not isinstance(meta, dict):
        raise errors.bad_request("metadata must be an object")
    if res.namespaced:
        body_ns = meta.get("namespace")
        if body_ns and req.namespace and body_ns != req.namespace:
            raise errors.bad_request(
                "the namespace of the provided object does not match the namespace "
                "sent on the request"
            )
        meta["namespace"] = req.namespace or body_ns or "default"
    return obj


def validate_name(res: ResourceType, name: str) -> None:
    """422 unless ``name`` is a lowercase RFC 1123 subdomain."""
    if not name:
        raise errors.invalid(
            res.kind,
            res.group,
            "",
            [("metadata.name", "Required value: name or generateName is required")],
        )
    if len(name) > 253 or not _DNS_SUBDOMAIN.match(name):
        raise errors.invalid(
            res.kind,
            res.group,
            name,
            [
                (
                    "metadata.name",
                    f'Invalid value: "{name}": a lowercase RFC 1123 subdomain must '
                    "consist of lower case alphanumeric characters, '-' or '.'",
                )
            ],
        )


def admit(store: Store, res: ResourceType, obj: Obj) -> None:
    """Defaulting and admission for new objects, as kube-apiserver does them."""
    if res is resources.POD:
        admit_pod(store, obj)
    elif res is resources.NAMESPACE:
        obj["status"] = {"phase": "Active"}
        obj.setdefault("spec", {"finalizers": ["kubernetes"]})
        labels = obj["metadata"].setdefault("labels", {})
        labels["kubernetes.io/metadata.name"] = obj["metadata"]["name"]
    elif res is resources.DEPLOYMENT:
        spec = obj.setdefault("spec", {})
        spec.setdefault("replicas", 1)
        obj["status"] = {}
    elif res is resources.DAEMONSET:
        obj.setdefault("spec", {})
        obj["status"] = {}
    elif res is resources.QUEUE:
        # A CRD with a status subresource: create drops the status (the
        # queue controller opens it); the CRD defaults the weight to 1.
        obj.setdefault("spec", {}).setdefault("weight", 1)
        obj.pop("status", None)
    elif res is resources.SECRET:
        obj["type"] = obj.get("type") or "Opaque"
        # stringData is write-only: the server folds it into data.
        string_data = obj.pop("stringData", None) or {}
        if string_data:
            data = obj.get("data") or {}
            for key, value in string_data.items():
                data[key] = base64.b64encode(str(value).encode()).decode()
            obj["data"] = data
    elif res is resources.PRIORITYCLASS:
        obj.setdefault("preemptionPolicy", "PreemptLowerPriority")
    elif res is resources.SERVICE:
        _default_service(store, obj)


def admit_pod(store: Store, pod: Obj) -> None:
    """Pod defaulting and Priority admission (403 for an unknown class)."""
    spec = pod.setdefault("spec", {})
    spec.setdefault("schedulerName", "default-scheduler")
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("dnsPolicy", "ClusterFirst")
    class_name = spec.get("priorityClassName")
    if class_name:
        found = store.get(resources.PRIORITYCLASS, "", class_name)
        if found is None:
            name = pod["metadata"]["name"]
            raise errors.forbidden(
                f'pods "{name}" is forbidden: no PriorityClass with name '
                f"{class_name} was found",
                {"name": name, "kind": "pods"},
            )
        spec["priority"] = found.obj.get("value", 0)
    else:
        _, classes = store.list(resources.PRIORITYCLASS)
        default = next((c.obj for c in classes if c.obj.get("globalDefault")), None)
        if default is not None:
            spec["priorityClassName"] = default["metadata"]["name"]
        spec["priority"] = default.get("value", 0) if default else 0
    pod["status"] = {"phase": "Pending", "qosClass": "BestEffort"}
    if spec.get("nodeName"):
        pod["status"]["conditions"] = []


def _default_service(store: Store, svc: Obj) -> None:
    """The Service defaults and a cluster IP, as the real allocator gives one."""
    spec = svc.setdefault("spec", {})
    spec["type"] = spec.get("type") or "ClusterIP"
    spec.setdefault("sessionAffinity", "None")
    _, services = store.list(resources.SERVICE)
    specs = [s.obj.get("spec") or {} for s in services]
    node_ports = {p.get("nodePort") for s in specs for p in s.get("ports") or []}
    for port in spec.get("ports") or []:
        port.setdefault("protocol", "TCP")
        port.setdefault("targetPort", port.get("port"))
        if spec["type"] in ("NodePort", "LoadBalancer") and not port.get("nodePort"):
            # The real allocator picks at random in 30000-32767; lowest free here.
            port["nodePort"] = next(
                n for n in range(30000, 32768) if n not in node_ports
            )
            node_ports.add(port["nodePort"])
    if spec["type"] == "ExternalName" or spec.get("clusterIP"):
        if spec.get("clusterIP") and not spec.get("clusterIPs"):
            spec["clusterIPs"] = [spec["clusterIP"]]
        return
    used = {s.get("clusterIP") for s in specs}
    # The first free address of the default service CIDR 10.96.0.0/16 after
    # the kubernetes Service's 10.96.0.1.
    ip = next(
        f"10.96.{n // 256}.{n % 256}"
        for n in range(2, 65535)
        if f"10.96.{n // 256}.{n % 256}" not in used
    )
    spec["clusterIP"], spec["clusterIPs"] = ip, [ip]
