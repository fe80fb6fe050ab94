"""Reads about what the cluster actually runs: live device config, drift, restarts, health.

Three kinds of reads live here, all about the gap between the portal's view and
the cluster:

- the live ConfigMap and its drift from the portal's baseline (a GET to the
  API server, never the database, because a publish must compare with what is
  there *now*);
- restart state of the components that read the device config only when they
  start (HAMi scheduler, Ascend device plugin, volcano-scheduler), from their
  pods listed live;
- configuration health from what sync mirrored (no API call): Volcano's
  deviceshare arguments, the device-plugin DaemonSet, node registrations.

Every failure to talk to the cluster becomes ``ClusterUnavailable`` (503)
naming the cluster, so callers never see a 500 for a cluster being down.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

import yaml
from django.conf import settings
from kubernetes import client
from kubernetes.client.rest import ApiException
from kubernetes.config.config_exception import ConfigException
from urllib3.exceptions import HTTPError

from apps.common.exceptions import ClusterUnavailable, NotFound
from apps.inventory.hami.validation import slots_per_chip
from apps.inventory.kube import api_client_for
from apps.inventory.models import Chip, Cluster, ClusterObject, Node
from apps.inventory.selectors import (
    chip_type_specs,
    deviceconfig_baseline,
    deviceconfig_changed_at,
    deviceconfig_drift_recorded,
    text_diff,
)

DEVICE_CONFIG_KEY = "device-config.yaml"
VOLCANO_CONFIG_KEY = "volcano-scheduler.conf"
RESTARTED_AT = "kubectl.kubernetes.io/restartedAt"
# A web request waits for the API server at most this long (connect, read).
REQUEST_TIMEOUT = (5.0, 15.0)

# --- talking to the cluster --------------------------------------------------------


@contextmanager
def cluster_api(cluster: Cluster) -> Iterator[client.ApiClient]:
    """An ApiClient for ``cluster``; transport and server errors become ClusterUnavailable.

    Callers handle the statuses they expect (404, 409) inside the block; any
    other ApiException, a refused connection, a timeout or a broken kubeconfig
    leaves it as a 503 that names the cluster.

    Raises:
        ClusterUnavailable: The cluster could not be reached or refused the call.
        ValidationFailed: The cluster has no connection configured.
    """
    try:
        api = api_client_for(cluster)
    except (ConfigException, OSError, ValueError, TypeError) as exc:
        raise ClusterUnavailable(
            f"cluster {cluster.name!r}: cannot load its connection: {exc}",
            detail={"cluster": cluster.name},
        ) from exc
    try:
        yield api
    except ApiException as exc:
        raise ClusterUnavailable(
            f"cluster {cluster.name!r}: the API server answered "
            f"{exc.status} {exc.reason or ''}".strip(),
            detail={"cluster": cluster.name, "status": exc.status},
        ) from exc
    except (HTTPError, OSError) as exc:
        raise ClusterUnavailable(
            f"cluster {cluster.name!r} is unreachable: {type(exc).__name__}",
            detail={"cluster": cluster.name},
        ) from exc
    finally:
        api.close()


def kube_json(
    api: client.ApiClient,
    method: str,
    path: str,
    *,
    query: Mapping[str, str] | None = None,
    body: Any = None,
    content_type: str = "application/json",
) -> dict[str, Any]:
    """One raw JSON call (objects stay dicts, so unknown fields survive a round trip).

    Raises:
        ApiException: The server answered an error status.
    """
    response = api.call_api(
        path,
        method,
        query_params=list((query or {}).items()),
        header_params={"Accept": "application/json", "Content-Type": content_type},
        body=body,
        auth_settings=["BearerToken"],
        _preload_content=False,
        _return_http_data_only=True,
        _request_timeout=REQUEST_TIMEOUT,
    )
    return json.loads(response.data)


# --- the live device config and drift ------------------------------------------------


@dataclass(frozen=True)
class LiveConfigMap:
    """The device-config ConfigMap as the API server returned it.

    Attributes:
        text: Its ``device-config.yaml`` ("" when the key is missing).
        resource_version: ``metadata.resourceVersion``, the guard of a write.
        obj: The whole object, to write back with only the text changed.
    """

    text: str
    resource_version: str
    obj: dict[str, Any]


def configmap_path(cluster: Cluster) -> str:
    """API path of the cluster's device-config ConfigMap."""
    return (
        f"/api/v1/namespaces/{cluster.device_config_namespace}"
        f"/configmaps/{cluster.device_config_name}"
    )


