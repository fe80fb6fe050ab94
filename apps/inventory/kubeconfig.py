"""Kubeconfigs the portal may use, and only those.

A kubeconfig is an admin's credential for a cluster, but loaded carelessly it
is also a way into the web process: a path can name any file on the server,
a ``tokenFile`` or ``certificate-authority`` reads one (and sends it to the
configured server), and an ``exec`` plugin or ``auth-provider`` runs a
command. So:

- the kubeconfig's content is stored encrypted in the database
  (``Cluster.kubeconfig_encrypted``, ``apps.common.crypto``); that is what
  the API and ``manage.py cluster add --kubeconfig`` store;
- a ``kubeconfig_path`` is honoured only inside ``KUBECONFIG_DIR`` (none when
  it is unset), and so is every file a kubeconfig refers to, named by an
  absolute path (the loader reads a relative one from the working directory);
- ``exec`` plugins and ``auth-provider`` entries are refused unless the
  operator sets ``KUBECONFIG_ALLOW_EXEC=true``;
- a refusal never says whether a file outside ``KUBECONFIG_DIR`` exists: the
  path is checked before anything touches the file system.

Everything is checked again each time a client is built (``loaded_kubeconfig``),
before the ``kubernetes`` loader sees the config, so a row written before
these rules cannot get around them.
"""

from __future__ import annotations

import base64
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from django.conf import settings
from django.utils.translation import gettext as _

from apps.common.crypto import decrypt
from apps.common.exceptions import ValidationFailed

# Larger than any real kubeconfig; a guard against a pasted file of gigabytes.
MAX_KUBECONFIG_BYTES = 1_000_000

# Keys of a kubeconfig that name a file to read: (section, key, inline twin).
_FILE_KEYS = (
    ("cluster", "certificate-authority", "certificate-authority-data"),
    ("user", "client-certificate", "client-certificate-data"),
    ("user", "client-key", "client-key-data"),
    ("user", "tokenFile", "token"),
)


@dataclass(frozen=True)
class LoadedKubeconfig:
    """A checked kubeconfig and the folder its relative file names start from."""

    config: dict[str, Any]
    base_dir: Path | None


def kubeconfig_dir() -> Path | None:
    """``KUBECONFIG_DIR`` resolved (symlinks followed), or None when it is unset."""
    configured = getattr(settings, "KUBECONFIG_DIR", "") or ""
    return Path(os.path.realpath(configured)) if configured else None


def exec_allowed() -> bool:
    """Whether the operator allows exec plugins and auth providers (``KUBECONFIG_ALLOW_EXEC``)."""
    return bool(getattr(settings, "KUBECONFIG_ALLOW_EXEC", False))


def path_inside_dir(path: str, *, field: str, base: Path | None = None) -> Path:
    """``path`` resolved, if it is inside ``KUBECONFIG_DIR``.

    A relative path starts from ``base`` (default: ``KUBECONFIG_DIR``). The
    check is on the resolved name only, so the answer is the same whether or
    not a file exists outside the folder.

    Raises:
        ValidationFailed: Naming ``field``: no ``KUBECONFIG_DIR``, or outside it.
    """
    root = kubeconfig_dir()
    if root is None:
        raise ValidationFailed(
            _("%(field)s: file paths are not allowed (KUBECONFIG_DIR is not set)")
            % {"field": field},
            detail={
                field: [
                    _(
                        "file paths are not allowed: KUBECONFIG_DIR is not set; "
                        "send the kubeconfig's content instead"
                    )
                ]
            },
        )
    candidate = Path(path)
    if not candidate.is_absolute():
        candidate = (base or root) / candidate
    resolved = Path(os.path.realpath(candidate))
    if resolved != root and root not in resolved.parents:
        raise ValidationFailed(
            f"{field}: " + _("must be a file inside KUBECONFIG_DIR"),
            detail={field: [_("must be a file inside KUBECONFIG_DIR")]},
        )
    return resolved


def kubeconfig_parse(text: str, *, field: str = "kubeconfig") -> dict[str, Any]:
    """A kubeconfig's YAML or JSON text as a mapping (not yet checked).

    Raises:
        ValidationFailed: Naming ``field``: too large, not YAML, not a mapping.
    """
    if len(text.encode(errors="replace")) > MAX_KUBECONFIG_BYTES:
        raise ValidationFailed(
            f"{field}: "
            + _("larger than %(limit)d bytes") % {"limit": MAX_KUBECONFIG_BYTES},
            detail={
                field: [_("at most %(limit)d bytes") % {"limit": MAX_KUBECONFIG_BYTES}]
            },
        )
    try:
        loaded = yaml.safe_load(text)
    except (yaml.YAMLError, RecursionError, ValueError) as exc:
        raise ValidationFailed(
            f"{field}: " + _("not valid YAML"), detail={field: [_("not valid YAML")]}
        ) from exc
    if not isinstance(loaded, Mapping):
        raise ValidationFailed(
            f"{field}: " + _("not a kubeconfig"),
            detail={
                field: [_("a kubeconfig: a mapping with clusters, users, contexts")]
            },
        )
    return dict(loaded)


