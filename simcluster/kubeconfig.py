"""Write a kubeconfig with an admin context and a read-only context."""

from __future__ import annotations

import base64
import os
from pathlib import Path
from typing import Any

import yaml

CLUSTER = "simcluster"
ADMIN_CONTEXT = "simcluster"
READONLY_CONTEXT = "readonly"


def kubeconfig(
    url: str, admin_token: str, readonly_token: str, ca_pem: bytes | None = None
) -> dict[str, Any]:
    """The kubeconfig document (current context: admin)."""
    cluster: dict[str, Any] = {"server": url}
    if ca_pem:
        cluster["certificate-authority-data"] = base64.b64encode(ca_pem).decode()
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "preferences": {},
        "clusters": [{"name": CLUSTER, "cluster": cluster}],
        "users": [
            {"name": "simcluster-admin", "user": {"token": admin_token}},
            {"name": "simcluster-readonly", "user": {"token": readonly_token}},
        ],
        "contexts": [
            {
                "name": ADMIN_CONTEXT,
                "context": {
                    "cluster": CLUSTER,
                    "user": "simcluster-admin",
                    "namespace": "default",
                },
            },
            {
                "name": READONLY_CONTEXT,
                "context": {
                    "cluster": CLUSTER,
                    "user": "simcluster-readonly",
                    "namespace": "default",
                },
            },
        ],
        "current-context": ADMIN_CONTEXT,
    }


def write_kubeconfig(
    path: str | os.PathLike[str],
    url: str,
    admin_token: str,
    readonly_token: str,
    ca_pem: bytes | None = None,
) -> Path:
    """Write the kubeconfig (mode 0600) and return its path."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    text = yaml.safe_dump(
        kubeconfig(url, admin_token, readonly_token, ca_pem), sort_keys=False
    )
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(text)
    return target