def live_device_config_read(
    cluster: Cluster, api: client.ApiClient | None = None
) -> LiveConfigMap:
    """GET the device-config ConfigMap from the cluster (never from the database).

    Args:
        cluster: The cluster.
        api: An open client from :func:`cluster_api`; one is opened when None.

    Raises:
        NotFound: The ConfigMap does not exist.
        ClusterUnavailable: The cluster could not be reached.
    """
    if api is None:
        with cluster_api(cluster) as opened:
            return live_device_config_read(cluster, opened)
    try:
        obj = kube_json(api, "GET", configmap_path(cluster))
    except ApiException as exc:
        if exc.status != 404:
            raise
        raise NotFound(
            f"ConfigMap {cluster.device_config_namespace}/{cluster.device_config_name}"
            f" does not exist in cluster {cluster.name!r}"
        ) from exc
    return LiveConfigMap(
        text=(obj.get("data") or {}).get(DEVICE_CONFIG_KEY, ""),
        resource_version=(obj.get("metadata") or {}).get("resourceVersion", ""),
        obj=obj,
    )


def deviceconfig_drift(cluster: Cluster, *, live: bool = True) -> dict[str, Any]:
    """Whether the ConfigMap still holds the portal's baseline, and the diff if not.

    Args:
        cluster: The cluster.
        live: GET the ConfigMap now (True), or use what sync recorded (False,
            cheap enough for a UI that polls).

    Returns:
        ``in_sync``, ``baseline_version``, ``live_version`` (the matching or
        observed version number, when known), ``live_resource_version`` and
        ``diff`` (unified, baseline to live), plus ``checked`` ("live" or
        "recorded").
    """
    if not live:
        return {**deviceconfig_drift_recorded(cluster), "checked": "recorded"}
    current = live_device_config_read(cluster)
    baseline = deviceconfig_baseline(cluster)
    base_text = baseline.text if baseline else ""
    in_sync = baseline is not None and current.text == base_text
    label = f"v{baseline.number} (baseline)" if baseline else "(no baseline)"
    return {
        "in_sync": in_sync,
        "baseline_version": baseline.number if baseline else None,
        "live_version": baseline.number if in_sync and baseline else None,
        "live_resource_version": current.resource_version,
        "diff": ""
        if in_sync
        else text_diff(
            base_text,
            current.text,
            before_label=label,
            after_label=f"live (resourceVersion {current.resource_version})",
        ),
        "checked": "live",
    }


# --- restart state -------------------------------------------------------------------

RestartState = Literal["restart_pending", "rolling", "in_effect", "missing", "unknown"]


@dataclass(frozen=True)
class Component:
    """A workload that reads the device config at start (name = its API name)."""

    kind: Literal["Deployment", "DaemonSet"]
    namespace: str
    name: str

    @property
    def path(self) -> str:
        plural = "deployments" if self.kind == "Deployment" else "daemonsets"
        return f"/apis/apps/v1/namespaces/{self.namespace}/{plural}/{self.name}"


def restart_components() -> list[Component]:
    """The Deployments of ``WATCHED_DEPLOYMENTS`` and the ``DEVICE_PLUGIN_DAEMONSET``."""
    found: list[Component] = []
    for ref in settings.WATCHED_DEPLOYMENTS:
        namespace, name = ref.split("/", 1)
        found.append(Component("Deployment", namespace, name))
    namespace, name = settings.DEVICE_PLUGIN_DAEMONSET.split("/", 1)
    found.append(Component("DaemonSet", namespace, name))
    return found


