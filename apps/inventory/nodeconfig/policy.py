"""Isolating and restoring chips by policy: the suggestions, acted on without a person.

Off by default (``ISOLATION_AUTO_ISOLATE``, ``ISOLATION_AUTO_RESTORE``): a
site turns each rule on by itself. When on, beat runs
:func:`isolation_policy_run`, which takes each cluster's suggestions
(:mod:`apps.inventory.nodeconfig.suggestions`) and acts on them through the
same services a person uses (``chip_isolate``, ``chip_restore``), as the system
actor ``policy``, with a reason naming the rule and its figures; those services
audit it as they audit a person.

One chip's failure never stops the others. A refusal (the plugin restart is
blocked by an unconfirmed device-config restart, the node's plugin does not
read the node config, the cluster is away) would come back every tick until
someone acts, so it is logged once per chip, action and message, not every
tick; a success forgets it.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

from django.conf import settings
from django.core.cache import cache

from apps.common.exceptions import DomainError
from apps.inventory.models import Chip, Cluster
from apps.inventory.nodeconfig.isolation import chip_isolate, chip_restore
from apps.inventory.nodeconfig.suggestions import (
    ISOLATE,
    RESTORE,
    Suggestion,
    chip_suggestions,
)
from apps.inventory.selectors import connected_cluster_ids

log = logging.getLogger(__name__)

#: The name the policy's acts are audited under.
POLICY_ACTOR = "policy"
#: How long a logged refusal is remembered (it is logged again after, once).
_REFUSAL_MEMORY_SECONDS = 24 * 3600


@dataclass(frozen=True)
class PolicyAct:
    """One act the policy decided on: which chip, which way, and the audited reason."""

    action: str  # ISOLATE or RESTORE
    chip_id: int
    uuid: str
    reason: str


@dataclass
class PolicyReport:
    """What one run did: chips acted on, refused (with why), and failed."""

    acted: list[PolicyAct] = field(default_factory=list)
    refused: dict[int, str] = field(default_factory=dict)  # chip id -> why
    failed: dict[int, str] = field(default_factory=dict)


def policy_acts(
    suggestions: Iterable[Suggestion], *, auto_isolate: bool, auto_restore: bool
) -> list[PolicyAct]:
    """The suggestions the switched-on rules act on, each with its reason (pure)."""
    rules = {ISOLATE: auto_isolate, RESTORE: auto_restore}
    switch = {ISOLATE: "ISOLATION_AUTO_ISOLATE", RESTORE: "ISOLATION_AUTO_RESTORE"}
    return [
        PolicyAct(
            action=s.action,
            chip_id=s.chip.id,
            uuid=s.chip.uuid,
            reason=(f"{switch[s.action]}: {s.why}; since {s.since:%Y-%m-%d %H:%M:%S}Z"),
        )
        for s in suggestions
        if rules.get(s.action, False)
    ]


def _remember_once(act: PolicyAct, why: str, *, error: bool) -> None:
    """Log ``why`` for this chip and action unless it was the last thing logged."""
    key = f"vnpu:isolation-policy:{act.chip_id}:{act.action}"
    if cache.get(key) == why:
        return
    cache.set(key, why, timeout=_REFUSAL_MEMORY_SECONDS)
    level = logging.ERROR if error else logging.WARNING
    log.log(
        level, "isolation policy: %s chip %s not done: %s", act.action, act.uuid, why
    )


def _forget(act: PolicyAct) -> None:
    cache.delete(f"vnpu:isolation-policy:{act.chip_id}:{act.action}")


def _carry_out(act: PolicyAct, report: PolicyReport) -> None:
    chip = Chip.objects.select_related("node", "cluster").filter(pk=act.chip_id).first()
    if chip is None:  # gone since the suggestions were read
        return
    service = chip_isolate if act.action == ISOLATE else chip_restore
    try:
        service(chip=chip, actor=None, actor_name=POLICY_ACTOR, reason=act.reason)
    except DomainError as refusal:
        report.refused[act.chip_id] = f"{refusal.code}: {refusal.message}"
        _remember_once(act, report.refused[act.chip_id], error=False)
        return
    except Exception as failure:  # one chip's failure must not stop the others
        report.failed[act.chip_id] = f"{type(failure).__name__}: {failure}"
        _remember_once(act, report.failed[act.chip_id], error=True)
        return
    _forget(act)
    report.acted.append(act)
    log.info("isolation policy: %s chip %s: %s", act.action, act.uuid, act.reason)


def isolation_policy_cluster(
    cluster: Cluster, report: PolicyReport, now: datetime | None = None
) -> None:
    """Act on one cluster's suggestions as the switched-on rules say."""
    acts = policy_acts(
        chip_suggestions(cluster, now).suggestions,
        auto_isolate=settings.ISOLATION_AUTO_ISOLATE,
        auto_restore=settings.ISOLATION_AUTO_RESTORE,
    )
    for act in acts:
        _carry_out(act, report)


def isolation_policy_run(now: datetime | None = None) -> PolicyReport:
    """Beat's entry: every connected cluster, when either rule is on (else nothing)."""
    report = PolicyReport()
    if not (settings.ISOLATION_AUTO_ISOLATE or settings.ISOLATION_AUTO_RESTORE):
        return report
    for cluster_id in connected_cluster_ids():
        cluster = Cluster.objects.filter(pk=cluster_id).first()
        if cluster is None:
            continue
        try:
            isolation_policy_cluster(cluster, report, now)
        except Exception:  # one cluster's failure must not stop the others
            log.exception("isolation policy: cluster %s failed", cluster.name)
    return report
