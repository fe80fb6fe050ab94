"""Pure placement helpers for the binder: requests, node matching, chip choice."""

from __future__ import annotations

import random
from dataclasses import dataclass, field, replace
from typing import Any

from simcluster import hami
from simcluster.store import Obj

VNPU_SCHEDULERS = frozenset({"volcano", "hami-scheduler"})


@dataclass
class ChipState:
    """One registered chip as the scheduler sees it, with its current usage."""

    node: str
    index: int
    uuid: str
    type: str
    count: int
    devmem: int
    health: bool
    used: int = 0
    usedmem: int = 0
    # The part of ``used``/``usedmem`` held by terminating pods: HAMi counts it,
    # Volcano does not (it maps a terminating pod to Releasing and frees its room).
    releasing: int = 0
    releasingmem: int = 0


@dataclass(frozen=True)
class DeviceRequest:
    """One container's request for chips of one type."""

    container: int
    chip_type: hami.ChipTypeSpec
    count: int
    memory: int | None


@dataclass
class Pick:
    """A chosen chip for one request."""

    request: DeviceRequest
    chip: ChipState
    fit: hami.FitResult


@dataclass
class NodeInfo:
    """What the binder knows about a node."""

    name: str
    labels: dict[str, str]
    unschedulable: bool
    chips: list[ChipState] = field(default_factory=list)
    taints: list[dict[str, Any]] = field(default_factory=list)


def containers_of(pod: Obj) -> list[dict[str, Any]]:
    """Init containers first, then containers (the order HAMi encodes)."""
    spec = pod.get("spec") or {}
    return list(spec.get("initContainers") or []) + list(spec.get("containers") or [])


def _int(value: Any) -> int | None:
    try:
        return int(str(value))
    except (TypeError, ValueError):
        return None


def device_requests(
    pod: Obj, chip_types: list[hami.ChipTypeSpec]
) -> list[DeviceRequest]:
    """Containers' limits on ``huawei.com/<cw>`` or ``huawei.com/<cw>-memory``."""
    out: list[DeviceRequest] = []
    for index, container in enumerate(containers_of(pod)):
        limits = (container.get("resources") or {}).get("limits") or {}
        for chip_type in chip_types:
            if (
                chip_type.resource_name in limits
                or chip_type.resource_memory_name in limits
            ):
                count = _int(limits.get(chip_type.resource_name, 1)) or 1
                memory = (
                    _int(limits[chip_type.resource_memory_name])
                    if chip_type.resource_memory_name in limits
                    else None
                )
                out.append(DeviceRequest(index, chip_type, count, memory))
    return out


def request_fit(request: DeviceRequest, scheduler_name: str) -> hami.FitResult:
    """The template rule on one device request, read as the pod's scheduler reads it."""
    reading = (
        hami.Scheduler.VOLCANO if scheduler_name == "volcano" else hami.Scheduler.HAMI
    )
    return hami.fit_template(request.chip_type, request.memory, scheduler=reading)


def _expr_ok(expr: dict[str, Any], values: dict[str, str]) -> bool:
    key, op, wanted = (
        expr.get("key", ""),
        expr.get("operator"),
        expr.get("values") or [],
    )
    if op == "In":
        return values.get(key) in wanted
    if op == "NotIn":
        return values.get(key) not in wanted
    if op == "Exists":
        return key in values
    if op == "DoesNotExist":
        return key not in values
    if op in ("Gt", "Lt") and key in values and wanted:
        have, limit = _int(values[key]), _int(wanted[0])
        if have is None or limit is None:
            return False
        return have > limit if op == "Gt" else have < limit
    return False


def node_matches(pod: Obj, node: NodeInfo) -> bool:
    """nodeSelector and required node affinity (matchExpressions, matchFields)."""
    spec = pod.get("spec") or {}
    for key, value in (spec.get("nodeSelector") or {}).items():
        if node.labels.get(key) != value:
            return False
    required = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    ) or {}
    terms = required.get("nodeSelectorTerms") or []
    if not terms:
        return True
    fields = {"metadata.name": node.name}
    for term in terms:
        exprs = term.get("matchExpressions") or []
        field_exprs = term.get("matchFields") or []
        if not exprs and not field_exprs:
            continue
        if all(_expr_ok(e, node.labels) for e in exprs) and all(
            _expr_ok(e, fields) for e in field_exprs
        ):
            return True
    return False


