"""How the device plugin's DaemonSet is wired to its node config (pure: plain dicts in).

The plugin reads ``hami-device-node-config`` only when its container is given
``--node_config_file PATH`` and PATH is where that ConfigMap's
``node-config.yaml`` is mounted (docs/node-config.md). The upstream manifest
and Helm chart mount the file by ``subPath`` at ``/node-config.yaml`` and
leave the flag out, so out of the box the file is mounted and ignored. This
module reads a DaemonSet object as sync mirrored it and answers: which
container is the plugin, what it is given on its command line, what is
mounted at the path it is given, and the strategic-merge patch that wires it.

Go's ``flag`` package takes ``-name``, ``--name``, ``-name=value`` and
``--name value`` alike; a flag the binary does not define (v1.1.0 and v1.2.0
have no ``node_config_file``) makes it exit at start.
"""

from __future__ import annotations

import json
import posixpath
import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

#: The ConfigMap the plugin's manifest mounts, and its key.
NODE_CONFIG_MAP = "hami-device-node-config"
NODE_CONFIG_KEY = "node-config.yaml"
#: The flag (``cmd/main.go``) and where the upstream manifest mounts the file.
FLAG = "node_config_file"
DEFAULT_PATH = "/node-config.yaml"
DEFAULT_VOLUME = "ascend-node-config"
PLUGIN_IMAGE_NAME = "ascend-device-plugin"
_SHELLS = frozenset({"sh", "bash", "ash", "dash"})
_IN_SCRIPT = re.compile(rf"(?:^|\s)--?{FLAG}(?:=|\s+)(\S+)")


@dataclass(frozen=True)
class Mounted:
    """What the container has at a path: one key of one ConfigMap, or not.

    Attributes:
        volume: The volume's name; "" when nothing is mounted there.
        config_map: The ConfigMap behind it; "" for another kind of volume.
        key: The ConfigMap key the path is; "" when it cannot be told.
        sub_path: Mounted by ``subPath`` (a changed ConfigMap never reaches
            the running pod) rather than as a directory.
    """

    volume: str = ""
    config_map: str = ""
    key: str = ""
    sub_path: bool = False

    @property
    def is_node_config(self) -> bool:
        """The path is ``hami-device-node-config``'s ``node-config.yaml``."""
        return self.config_map == NODE_CONFIG_MAP and self.key == NODE_CONFIG_KEY


@dataclass(frozen=True)
class Wiring:
    """The plugin container of a DaemonSet and how it reaches the node config.

    Attributes:
        container: The container's name ("" when the DaemonSet has none).
        image: Its image.
        flag_path: The value of ``--node_config_file``; None without the flag.
        flag_in: ``args``, ``command`` or ``script`` (a ``sh -c`` line),
            where the flag was found.
        at_flag: What is mounted at ``flag_path`` (empty without the flag).
        node_config_mounts: Every path in the container that is the node
            config's ``node-config.yaml`` (the upstream ``/node-config.yaml``).
        has_args: The container sets ``args`` (a patch that sets them
            replaces the image's default arguments otherwise).
    """

    container: str
    image: str
    flag_path: str | None
    flag_in: str
    at_flag: Mounted
    node_config_mounts: tuple[str, ...]
    has_args: bool

    @property
    def reads_file(self) -> bool:
        """The flag is given and points at the node config's key."""
        return self.flag_path is not None and self.at_flag.is_node_config


def _spec(daemonset: Mapping[str, Any]) -> Mapping[str, Any]:
    return ((daemonset.get("spec") or {}).get("template") or {}).get("spec") or {}


def _strings(value: Any) -> list[str]:
    return [str(v) for v in value] if isinstance(value, list) else []


