"""Deployments, DaemonSets, PodDisruptionBudgets and PriorityClasses."""

from __future__ import annotations

from datetime import datetime

from simcluster.columndocs import DOCS
from simcluster.printers.base import (
    AGE,
    CONTAINERS,
    IMAGES,
    NAME,
    Cells,
    Column,
    Obj,
    Printer,
    age_of,
    container_cells,
    format_labels,
    int_or_string,
    meta_of,
    selector_string,
    spec_of,
    status_of,
)


def _deployment_cells(deploy: Obj, now: datetime) -> Cells:
    spec, status = spec_of(deploy), status_of(deploy)
    replicas = spec.get("replicas", 1)  # defaulted to 1 when the server reads it
    selector = selector_string(spec.get("selector"))
    names, images = container_cells(spec_of(spec.get("template") or {}))
    return [
        meta_of(deploy).get("name", ""),
        f"{status.get('readyReplicas', 0)}/{replicas}",
        status.get("updatedReplicas", 0),
        status.get("availableReplicas", 0),
        age_of(deploy, now),
        names,
        images,
        "<invalid>" if selector is None else selector,
    ]


DEPLOYMENT = Printer(
    (
        NAME,
        Column("Ready", "Number of the pod with ready state"),
        Column("Up-to-date", DOCS["DeploymentStatus.updatedReplicas"]),
        Column("Available", DOCS["DeploymentStatus.availableReplicas"]),
        AGE,
        CONTAINERS,
        IMAGES,
        Column("Selector", DOCS["DeploymentSpec.selector"], priority=1),
    ),
    _deployment_cells,
)


def _daemonset_cells(ds: Obj, now: datetime) -> Cells:
    spec, status = spec_of(ds), status_of(ds)
    template_spec = spec_of(spec.get("template") or {})
    names, images = container_cells(template_spec)
    selector = selector_string(spec.get("selector"))
    return [
        meta_of(ds).get("name", ""),
        status.get("desiredNumberScheduled", 0),
        status.get("currentNumberScheduled", 0),
        status.get("numberReady", 0),
        status.get("updatedNumberScheduled", 0),
        status.get("numberAvailable", 0),
        format_labels(template_spec.get("nodeSelector")),
        age_of(ds, now),
        names,
        images,
        "<error>" if selector is None else selector or "<none>",
    ]


def _ds_column(name: str, field: str) -> Column:
    return Column(name, DOCS[f"DaemonSetStatus.{field}"], type="integer")


DAEMONSET = Printer(
    (
        NAME,
        _ds_column("Desired", "desiredNumberScheduled"),
        _ds_column("Current", "currentNumberScheduled"),
        _ds_column("Ready", "numberReady"),
        _ds_column("Up-to-date", "updatedNumberScheduled"),
        _ds_column("Available", "numberAvailable"),
        Column("Node Selector", DOCS["PodSpec.nodeSelector"]),
        AGE,
        CONTAINERS,
        IMAGES,
        Column("Selector", DOCS["DaemonSetSpec.selector"], priority=1),
    ),
    _daemonset_cells,
)
PDB = Printer(
    (
        NAME,
        Column("Min Available", "The minimum number of pods that must be available."),
        Column(
            "Max Unavailable", "The maximum number of pods that may be unavailable."
        ),
        Column(
            "Allowed Disruptions",
            "Calculated number of pods that may be disrupted at this time.",
            type="integer",
        ),
        AGE,
    ),
    lambda o, now: [
        meta_of(o).get("name", ""),
        int_or_string(spec_of(o).get("minAvailable")),
        int_or_string(spec_of(o).get("maxUnavailable")),
        status_of(o).get("disruptionsAllowed", 0),
        age_of(o, now),
    ],
)
PRIORITYCLASS = Printer(
    (
        NAME,
        Column("Value", DOCS["PriorityClass.value"], type="integer"),
        Column("Global-Default", DOCS["PriorityClass.globalDefault"], type="boolean"),
        AGE,
        Column("PreemptionPolicy", DOCS["PriorityClass.preemptionPolicy"]),
    ),
    lambda o, now: [
        meta_of(o).get("name", ""),
        o.get("value", 0),
        bool(o.get("globalDefault")),
        age_of(o, now),
        o.get("preemptionPolicy") or "PreemptLowerPriority",  # the server default
    ],
)