def _tolerated(taint: dict[str, Any], toleration: dict[str, Any]) -> bool:
    if toleration.get("effect") and toleration["effect"] != taint.get("effect"):
        return False
    if toleration.get("operator") == "Exists":
        return not toleration.get("key") or toleration["key"] == taint.get("key")
    return toleration.get("key") == taint.get("key") and (
        toleration.get("value") or ""
    ) == (taint.get("value") or "")


def taints_tolerated(pod: Obj, node: NodeInfo) -> bool:
    """Every NoSchedule/NoExecute taint of the node is tolerated by the pod
    (the scheduler's TaintToleration filter; PreferNoSchedule only scores)."""
    tolerations = (pod.get("spec") or {}).get("tolerations") or []
    return all(
        any(_tolerated(taint, t) for t in tolerations)
        for taint in node.taints
        if taint.get("effect") in ("NoSchedule", "NoExecute")
    )


def _uuid_list(annotations: dict[str, str], key: str) -> set[str]:
    return {u.strip() for u in (annotations.get(key) or "").split(",") if u.strip()}


@dataclass(frozen=True)
class SchedulerRules:
    """How one scheduler chooses a chip (docs/scheduler-behaviour.md).

    Attributes:
        honours_pins: reads ``hami.io/use-/no-use-<cw>-uuid`` (HAMi; Volcano never).
        counts_releasing: a terminating pod still holds its room (HAMi; not Volcano).
        policy: ``binpack``, ``spread`` or ``""`` (no score: any fitting chip).
        spread_counts_one: Volcano up to v1.15.1 scores spread 100 for a chip
            with exactly one vNPU (its bug) instead of an empty chip.
        random_ties: equal scores are broken at random (Go map order), not by index.
        device_usage_score: HAMi's chip score (``hami_chip_score``): spread
            takes the lowest, binpack the highest, a tie the highest index.
    """

    honours_pins: bool
    counts_releasing: bool
    policy: str
    spread_counts_one: bool = False
    random_ties: bool = False
    device_usage_score: bool = False


#: The pod annotation that overrides HAMi's chip policy for one pod
#: (v2.9.0 pkg/util/types.go ``GPUSchedulerPolicyAnnotationKey``).
GPU_POLICY_ANNOTATION = "hami.io/gpu-scheduler-policy"


def pod_gpu_policy(annotations: dict[str, str], default: str) -> str:
    """The chip policy HAMi uses for a pod: its annotation, else the scheduler's.

    As ``util.GetGPUSchedulerPolicyByPod``; any value but ``binpack`` sorts as
    spread (``DeviceUsageList.Less``: "default policy is spread").
    """
    if GPU_POLICY_ANNOTATION not in annotations:
        return default
    return "binpack" if annotations[GPU_POLICY_ANNOTATION] == "binpack" else "spread"


def hami_rules(policy: str) -> SchedulerRules:
    """HAMi's scheduler: pins honoured, terminating pods still count.

    Neither scheduler checks an Ascend chip's health: HAMi v2.9.0's Ascend
    ``Fit`` never reads it (the real scheduler in kubestack binds a pod
    pinned to the guide's sick chip: tests/realstack/test_hami_scheduler.py).
    """
    return SchedulerRules(
        honours_pins=True,
        counts_releasing=True,
        policy=policy,
        device_usage_score=True,
    )


#: HAMi's ``util.Weight``: each share of a chip's score counts ten.
HAMI_WEIGHT = 10.0


def hami_chip_score(chip: ChipState, memory: int) -> float:
    """HAMi v2.9.0's score of a chip for one vNPU of ``memory`` MB
    (``pkg/scheduler/policy/gpu_policy.go`` ``ComputeScore``):
    ``10 * ((used + 1) / count + usedcores / totalcore + (usedmem + memory) /
    totalmem)``. Template pods ask no cores, and simcluster's chips hold none,
    so the core share is 0."""
    if not chip.count or not chip.devmem:
        return 0.0
    return HAMI_WEIGHT * (
        (chip.used + 1) / chip.count + (chip.usedmem + memory) / chip.devmem
    )