def plugin_container(daemonset: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The container running the plugin: the first whose image is
    ``.../ascend-device-plugin``, else the first container."""
    containers = [
        c for c in _spec(daemonset).get("containers") or [] if isinstance(c, dict)
    ]
    for container in containers:
        repository = str(container.get("image") or "").split("@")[0]
        name = repository.rsplit("/", 1)[-1].split(":")[0]
        if name == PLUGIN_IMAGE_NAME:
            return container
    return containers[0] if containers else None


def flag_value(tokens: Sequence[str]) -> str | None:
    """The value of ``--node_config_file`` among command-line tokens (Go's flag forms)."""
    for position, token in enumerate(tokens):
        name, equals, value = token.lstrip("-").partition("=")
        if not token.startswith("-") or name != FLAG:
            continue
        if equals:
            return value
        return tokens[position + 1] if position + 1 < len(tokens) else ""
    return None


def _flag(container: Mapping[str, Any]) -> tuple[str | None, str]:
    """The flag's value and where it was written (args, command or a shell line)."""
    command, args = _strings(container.get("command")), _strings(container.get("args"))
    for where, tokens in (("args", args), ("command", command[1:])):
        found = flag_value(tokens)
        if found is not None:
            return found, where
    if command and posixpath.basename(command[0]) in _SHELLS:
        for line in command + args:
            match = _IN_SCRIPT.search(line)
            if match:
                return match.group(1).strip("'\""), "script"
    return None, ""


def _volume_source(volume: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The ConfigMap sources of a volume (a ``configMap`` or a ``projected`` one)."""
    if isinstance(volume.get("configMap"), dict):
        return [volume["configMap"]]
    sources = (volume.get("projected") or {}).get("sources") or []
    return [
        s["configMap"]
        for s in sources
        if isinstance(s, dict) and isinstance(s.get("configMap"), dict)
    ]


def _key_at(sources: Sequence[Mapping[str, Any]], relative: str) -> tuple[str, str]:
    """(ConfigMap, key) of the file ``relative`` inside a ConfigMap volume."""
    for source in sources:
        items = source.get("items")
        if isinstance(items, list):
            for item in items:
                if (
                    isinstance(item, dict)
                    and posixpath.normpath(str(item.get("path"))) == relative
                ):
                    return str(source.get("name") or ""), str(item.get("key") or "")
            continue
        if "/" not in relative:
            return str(source.get("name") or ""), relative
    return (str(sources[0].get("name") or ""), "") if sources else ("", "")


def mounted_at(
    container: Mapping[str, Any], volumes: Sequence[Mapping[str, Any]], path: str
) -> Mounted:
    """What the container sees at ``path``: which ConfigMap key, if any."""
    by_name = {str(v.get("name")): v for v in volumes if isinstance(v, dict)}
    wanted = posixpath.normpath(path) if path else ""
    for mount in container.get("volumeMounts") or []:
        if not isinstance(mount, dict):
            continue
        mount_path = posixpath.normpath(str(mount.get("mountPath") or "/"))
        name = str(mount.get("name") or "")
        sources = _volume_source(by_name.get(name) or {})
        sub_path = str(mount.get("subPath") or "")
        if sub_path or mount.get("subPathExpr"):
            if wanted != mount_path:
                continue
            config_map, key = (
                _key_at(sources, posixpath.normpath(sub_path)) if sub_path else ("", "")
            )
            return Mounted(name, config_map, key, sub_path=True)
        if wanted.startswith(mount_path.rstrip("/") + "/"):
            relative = wanted[len(mount_path.rstrip("/")) + 1 :]
            config_map, key = _key_at(sources, relative)
            return Mounted(name, config_map, key)
    return Mounted()


def _node_config_paths(
    container: Mapping[str, Any], volumes: Sequence[Mapping[str, Any]]
) -> tuple[str, ...]:
    """Every path in the container that holds the node config's key."""
    by_name = {str(v.get("name")): v for v in volumes if isinstance(v, dict)}
    paths = []
    for mount in container.get("volumeMounts") or []:
        if not isinstance(mount, dict):
            continue
        sources = _volume_source(by_name.get(str(mount.get("name"))) or {})
        if not any(s.get("name") == NODE_CONFIG_MAP for s in sources):
            continue
        mount_path = str(mount.get("mountPath") or "")
        sub_path = str(mount.get("subPath") or "")
        candidate = (
            mount_path if sub_path else posixpath.join(mount_path, NODE_CONFIG_KEY)
        )
        for source in sources:
            for item in source.get("items") or []:
                if (
                    isinstance(item, dict)
                    and item.get("key") == NODE_CONFIG_KEY
                    and not sub_path
                ):
                    candidate = posixpath.join(mount_path, str(item.get("path")))
        if mounted_at(container, volumes, candidate).is_node_config:
            paths.append(candidate)
    return tuple(paths)


def read_wiring(daemonset: Mapping[str, Any]) -> Wiring | None:
    """How the DaemonSet's plugin container reaches the node config; None: no container."""
    container = plugin_container(daemonset)
    if container is None:
        return None
    volumes = [v for v in _spec(daemonset).get("volumes") or [] if isinstance(v, dict)]
    path, where = _flag(container)
    return Wiring(
        container=str(container.get("name") or ""),
        image=str(container.get("image") or ""),
        flag_path=path,
        flag_in=where,
        at_flag=mounted_at(container, volumes, path) if path else Mounted(),
        node_config_mounts=_node_config_paths(container, volumes),
        has_args=isinstance(container.get("args"), list),
    )


def _without_flag(tokens: Sequence[str]) -> list[str]:
    """``tokens`` without ``--node_config_file`` and its value (any of Go's forms)."""
    kept: list[str] = []
    skip = False
    for token in tokens:
        if skip:
            skip = False
            continue
        name, equals, _ = token.lstrip("-").partition("=")
        if token.startswith("-") and name == FLAG:
            skip = not equals
            continue
        kept.append(token)
    return kept


def _free_path(container: Mapping[str, Any]) -> str:
    """Where to mount the file: the upstream ``/node-config.yaml`` unless taken."""
    taken = {
        posixpath.normpath(str(m.get("mountPath") or ""))
        for m in container.get("volumeMounts") or []
        if isinstance(m, dict)
    }
    return (
        DEFAULT_PATH
        if DEFAULT_PATH not in taken
        else "/hami-node-config/node-config.yaml"
    )


def _volume_name(volumes: Sequence[Mapping[str, Any]]) -> tuple[str, bool]:
    """The volume of the node config to mount: an existing one, or a new name (True: add it)."""
    for volume in volumes:
        if any(s.get("name") == NODE_CONFIG_MAP for s in _volume_source(volume)):
            return str(volume.get("name")), False
    names = {str(v.get("name")) for v in volumes}
    return (DEFAULT_VOLUME if DEFAULT_VOLUME not in names else NODE_CONFIG_MAP), True


def wiring_patch(
    daemonset: Mapping[str, Any], *, image: str | None = None
) -> dict[str, Any] | None:
    """The strategic-merge patch that makes the plugin read the node config.

    It passes ``--node_config_file`` with the path where the ConfigMap's
    ``node-config.yaml`` is mounted, mounting it first (by ``subPath`` at
    ``/node-config.yaml``, as upstream does) when the container does not
    have it. A strategic merge replaces ``args`` as a whole (so the patch
    carries every other argument too), merges ``volumeMounts`` by
    ``mountPath``, ``volumes`` by ``name`` and containers by ``name``.
    ``image``, when given, is set too (an upgrade to a version that has the
    flag). None: no container, or the flag sits in a shell line the portal
    does not rewrite.
    """
    container = plugin_container(daemonset)
    if container is None or not container.get("name"):
        return None
    volumes = [v for v in _spec(daemonset).get("volumes") or [] if isinstance(v, dict)]
    wiring = read_wiring(daemonset)
    if wiring is None or wiring.flag_in == "script":
        return None
    patched: dict[str, Any] = {"name": container["name"]}
    spec: dict[str, Any] = {"containers": [patched]}
    if wiring.node_config_mounts:
        path = wiring.node_config_mounts[0]
    else:
        path = _free_path(container)
        volume, new = _volume_name(volumes)
        mount = {"name": volume, "mountPath": path, "subPath": NODE_CONFIG_KEY}
        patched["volumeMounts"] = [mount]
        if new:
            spec["volumes"] = [{"name": volume, "configMap": {"name": NODE_CONFIG_MAP}}]
    flag = [f"--{FLAG}", path]
    command = _strings(container.get("command"))
    if wiring.flag_in == "command":
        patched["command"] = [command[0], *_without_flag(command[1:]), *flag]
    else:
        patched["args"] = [*_without_flag(_strings(container.get("args"))), *flag]
    if image:
        patched["image"] = image
    return {"spec": {"template": {"spec": spec}}}


def kubectl_patch(namespace: str, name: str, patch: Mapping[str, Any]) -> str:
    """The ``kubectl patch`` command line that applies ``patch`` to the DaemonSet."""
    body = json.dumps(patch, separators=(",", ":"))
    return (
        f"kubectl -n {shlex.quote(namespace)} patch daemonset {shlex.quote(name)} "
        f"--type strategic -p {shlex.quote(body)}"
    )