def restart_component_get(name: str) -> Component:
    """The component called ``name``; NotFound lists the known ones."""
    components = restart_components()
    for component in components:
        if component.name == name:
            return component
    known = ", ".join(c.name for c in components)
    raise NotFound(f"no component {name!r}; known: {known}")


def _parse_time(value: Any) -> datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        return None


def _ready(pod: Mapping[str, Any]) -> bool:
    conditions = (pod.get("status") or {}).get("conditions") or []
    return any(
        c.get("type") == "Ready" and c.get("status") == "True" for c in conditions
    )


def _pod_row(pod: Mapping[str, Any], changed: datetime | None) -> dict[str, Any]:
    meta = pod.get("metadata") or {}
    started = _parse_time((pod.get("status") or {}).get("startTime")) or _parse_time(
        meta.get("creationTimestamp")
    )
    # Kubernetes stamps whole seconds: a pod that started in the second of the
    # change counts as new, or a restart right after a publish would show
    # "pending" forever. Portal and cluster clocks are assumed NTP-synced.
    stale = (
        changed is not None
        and started is not None
        and started < changed.replace(microsecond=0)
    )
    return {
        "name": meta.get("name", ""),
        "node": (pod.get("spec") or {}).get("nodeName") or "",
        "started_at": started,
        "ready": _ready(pod),
        "terminating": bool(meta.get("deletionTimestamp")),
        "stale": stale,
    }


def _state(
    pods: list[dict[str, Any]], changed: datetime | None, restarted: datetime | None
) -> tuple[RestartState, str]:
    if not pods:
        return "unknown", "no pods"
    if any(p["started_at"] is None for p in pods):
        return "unknown", "a pod has no start time yet"
    stale = [p for p in pods if p["stale"]]
    if stale:
        names = ", ".join(p["name"] for p in stale)
        # A restart asked for after the change is under way; otherwise the
        # pods still run the old config and someone has to restart them.
        if (
            changed is not None
            and restarted is not None
            and restarted >= changed.replace(microsecond=0)
        ):
            return "rolling", f"restart in progress; still running: {names}"
        return "restart_pending", f"started before the change: {names}"
    current = [p for p in pods if not p["terminating"]]
    if not current or not all(p["ready"] for p in current):
        return "rolling", "new pods are not all Ready yet"
    return "in_effect", "every pod started after the change and is Ready"


def _component_state(
    api: client.ApiClient, component: Component, changed: datetime | None
) -> dict[str, Any]:
    row: dict[str, Any] = {
        "component": component.name,
        "kind": component.kind,
        "namespace": component.namespace,
        "restarted_at": None,
        "pods": [],
    }
    try:
        workload = kube_json(api, "GET", component.path)
    except ApiException as exc:
        if exc.status != 404:
            raise
        return {
            **row,
            "restart_state": "missing",
            "message": f"{component.kind} not found",
        }
    spec = workload.get("spec") or {}
    template_meta = (spec.get("template") or {}).get("metadata") or {}
    restarted = _parse_time((template_meta.get("annotations") or {}).get(RESTARTED_AT))
    labels = (spec.get("selector") or {}).get("matchLabels") or {}
    if not labels:
        # matchExpressions-only selectors are not evaluated here.
        return {
            **row,
            "restarted_at": restarted,
            "restart_state": "unknown",
            "message": "the workload has no matchLabels selector",
        }
    selector = ",".join(f"{k}={v}" for k, v in sorted(labels.items()))
    listed = kube_json(
        api,
        "GET",
        f"/api/v1/namespaces/{component.namespace}/pods",
        query={"labelSelector": selector},
    )
    pods = [_pod_row(p, changed) for p in listed.get("items") or []]
    pods.sort(key=lambda p: p["name"])
    state, message = _state(pods, changed, restarted)
    return {
        **row,
        "restarted_at": restarted,
        "pods": pods,
        "restart_state": state,
        "message": message,
    }