def _hami_order(score: float, index: int, policy: str) -> tuple[float, float]:
    """HAMi sorts its chips by score (spread: descending, binpack: ascending;
    ``DeviceUsageList.Less``; a stable sort for a node's few chips, so ties keep
    index order) and ``Fit`` walks the list from its end: spread takes the
    lowest score, binpack the highest, and a tie the highest index."""
    return (-score if policy == "binpack" else score, -float(index))


def volcano_rules(policy: str, weight: int) -> SchedulerRules:
    """Volcano's deviceshare (v1.15.1) with ``SchedulePolicy``/``ScheduleWeight``."""
    return SchedulerRules(
        honours_pins=False,
        counts_releasing=False,
        policy=policy if weight > 0 else "",
        spread_counts_one=True,
        random_ties=True,
    )


def chip_score(chip: ChipState, rules: SchedulerRules) -> float:
    """CalScore: binpack = share of memory used; spread = an unused chip first."""
    used, usedmem = chip_usage(chip, rules)
    if rules.policy == "spread":
        wanted = 1 if rules.spread_counts_one else 0
        return 100.0 if used == wanted else 0.0
    if rules.policy == "binpack":
        return 100.0 * usedmem / chip.devmem if chip.devmem else 0.0
    return 0.0


def chip_usage(chip: ChipState, rules: SchedulerRules) -> tuple[int, int]:
    """Slots and memory in use as this scheduler counts them."""
    if rules.counts_releasing:
        return chip.used, chip.usedmem
    return chip.used - chip.releasing, chip.usedmem - chip.releasingmem


def pick_on_node(
    node: NodeInfo,
    requests: list[DeviceRequest],
    fits: list[hami.FitResult],
    annotations: dict[str, str],
    rules: SchedulerRules,
    rng: random.Random,
) -> list[Pick] | None:
    """Choose chips on one node for all requests, or None if they do not fit."""
    extra: dict[str, tuple[int, int]] = {}
    picks: list[Pick] = []
    for request, fit in zip(requests, fits, strict=True):
        cw = request.chip_type.common_word
        wanted = unwanted = set[str]()
        if rules.honours_pins:
            wanted = _uuid_list(annotations, hami.use_uuid_key(cw))
            unwanted = _uuid_list(annotations, hami.no_use_uuid_key(cw))
        for _ in range(request.count):
            candidates: list[tuple[float, float, ChipState]] = []
            for chip in node.chips:
                if chip.type != cw:
                    continue
                if (wanted and chip.uuid not in wanted) or chip.uuid in unwanted:
                    continue
                add_used, add_mem = extra.get(chip.uuid, (0, 0))
                used, usedmem = chip_usage(chip, rules)
                used, usedmem = used + add_used, usedmem + add_mem
                if used >= chip.count or chip.devmem - usedmem < fit.memory:
                    continue
                view = ChipState(
                    chip.node,
                    chip.index,
                    chip.uuid,
                    chip.type,
                    chip.count,
                    chip.devmem,
                    chip.health,
                    used,
                    usedmem,
                )
                if rules.device_usage_score:
                    score = hami_chip_score(view, fit.memory)
                    candidates.append(
                        (*_hami_order(score, chip.index, rules.policy), chip)
                    )
                    continue
                tie = rng.random() if rules.random_ties else float(chip.index)
                # ``view`` already holds this scheduler's usage: score it as is.
                score = chip_score(view, replace(rules, counts_releasing=True))
                candidates.append((-score, tie, chip))
            if not candidates:
                return None
            _, _, best = min(candidates, key=lambda c: (c[0], c[1]))
            add_used, add_mem = extra.get(best.uuid, (0, 0))
            extra[best.uuid] = (add_used + 1, add_mem + fit.memory)
            picks.append(Pick(request, best, fit))
    return picks


def node_score(picks: list[Pick], rules: SchedulerRules) -> float:
    """Sum of the chosen chips' scores before placement."""
    return sum(chip_score(p.chip, rules) for p in picks)
