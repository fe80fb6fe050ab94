"""What a request's pod references by name: Secrets, ConfigMaps, envFrom (pure).

A Secret or ConfigMap of the namespace is not the submitter's to take, and an
``envFrom`` brings in variables the portal cannot see. ``podsecurity.check``
calls these with the queue's allow lists and the device plugin's variables.

Imports only the standard library and ``podfields``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from apps.scheduling.podfields import ROOT, Violation, as_list, as_map, containers_of

# What a pod may reference by name, checked against the queue's allow lists.
SECRET = "Secret"  # noqa: S105 (a kind of object, not a password)
CONFIG_MAP = "ConfigMap"
# Volume types other than secret, configMap and projected that name a Secret
# (for their driver's credentials): the key of the reference in each.
VOLUME_SECRET_REFS = ("secretRef", "nodePublishSecretRef")


def reference_violations(
    spec: Mapping[str, Any],
    *,
    allowed_secrets: Sequence[str],
    allowed_config_maps: Sequence[str],
) -> list[Violation]:
    """Every Secret and ConfigMap the pod names is one the queue lists (none: none).

    A Secret or ConfigMap of the namespace is not the submitter's to take: it
    may hold another team's credentials, or the token of a ServiceAccount the
    queue does not allow (a ``kubernetes.io/service-account-token`` Secret
    mounted or read into env is that account's power, around
    ``allowed_service_accounts``). The portal cannot tell a Secret's type from
    its name and does not read it (it may change after submission), so names
    that merely look like tokens are not refused; the defence is the allow
    list, empty by default and written by admins, who must not list a token
    Secret. A ``projected`` ``serviceAccountToken`` is fine: it is the pod's
    own ServiceAccount's (checked against the queue's), and ``restricted``
    allows projected volumes.
    """
    found = []
    for field, kind, name in references(spec):
        allowed = allowed_secrets if kind == SECRET else allowed_config_maps
        if isinstance(name, str) and name and name in allowed:
            continue
        setting = "allowed_secrets" if kind == SECRET else "allowed_config_maps"
        if allowed:
            why = f"this queue's pods may reference only the {kind}s: " + ", ".join(
                sorted(allowed)
            )
        else:
            why = (
                f"this queue's pods may reference no {kind} (an admin lists the "
                f"ones they may in the queue's {setting})"
            )
        found.append(Violation(field, why))
    return found


def references(spec: Mapping[str, Any]) -> list[tuple[str, str, Any]]:
    """Every Secret and ConfigMap the pod names: (field of the name, kind, name).

    Image pull secrets, volumes (of every type) and each container's env and
    envFrom (init and ephemeral containers too). The name is as given: not
    necessarily a string.
    """
    pod = f"{ROOT}.spec"
    refs: list[tuple[str, str, Any]] = []
    for index, ref in enumerate(as_list(spec.get("imagePullSecrets"))):
        refs.append((f"{pod}.imagePullSecrets[{index}].name", SECRET, _name(ref)))
    for index, volume in enumerate(as_list(spec.get("volumes"))):
        refs += _volume_refs(f"{pod}.volumes[{index}]", as_map(volume))
    for path, container in containers_of(spec):
        for index, env in enumerate(as_list(container.get("env"))):
            refs += _object_refs(
                as_map(as_map(env).get("valueFrom")),
                f"{path}.env[{index}].valueFrom",
                (("secretKeyRef", SECRET), ("configMapKeyRef", CONFIG_MAP)),
            )
        for index, source in enumerate(as_list(container.get("envFrom"))):
            refs += _object_refs(
                as_map(source),
                f"{path}.envFrom[{index}]",
                (("secretRef", SECRET), ("configMapRef", CONFIG_MAP)),
            )
    return refs


def _volume_refs(at: str, volume: Mapping[str, Any]) -> list[tuple[str, str, Any]]:
    refs: list[tuple[str, str, Any]] = []
    for kind, source in sorted(volume.items()):
        if source is None or kind == "name":
            continue
        if kind == "secret":
            name = as_map(source).get("secretName")
            refs.append((f"{at}.secret.secretName", SECRET, name))
        elif kind == "configMap":
            refs.append((f"{at}.configMap.name", CONFIG_MAP, _name(source)))
        elif kind == "projected":
            sources = as_list(as_map(source).get("sources"))
            for index, projection in enumerate(sources):
                refs += _object_refs(
                    as_map(projection),
                    f"{at}.projected.sources[{index}]",
                    (("secret", SECRET), ("configMap", CONFIG_MAP)),
                )
        else:
            # csi, cephfs, rbd, flexVolume...: their drivers' credentials.
            refs += _object_refs(
                as_map(source),
                f"{at}.{kind}",
                tuple((key, SECRET) for key in VOLUME_SECRET_REFS),
            )
            if kind == "azureFile":
                name = as_map(source).get("secretName")
                refs.append((f"{at}.azureFile.secretName", SECRET, name))
    return refs


def env_from_violations(
    path: str, container: Mapping[str, Any], reserved: frozenset[str]
) -> list[Violation]:
    """An ``envFrom`` whose prefix could make a device plugin variable.

    The kubelet names each variable of an ``envFrom`` source ``prefix + key``
    and puts the container's variables after the device plugin's, so the
    container's win: a key ``ASCEND_VISIBLE_DEVICES`` would point the workload
    at chips it was not given. The portal cannot see the keys (it does not
    read the ConfigMap or Secret, whose keys may change after submission
    anyway), so it vouches only for the prefix: a key is never empty, so
    ``prefix + key`` can be a reserved name only when the prefix begins it.
    Hence the rule: a prefix that begins no reserved name (one equal to a
    reserved name is refused too, to keep the rule one line). The empty prefix
    begins every name, so an ``envFrom`` without a prefix is refused, even of
    a source the queue allows.
    """
    found = []
    for index, source in enumerate(as_list(container.get("envFrom"))):
        given = as_map(source).get("prefix")
        # A mistyped prefix is named by shape_violations too; here it is none.
        prefix = given if isinstance(given, str) else ""
        clash = sorted(name for name in reserved if name.startswith(prefix))
        if not clash:
            continue
        if prefix:
            why = (
                f"the prefix {prefix!r} could make {clash[0]}, which the device "
                "plugin sets for the chip given; use a prefix that begins none of "
                f"{', '.join(sorted(reserved))}"
            )
        else:
            why = (
                "required: a prefix that begins none of the device plugin's "
                f"variables ({', '.join(sorted(reserved))}); without one, a "
                "key of the source could set them"
            )
        found.append(Violation(f"{path}.envFrom[{index}].prefix", why))
    return found


def _name(ref: Any) -> Any:
    return as_map(ref).get("name")


def _object_refs(
    obj: Mapping[str, Any], at: str, keys: Sequence[tuple[str, str]]
) -> list[tuple[str, str, Any]]:
    """The ``{key: {name}}`` references of ``obj``: (field of the name, kind, name)."""
    return [
        (f"{at}.{key}.name", kind, _name(obj[key]))
        for key, kind in keys
        if obj.get(key) is not None
    ]