def restart_states(
    cluster: Cluster, *, only: Component | None = None
) -> dict[str, Any]:
    """Restart state of each component, from its pods listed live.

    "restart_pending": a pod started before the config last changed (see
    ``deviceconfig_changed_at``) and no restart was asked for since;
    "rolling": a restart is under way or new pods are not Ready yet;
    "in_effect": every pod started after the change and is Ready;
    "missing": the workload does not exist; "unknown": no pods or no start time.

    Args:
        cluster: The cluster.
        only: Limit the answer to this component.

    Raises:
        ClusterUnavailable: The cluster could not be reached.
    """
    version = deviceconfig_changed_at(cluster)
    changed = version.created_at if version else None
    components = [only] if only else restart_components()
    with cluster_api(cluster) as api:
        rows = [_component_state(api, c, changed) for c in components]
    return {
        "cluster": cluster.name,
        "config_version": version.number if version else None,
        "config_changed_at": changed,
        "components": rows,
    }


# --- configuration health (from what sync mirrored) -------------------------------------

CheckStatus = Literal["ok", "warn", "fail"]
_RANK = {"ok": 0, "warn": 1, "fail": 2}
UPSTREAM_ENABLE = "deviceshare.AscendHAMiVNPUEnable"
# Names from the reference guide; no Volcano release reads them (facts, section 5).
GUIDE_ENABLE = ("deviceshare.AscendVNPUEnable", "deviceshare.ASCEND310PVNPUEnable")
GEOMETRIES_NAME = "deviceshare.KnownGeometriesCMName"
GEOMETRIES_NAMESPACE = "deviceshare.KnownGeometriesCMNamespace"
# Volcano's defaults when the arguments are absent (deviceshare.go).
GEOMETRIES_DEFAULTS = ("volcano-vgpu-device-config", "kube-system")


def _check(
    id_: str, status: CheckStatus, message: str, fix: str = ""
) -> dict[str, Any]:
    return {"id": id_, "check_status": status, "message": message, "fix": fix}


def _object(cluster: Cluster, kind: str, ref: str) -> ClusterObject | None:
    namespace, name = ref.split("/", 1)
    return ClusterObject.objects.filter(
        cluster=cluster, kind=kind, namespace=namespace, name=name
    ).first()


def _volcano_conf(cluster: Cluster) -> tuple[dict[str, Any] | None, dict[str, Any]]:
    ref = settings.VOLCANO_SCHEDULER_CONFIGMAP
    row = _object(cluster, "ConfigMap", ref)
    if row is None:
        return None, _check(
            "volcano_config",
            "fail",
            f"ConfigMap {ref} has not been seen by sync",
            "install Volcano, or set VOLCANO_SCHEDULER_CONFIGMAP to its ConfigMap",
        )
    text = ((row.data or {}).get("data") or {}).get(VOLCANO_CONFIG_KEY)
    try:
        conf = yaml.safe_load(text) if isinstance(text, str) else None
    except yaml.YAMLError as exc:
        return None, _check(
            "volcano_config",
            "fail",
            f"{ref} {VOLCANO_CONFIG_KEY} is not valid YAML: {exc}",
            "fix the YAML; volcano-scheduler keeps its last good configuration",
        )
    if not isinstance(conf, dict):
        return None, _check(
            "volcano_config",
            "fail",
            f"{ref} has no {VOLCANO_CONFIG_KEY} mapping",
            f"put the scheduler configuration under the key {VOLCANO_CONFIG_KEY}",
        )
    return conf, _check("volcano_config", "ok", f"{ref} {VOLCANO_CONFIG_KEY} parsed")


def _deviceshare_arguments(conf: Mapping[str, Any]) -> dict[str, Any] | None:
    for tier in conf.get("tiers") or []:
        plugins = tier.get("plugins") if isinstance(tier, dict) else None
        for plugin in plugins or []:
            if isinstance(plugin, dict) and plugin.get("name") == "deviceshare":
                arguments = plugin.get("arguments")
                return dict(arguments) if isinstance(arguments, dict) else {}
    return None


