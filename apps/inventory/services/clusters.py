"""Registering, changing and removing clusters (their connection checked, stored encrypted)."""

from __future__ import annotations

from typing import Any

from django.db import IntegrityError, transaction
from django.utils.translation import gettext as _

from apps.audit.services import audit_record
from apps.common.crypto import encrypt
from apps.common.exceptions import ValidationFailed
from apps.inventory.kubeconfig import (
    kubeconfig_check,
    kubeconfig_dir,
    kubeconfig_parse,
    path_inside_dir,
)
from apps.inventory.models import (
    Cluster,
)
from apps.inventory.services._clean import full_clean

CLUSTER_FIELDS = (
    "name",
    "description",
    "connection",
    "kubeconfig_path",
    "kubeconfig_context",
    "api_url",
    "ca_cert",
    "verify_tls",
    "device_config_namespace",
    "device_config_name",
    "scheduler",
)


def cluster_snapshot(cluster: Cluster) -> dict[str, Any]:
    """Audit view of a cluster: everything but the secret, which shows as present or not."""
    data = {field: getattr(cluster, field) for field in CLUSTER_FIELDS}
    data["has_token"] = cluster.has_token
    data["has_kubeconfig"] = cluster.has_kubeconfig
    return data


def _kubeconfig_set(
    cluster: Cluster, kubeconfig: str | None, path_changed: bool
) -> None:
    """Check and store a kubeconfig's content (``""`` removes it) and the path.

    Raises:
        ValidationFailed: Naming ``kubeconfig`` (unsafe or not a kubeconfig),
            ``kubeconfig_path`` (outside KUBECONFIG_DIR) or ``kubeconfig_context``.
    """
    if path_changed and cluster.kubeconfig_path:
        path_inside_dir(cluster.kubeconfig_path, field="kubeconfig_path")
    if kubeconfig is None:
        return
    if kubeconfig:
        config = kubeconfig_parse(kubeconfig)
        kubeconfig_check(
            config,
            field="kubeconfig",
            base_dir=kubeconfig_dir(),
            context=cluster.kubeconfig_context,
        )
    cluster.kubeconfig_encrypted = encrypt(kubeconfig)


@transaction.atomic
def cluster_create(
    *, actor: Any, token: str = "", kubeconfig: str | None = None, **fields: Any
) -> Cluster:
    """Register a cluster. ``token`` and ``kubeconfig`` (content) are stored
    encrypted and never returned; a ``kubeconfig_path`` must be in KUBECONFIG_DIR."""
    cluster = Cluster(**{k: v for k, v in fields.items() if k in CLUSTER_FIELDS})
    if token:
        cluster.token_encrypted = encrypt(token)
    _kubeconfig_set(cluster, kubeconfig, path_changed=True)
    full_clean(cluster)
    try:
        with transaction.atomic():
            cluster.save()
    except IntegrityError as exc:
        raise ValidationFailed(
            _("cluster %(cluster)r already exists") % {"cluster": cluster.name},
            detail={
                "name": [
                    _("a cluster named %(cluster)r already exists")
                    % {"cluster": cluster.name}
                ]
            },
        ) from exc
    audit_record(
        actor=actor,
        action="cluster.create",
        target=cluster,
        cluster=cluster,
        after=cluster_snapshot(cluster),
    )
    return cluster


@transaction.atomic
def cluster_update(
    *,
    cluster: Cluster,
    actor: Any,
    token: str | None = None,
    kubeconfig: str | None = None,
    **fields: Any,
) -> Cluster:
    """Change a cluster's settings; ``token=""`` / ``kubeconfig=""`` remove the stored one."""
    before = cluster_snapshot(cluster)
    old_path = cluster.kubeconfig_path
    for key, value in fields.items():
        if key in CLUSTER_FIELDS:
            setattr(cluster, key, value)
    if token is not None:
        cluster.token_encrypted = encrypt(token)
    _kubeconfig_set(
        cluster, kubeconfig, path_changed=cluster.kubeconfig_path != old_path
    )
    full_clean(cluster)
    cluster.save()
    audit_record(
        actor=actor,
        action="cluster.update",
        target=cluster,
        before=before,
        after=cluster_snapshot(cluster),
    )
    return cluster


@transaction.atomic
def cluster_delete(*, cluster: Cluster, actor: Any) -> None:
    """Forget a cluster and everything synced from it (the cluster itself is untouched)."""
    before = cluster_snapshot(cluster)
    audit_record(
        actor=actor,
        action="cluster.delete",
        target=cluster,
        cluster=None,
        before=before,
    )
    cluster.delete()