def _entries(config: Mapping[str, Any], plural: str, key: str) -> list[dict[str, Any]]:
    items = config.get(plural) or []
    if not isinstance(items, list):
        return []
    return [
        item[key]
        for item in items
        if isinstance(item, Mapping) and isinstance(item.get(key), Mapping)
    ]


def kubeconfig_problems(
    config: Mapping[str, Any], *, base_dir: Path | None
) -> list[str]:
    """What makes ``config`` unsafe to load here (empty: it may be loaded).

    Every user and cluster entry is checked, not only the current context's:
    the loader may read any of them.
    """
    problems: list[str] = []
    for user in _entries(config, "users", "user"):
        for key in ("exec", "auth-provider"):
            if user.get(key) is not None and not exec_allowed():
                problems.append(
                    f"{key}: runs a command or a plugin in the portal; refused "
                    "unless the operator sets KUBECONFIG_ALLOW_EXEC=true"
                )
    for section, key, twin in _FILE_KEYS:
        plural = f"{section}s"
        for entry in _entries(config, plural, section):
            name = entry.get(key)
            if name is None:
                continue
            if not isinstance(name, str):
                problems.append(f"{key}: must be a file name")
                continue
            if not Path(name).is_absolute():
                # The kubernetes loader reads a relative name from the web
                # process's working directory, not from KUBECONFIG_DIR where
                # the check below would resolve it: the check passed and
                # another file was read (and sent to the server as a token).
                problems.append(
                    f"{key}: must be an absolute path inside KUBECONFIG_DIR "
                    f"(a relative one is read from the server's working "
                    f"directory); inline it as {twin}"
                )
                continue
            try:
                path_inside_dir(name, field=key, base=base_dir)
            except ValidationFailed:
                problems.append(
                    f"{key}: files must be inside KUBECONFIG_DIR; inline it as {twin}"
                )
    return sorted(set(problems))


def kubeconfig_check(
    config: Mapping[str, Any],
    *,
    field: str,
    base_dir: Path | None = None,
    context: str = "",
) -> None:
    """Refuse an unsafe kubeconfig, or a ``context`` it does not have.

    Raises:
        ValidationFailed: Naming ``field`` (or ``kubeconfig_context``).
    """
    problems = kubeconfig_problems(config, base_dir=base_dir)
    if problems:
        raise ValidationFailed(f"{field}: {problems[0]}", detail={field: problems})
    if context:
        names = {
            c.get("name")
            for c in config.get("contexts") or []
            if isinstance(c, Mapping)
        }
        if context not in names:
            raise ValidationFailed(
                "kubeconfig_context: "
                + _("%(context)r is not in the kubeconfig") % {"context": context},
                detail={
                    "kubeconfig_context": [
                        _("%(context)r is not in the kubeconfig") % {"context": context}
                    ]
                },
            )


def kubeconfig_flatten(config: Mapping[str, Any], *, base_dir: Path) -> dict[str, Any]:
    """``config`` with every referenced file inlined (as ``kubectl config view --flatten``).

    For ``manage.py cluster add --kubeconfig``: the operator at the server's
    shell may read those files; the web process then never needs them.

    Raises:
        OSError: A referenced file cannot be read.
    """
    flat = yaml.safe_load(yaml.safe_dump(dict(config)))
    for section, key, twin in _FILE_KEYS:
        for entry in _entries(flat, f"{section}s", section):
            name = entry.pop(key, None)
            if not isinstance(name, str):
                continue
            path = Path(name) if Path(name).is_absolute() else base_dir / name
            data = path.read_bytes()
            entry[twin] = (
                data.decode().strip()
                if twin == "token"
                else base64.b64encode(data).decode()
            )
    return flat


def loaded_kubeconfig(cluster: Any) -> LoadedKubeconfig:
    """The cluster's kubeconfig, checked: the stored content, else its path.

    Raises:
        ValidationFailed: No kubeconfig, a path outside ``KUBECONFIG_DIR``,
            an exec plugin that is not allowed, a file outside the folder.
        OSError: The file inside ``KUBECONFIG_DIR`` cannot be read.
    """
    if cluster.kubeconfig_encrypted:
        config = kubeconfig_parse(decrypt(cluster.kubeconfig_encrypted))
        base_dir = kubeconfig_dir()
        field = "kubeconfig"
    elif cluster.kubeconfig_path:
        path = path_inside_dir(cluster.kubeconfig_path, field="kubeconfig_path")
        config = kubeconfig_parse(
            path.read_text(errors="replace"), field="kubeconfig_path"
        )
        base_dir = path.parent
        field = "kubeconfig_path"
    else:
        raise ValidationFailed(
            _("cluster %(cluster)r has no kubeconfig") % {"cluster": cluster.name},
            detail={
                "kubeconfig": [_("store a kubeconfig, or a path in KUBECONFIG_DIR")]
            },
        )
    kubeconfig_check(config, field=field, base_dir=base_dir)
    return LoadedKubeconfig(config=config, base_dir=base_dir)