def _truthy(value: Any) -> bool:
    return value is True or (isinstance(value, str) and value.lower() == "true")


def _deviceshare_checks(
    cluster: Cluster, conf: dict[str, Any] | None
) -> list[dict[str, Any]]:
    if conf is None:
        why = "cannot check: the Volcano scheduler configuration is unreadable"
        return [
            _check("deviceshare_enabled", "fail", why),
            _check("known_geometries", "fail", why),
        ]
    args = _deviceshare_arguments(conf)
    if args is None:
        fix = f"add the deviceshare plugin with {UPSTREAM_ENABLE}: true to a tier"
        return [
            _check("deviceshare_enabled", "fail", "no deviceshare plugin", fix),
            _check("known_geometries", "fail", "no deviceshare plugin", fix),
        ]
    guide = [name for name in GUIDE_ENABLE if _truthy(args.get(name))]
    if _truthy(args.get(UPSTREAM_ENABLE)):
        enabled = _check(
            "deviceshare_enabled", "ok", f"deviceshare has {UPSTREAM_ENABLE}: true"
        )
    elif guide:
        # Either naming counts as enabled, but say which Volcano reads which.
        enabled = _check(
            "deviceshare_enabled",
            "warn",
            f"deviceshare is enabled with the guide's {', '.join(guide)}; "
            f"upstream Volcano >= v1.14 reads only {UPSTREAM_ENABLE}",
            f"also set {UPSTREAM_ENABLE}: true unless your Volcano build uses the guide's names",
        )
    else:
        enabled = _check(
            "deviceshare_enabled",
            "fail",
            "deviceshare does not enable Ascend vNPUs",
            f"set {UPSTREAM_ENABLE}: true (or the guide's {GUIDE_ENABLE[0]})",
        )
    name = args.get(GEOMETRIES_NAME, GEOMETRIES_DEFAULTS[0])
    namespace = args.get(GEOMETRIES_NAMESPACE, GEOMETRIES_DEFAULTS[1])
    wanted = (cluster.device_config_name, cluster.device_config_namespace)
    if (name, namespace) == wanted:
        geometries = _check(
            "known_geometries",
            "ok",
            f"deviceshare reads the device config {namespace}/{name}",
        )
    else:
        geometries = _check(
            "known_geometries",
            "fail",
            f"deviceshare reads {namespace}/{name}, not the device config "
            f"{wanted[1]}/{wanted[0]}; Volcano then falls back to a built-in "
            "310P3-only default",
            f"set {GEOMETRIES_NAME}: {wanted[0]} and {GEOMETRIES_NAMESPACE}: {wanted[1]}",
        )
    return [enabled, geometries]


def _preempt_check(conf: dict[str, Any] | None) -> dict[str, Any]:
    if not getattr(settings, "PREEMPTION_ENABLED", True):
        return _check("preempt_action", "ok", "the portal's preemption is disabled")
    if conf is None:
        return _check(
            "preempt_action",
            "fail",
            "cannot check: the Volcano scheduler configuration is unreadable",
        )
    actions = [a.strip() for a in str(conf.get("actions") or "").split(",")]
    if "preempt" in actions:
        return _check("preempt_action", "ok", "the preempt action is configured")
    return _check(
        "preempt_action",
        "fail",
        f"actions are {', '.join(a for a in actions if a) or 'empty'}: without "
        "preempt, Volcano never evicts lower-priority pods for the portal",
        'add preempt, e.g. actions: "enqueue, allocate, preempt, backfill"',
    )


