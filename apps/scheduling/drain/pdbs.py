"""Which PodDisruptionBudgets cover a pod, as the Eviction API decides it (pure).

A budget covers the pods of its namespace that its label selector matches
(policy/v1: an empty selector matches every pod, a missing one none). The
Eviction API refuses (429) while a covering budget allows no disruption, and
cannot evict a pod that more than one budget covers (500).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any


def selector_matches(
    selector: Mapping[str, Any] | None, labels: Mapping[str, str]
) -> bool:
    """Whether a metav1.LabelSelector matches ``labels``."""
    if selector is None:
        return False
    wanted = selector.get("matchLabels") or {}
    if any(labels.get(key) != value for key, value in wanted.items()):
        return False
    return all(
        _expression_holds(expression, labels)
        for expression in selector.get("matchExpressions") or []
    )


def _expression_holds(expression: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    key, operator = expression.get("key", ""), expression.get("operator")
    values = expression.get("values") or []
    if operator == "In":
        return key in labels and labels[key] in values
    if operator == "NotIn":
        return key not in labels or labels[key] not in values
    if operator == "Exists":
        return key in labels
    if operator == "DoesNotExist":
        return key not in labels
    return False  # the API server refuses any other operator


def covering(
    namespace: str, labels: Mapping[str, str], budgets: Iterable[Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """The budgets that cover a pod: ``{name, disruptions_allowed}`` each."""
    found = []
    for budget in budgets:
        meta = budget.get("metadata") or {}
        if meta.get("namespace") != namespace:
            continue
        if not selector_matches((budget.get("spec") or {}).get("selector"), labels):
            continue
        status = budget.get("status") or {}
        found.append(
            {
                "name": meta.get("name", ""),
                "disruptions_allowed": int(status.get("disruptionsAllowed") or 0),
            }
        )
    return sorted(found, key=lambda b: b["name"])


def what_happens(pdbs: list[dict[str, Any]], first: str) -> str:
    """``first`` (what the drain does with the pod), and what its budgets add."""
    if len(pdbs) > 1:
        names = ", ".join(b["name"] for b in pdbs)
        return (
            f"{first}; but {len(pdbs)} PodDisruptionBudgets cover it ({names}) and "
            "the Eviction API refuses such a pod: remove all but one"
        )
    blocking = [b["name"] for b in pdbs if b["disruptions_allowed"] <= 0]
    if blocking:
        return (
            f"{first}; its eviction waits while PodDisruptionBudget {blocking[0]} "
            "allows no disruption (retried, never forced)"
        )
    return first
