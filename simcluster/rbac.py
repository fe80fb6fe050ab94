"""RBAC for service-account tokens, evaluated as kube-apiserver's RBAC authorizer does.

The admin and read-only tokens keep their fixed powers (``auth.py``). A token
issued for a ServiceAccount (``SimCluster.service_account_token``) acts as
``system:serviceaccount:<namespace>:<name>`` and may do exactly what the
stored ClusterRoleBindings and RoleBindings grant it:

- a ClusterRoleBinding grants its ClusterRole's rules everywhere; a
  RoleBinding grants its Role's (or ClusterRole's) rules in its namespace;
- a rule matches on verb, API group, resource (``pods``, ``pods/eviction``,
  ``*``, ``*/eviction``, ``pods/*``) and, when it lists ``resourceNames``, the
  object's name; for list and watch the name comes from a
  ``metadata.name=...`` field selector, as in kube-apiserver;
- subjects match by ServiceAccount, User, or the groups ``system:authenticated``,
  ``system:serviceaccounts`` and ``system:serviceaccounts:<namespace>``.

Not implemented: aggregated ClusterRoles (``aggregationRule``), non-resource
URLs (discovery is open to every authenticated caller, as the default
``system:discovery`` binding makes it), impersonation and escalation checks.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from simcluster import resources
from simcluster.store import Obj, Store

SA_PREFIX = "system:serviceaccount:"


@dataclass(frozen=True)
class Attributes:
    """What a request asks to do (kube-apiserver's ``authorizer.Attributes``)."""

    user: str
    verb: str
    group: str
    resource: str
    subresource: str = ""
    namespace: str = ""
    name: str = ""


def service_account_user(namespace: str, name: str) -> str:
    """The user name a ServiceAccount's token authenticates as."""
    return f"{SA_PREFIX}{namespace}:{name}"


def name_from_field_selector(selector: str) -> str:
    """``metadata.name=x`` (alone or among other terms) -> ``x``; otherwise ""."""
    for term in filter(None, (t.strip() for t in selector.split(","))):
        for op in ("==", "="):
            key, sep, value = term.partition(op)
            if sep and key.strip() == "metadata.name" and not key.endswith("!"):
                return value.strip()
    return ""


def _groups(user: str) -> set[str]:
    groups = {"system:authenticated"}
    if user.startswith(SA_PREFIX):
        namespace = user[len(SA_PREFIX) :].split(":", 1)[0]
        groups |= {"system:serviceaccounts", f"system:serviceaccounts:{namespace}"}
    return groups


def _subject_matches(subject: Any, user: str, binding_namespace: str) -> bool:
    if not isinstance(subject, dict):
        return False
    kind, name = subject.get("kind"), subject.get("name")
    if kind == "ServiceAccount":
        namespace = subject.get("namespace") or binding_namespace
        return user == service_account_user(namespace, str(name))
    if kind == "User":
        return user == name
    if kind == "Group":
        return name in _groups(user)
    return False


def _resource_matches(rule_resources: list[str], attrs: Attributes) -> bool:
    combined = (
        f"{attrs.resource}/{attrs.subresource}" if attrs.subresource else attrs.resource
    )
    for entry in rule_resources:
        if entry in ("*", combined):
            return True
        if attrs.subresource and entry == f"*/{attrs.subresource}":
            return True
        if attrs.subresource and entry == f"{attrs.resource}/*":
            return True
    return False


def rule_allows(rule: Any, attrs: Attributes) -> bool:
    """Whether one PolicyRule grants the request."""
    if not isinstance(rule, dict):
        return False
    verbs = rule.get("verbs") or []
    if "*" not in verbs and attrs.verb not in verbs:
        return False
    groups = rule.get("apiGroups") or []
    if "*" not in groups and attrs.group not in groups:
        return False
    if not _resource_matches(rule.get("resources") or [], attrs):
        return False
    names = rule.get("resourceNames") or []
    return not names or attrs.name in names


def _role_rules(store: Store, ref: Any, binding_namespace: str) -> list[Any]:
    if not isinstance(ref, dict):
        return []
    if ref.get("kind") == "ClusterRole":
        found = store.get(resources.CLUSTERROLE, "", str(ref.get("name")))
    elif ref.get("kind") == "Role" and binding_namespace:
        found = store.get(resources.ROLE, binding_namespace, str(ref.get("name")))
    else:
        return []
    return list((found.obj.get("rules") or []) if found else [])


def _granted_rules(store: Store, attrs: Attributes) -> Iterator[Any]:
    _, cluster_bindings = store.list(resources.CLUSTERROLEBINDING)
    for binding in cluster_bindings:
        obj: Obj = binding.obj
        if any(_subject_matches(s, attrs.user, "") for s in obj.get("subjects") or []):
            yield from _role_rules(store, obj.get("roleRef"), "")
    if not attrs.namespace:
        return
    _, bindings = store.list(resources.ROLEBINDING, attrs.namespace)
    for binding in bindings:
        obj = binding.obj
        subjects = obj.get("subjects") or []
        if any(_subject_matches(s, attrs.user, attrs.namespace) for s in subjects):
            yield from _role_rules(store, obj.get("roleRef"), attrs.namespace)


def authorize(store: Store, attrs: Attributes) -> bool:
    """Whether the bindings in ``store`` grant ``attrs`` (deny by default)."""
    return any(rule_allows(rule, attrs) for rule in _granted_rules(store, attrs))