def _daemonset_check(cluster: Cluster) -> dict[str, Any]:
    ref = settings.DEVICE_PLUGIN_DAEMONSET
    row = _object(cluster, "DaemonSet", ref)
    if row is None:
        return _check(
            "device_plugin",
            "fail",
            f"DaemonSet {ref} has not been seen by sync",
            "deploy the HAMi Ascend device plugin (ascend-device-plugin.yaml)",
        )
    status = (row.data or {}).get("status") or {}
    desired = int(status.get("desiredNumberScheduled") or 0)
    ready = int(status.get("numberReady") or 0)
    ascend_nodes = Node.objects.filter(cluster=cluster, ascend_enabled=True).count()
    if desired < ascend_nodes:
        return _check(
            "device_plugin",
            "fail",
            f"{ref} is scheduled on {desired} nodes but {ascend_nodes} are labelled "
            "ascend=on",
            "check the DaemonSet's nodeSelector and tolerations",
        )
    if ready < desired:
        return _check(
            "device_plugin",
            "fail",
            f"{ref}: {ready} of {desired} pods are ready",
            f"kubectl -n {ref.split('/')[0]} describe pods of the DaemonSet",
        )
    return _check(
        "device_plugin",
        "ok",
        f"{ref}: {ready} of {desired} pods ready on {ascend_nodes} ascend=on nodes",
    )


def _registration_checks(cluster: Cluster) -> dict[str, Any]:
    specs = {s.common_word: s for s in chip_type_specs(cluster)}
    registered: dict[str, list[tuple[int, int]]] = {}
    for word, slots, memory in Chip.objects.filter(cluster=cluster).values_list(
        "common_word", "slots", "memory"
    ):
        registered.setdefault(word, []).append((slots, memory))
    problems: list[tuple[CheckStatus, str]] = []
    for word in sorted(set(registered) - set(specs)):
        problems.append(
            (
                "fail",
                f"{len(registered[word])} chips register as {word}, which the device "
                "config does not define",
            )
        )
    for word, spec in specs.items():
        chips = registered.get(word)
        if not chips:
            problems.append(
                (
                    "warn",
                    f"{word} (chipName {spec.chip_name}) has no registered chips: "
                    "chipName must equal the name the driver reports",
                )
            )
            continue
        slots = slots_per_chip(spec.memory_allocatable, spec.templates)
        if any(c != (slots, spec.memory_allocatable) for c in chips):
            problems.append(
                (
                    "warn",
                    f"{word} chips advertise other slots or memory than the config "
                    f"({slots} slots, {spec.memory_allocatable} MB): the device "
                    "plugin has not restarted since the change",
                )
            )
    if not problems:
        return _check(
            "registrations", "ok", "node registrations agree with the device config"
        )
    worst = max((p[0] for p in problems), key=_RANK.__getitem__)
    return _check(
        "registrations",
        worst,
        "; ".join(p[1] for p in problems),
        "fix chipName/commonWord in the device config, or restart the device plugin",
    )


def _drift_check(cluster: Cluster) -> dict[str, Any]:
    drift = deviceconfig_drift_recorded(cluster)
    if drift["in_sync"]:
        return _check("device_config_drift", "ok", "no hand edit recorded")
    return _check(
        "device_config_drift",
        "warn",
        f"the ConfigMap was edited outside the portal (v{drift['live_version']})",
        "adopt the live content, or publish over it deliberately",
    )


def cluster_health(cluster: Cluster) -> dict[str, Any]:
    """Configuration checks from what sync mirrored (no cluster API call).

    Returns:
        ``cluster``, ``check_status`` (the worst of all) and ``checks``: each
        with ``id``, ``check_status`` ("ok", "warn" or "fail"), ``message``
        and ``fix``, always in the same order and with the same ids.
    """
    conf, parsed = _volcano_conf(cluster)
    checks = [
        parsed,
        *_deviceshare_checks(cluster, conf),
        _preempt_check(conf),
        _daemonset_check(cluster),
        _registration_checks(cluster),
        _drift_check(cluster),
    ]
    worst = max((c["check_status"] for c in checks), key=_RANK.__getitem__)
    return {"cluster": cluster.name, "check_status": worst, "checks": checks}
