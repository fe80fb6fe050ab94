"""Which Volcano, HAMi scheduler and device plugin run, from the images sync mirrored.

The version decides what a component reads (docs/scheduler-behaviour.md, "Volcano
scheduler configuration, by version" and "Device config shape, by component
version"): which deviceshare arguments exist, whether a quoted ``"true"``
counts, and which ``vnpus`` shape it parses. A version is read only from a
release tag (``v1.15.1``) of an image whose name we know; ``latest``, a
digest, a pre-release or a custom build is "version unknown", and the checks
say so instead of guessing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from django.conf import settings
from django.utils.translation import gettext as _

from apps.inventory.hami.deviceconfig import DeviceConfigDocument, Shape
from apps.inventory.models import Cluster, ClusterObject

ComponentKind = Literal["volcano", "hami", "device_plugin"]
Version = tuple[int, int, int]
# What a component does with a shape of ``vnpus``: reads it, crashes at start
# (fatal parse error), silently uses its built-in 310P3-only default, cannot
# be told (version unknown), or does not read the device config at all.
ShapeEffect = Literal["ok", "crash", "fallback", "unknown", "none"]

# The last path segment of each component's image repository.
IMAGE_NAMES: dict[str, ComponentKind] = {
    "vc-scheduler": "volcano",
    "volcano-scheduler": "volcano",
    "hami": "hami",
    "ascend-device-plugin": "device_plugin",
}
TITLES: dict[ComponentKind, str] = {
    "volcano": "Volcano scheduler",
    "hami": "HAMi scheduler",
    "device_plugin": "HAMi Ascend device plugin",
}
# The guide's pre-release Volcano build (master of 2025-11-07, before
# AscendHAMiVNPUEnable and the wrapper shape): the only one that reads the
# guide's AscendVNPUEnable / ASCEND310PVNPUEnable.
GUIDE_FORK_REPOSITORY = "lomtom-common/vc-scheduler"
_RELEASE_TAG = re.compile(r"^v?(\d+)\.(\d+)\.(\d+)$")


@dataclass(frozen=True)
class Component:
    """One running (or deployed) component and what its image says.

    Attributes:
        kind: Which component.
        workload: ``Kind namespace/name`` of the workload it was read from.
        image: The container image, as in the pod template.
        version: ``(major, minor, patch)`` of a release tag; None: unknown.
        fork: The guide's pre-release Volcano build.
        running: The workload wants pods (replicas > 0, or the DaemonSet is
            scheduled on a node).
    """

    kind: ComponentKind
    workload: str
    image: str
    version: Version | None
    fork: bool = False
    running: bool = True

    @property
    def label(self) -> str:
        """``Volcano scheduler v1.15.1``, or why its version is unknown."""
        title = TITLES[self.kind]
        if self.fork:
            return f"{title} (the guide's pre-release fork {self.image})"
        if self.version is None:
            return f"{title} (version unknown: image {self.image or 'none'})"
        return f"{title} {format_version(self.version)}"


def format_version(version: Version) -> str:
    """``(1, 15, 1)`` as ``v1.15.1``."""
    return "v" + ".".join(str(part) for part in version)


def split_image(image: str) -> tuple[str, str]:
    """``(repository, tag)`` of an image reference; tag "" when it has none.

    A digest (``@sha256:...``) is dropped: it names content, not a release.
    """
    reference = image.split("@", 1)[0]
    slash = reference.rfind("/")
    colon = reference.rfind(":")
    if colon > slash:
        return reference[:colon], reference[colon + 1 :]
    return reference, ""


def image_version(image: str) -> Version | None:
    """The release of a tag like ``v1.15.1`` or ``2.5.0``; None for anything else."""
    match = _RELEASE_TAG.match(split_image(image)[1])
    if match is None:
        return None
    major, minor, patch = (int(part) for part in match.groups())
    return major, minor, patch


def image_kind(image: str) -> ComponentKind | None:
    """Which component an image is, by the last segment of its repository."""
    repository = split_image(image)[0]
    return IMAGE_NAMES.get(repository.rsplit("/", 1)[-1])


def is_guide_fork(image: str) -> bool:
    """The guide's ``.../lomtom-common/vc-scheduler:v1.13.0-11-07`` (any registry)."""
    return split_image(image)[0].endswith(GUIDE_FORK_REPOSITORY)


def _images(obj: Mapping[str, Any]) -> list[str]:
    template = ((obj.get("spec") or {}).get("template") or {}).get("spec") or {}
    return [
        str(c.get("image") or "")
        for c in template.get("containers") or []
        if isinstance(c, dict)
    ]


def _running(kind: str, obj: Mapping[str, Any]) -> bool:
    if kind == "Deployment":
        replicas = (obj.get("spec") or {}).get("replicas")
        return replicas is None or int(replicas) > 0
    status = obj.get("status") or {}
    scheduled = status.get("desiredNumberScheduled")
    return scheduled is None or int(scheduled) > 0


def _component(
    kind: str, ref: str, obj: Mapping[str, Any], default: ComponentKind | None
) -> Component | None:
    """The component a workload runs: by a known image, else by what settings say it is."""
    images = _images(obj)
    known = [(k, i) for i in images if (k := image_kind(i)) is not None]
    component: ComponentKind
    if known:
        component, image = known[0]
        version = image_version(image)
    elif default is not None:
        # Named by settings but with an image we do not know: a custom build.
        component, image, version = default, (images[0] if images else ""), None
    else:
        return None
    return Component(
        kind=component,
        workload=f"{kind} {ref}",
        image=image,
        version=version,
        fork=component == "volcano" and is_guide_fork(image),
        running=_running(kind, obj),
    )


def kind_by_name(name: str) -> ComponentKind | None:
    if "vc-scheduler" in name or "volcano-scheduler" in name:
        return "volcano"
    if name == "hami-scheduler":
        return "hami"
    return None


def cluster_components(cluster: Cluster) -> list[Component]:
    """The components sync mirrored: watched Deployments and the device-plugin DaemonSet.

    Returns:
        One entry per workload that is a Volcano scheduler, a HAMi scheduler
        or the device plugin, in settings order (Deployments, then the
        DaemonSet). Workloads sync has not seen are absent.
    """
    refs = [("Deployment", ref) for ref in settings.WATCHED_DEPLOYMENTS]
    refs.append(("DaemonSet", settings.DEVICE_PLUGIN_DAEMONSET))
    found: list[Component] = []
    for kind, ref in refs:
        namespace, name = ref.split("/", 1)
        row = ClusterObject.objects.filter(
            cluster=cluster, kind=kind, namespace=namespace, name=name
        ).first()
        if row is None:
            continue
        default = "device_plugin" if kind == "DaemonSet" else kind_by_name(name)
        component = _component(kind, ref, row.data or {}, default)
        if component is not None:
            found.append(component)
    return found


def first_of(components: Iterable[Component], kind: ComponentKind) -> Component | None:
    """The first component of a kind (the one the checks read), or None."""
    return next((c for c in components if c.kind == kind), None)


# --- the device-config shape each version reads --------------------------------


def shape_effect(component: Component, shape: Shape) -> ShapeEffect:
    """What ``component`` does with a ``vnpus`` section of ``shape``.

    From docs/scheduler-behaviour.md, "Device config shape, by component version":
    the device plugin reads the list up to v1.2 and only the wrapper from
    v1.3; the HAMi scheduler the list up to v2.8 and only the wrapper from
    v2.9 (the other shape is fatal for both); Volcano reads the list from
    v1.14.0 on and the wrapper from v1.14.4 / v1.15.1, and before that falls
    back to its 310P3-only default without a word. The guide's fork predates
    the wrapper.
    """
    version = component.version
    if component.kind == "volcano":
        if component.fork:
            return "ok" if shape is Shape.LIST else "fallback"
        if version is None:
            return "unknown"
        if version < (1, 14, 0):
            return "none"  # no Ascend support: it never reads vnpus
        if shape is Shape.LIST:
            return "ok"
        reads_wrapper = version >= (1, 15, 1) or (1, 14, 4) <= version < (1, 15, 0)
        return "ok" if reads_wrapper else "fallback"
    if version is None:
        return "unknown"
    wrapper_since = (1, 3, 0) if component.kind == "device_plugin" else (2, 9, 0)
    reads = Shape.WRAPPER if version >= wrapper_since else Shape.LIST
    return "ok" if shape is reads else "crash"


def shape_message(component: Component, shape: Shape, effect: ShapeEffect) -> str:
    """One sentence on what ``component`` does with ``shape``."""
    values = {"component": component.label, "shape": shape.value}
    messages = {
        "ok": _("%(component)s reads the %(shape)s shape of vnpus"),
        "crash": _(
            "%(component)s cannot parse the %(shape)s shape of vnpus: it exits at "
            "start (crash loop) the next time its pods start"
        ),
        "fallback": _(
            "%(component)s cannot read the %(shape)s shape of vnpus and silently "
            "falls back to its built-in default, which knows only 310P3"
        ),
        "unknown": _(
            "%(component)s: cannot tell whether it reads the %(shape)s shape of vnpus"
        ),
        "none": _(
            "%(component)s has no Ascend vNPU support and does not read the device config"
        ),
    }
    return messages[effect] % values


def shape_fix(component: Component, shape: Shape) -> str:
    """How to make ``component`` and ``shape`` agree."""
    other = "wrapper" if shape is Shape.LIST else "list"
    if component.kind == "volcano":
        return _(
            "upgrade volcano-scheduler to v1.14.4 or v1.15.1+ (they read both "
            "shapes), or write the %(other)s shape"
        ) % {"other": other}
    if component.kind == "device_plugin":
        image = "v1.3.0+" if shape is Shape.WRAPPER else _("v1.2 or older")
        return _("write the %(other)s shape, or run ascend-device-plugin %(image)s") % {
            "other": other,
            "image": image,
        }
    image = "v2.9.0+" if shape is Shape.WRAPPER else _("v2.8.x or older")
    return _("write the %(other)s shape, or run the HAMi scheduler %(image)s") % {
        "other": other,
        "image": image,
    }


def _reader_fix(component: Component, shape: Shape, effect: ShapeEffect) -> str:
    if effect in ("crash", "fallback"):
        return shape_fix(component, shape)
    if effect == "unknown":
        return _("run %(workload)s from an image with a release tag (e.g. v1.2.3)") % {
            "workload": component.workload
        }
    return ""


@dataclass(frozen=True)
class ShapeReader:
    """One running component's answer to a ``vnpus`` shape (for health and publish)."""

    component: str
    workload: str
    image: str
    version: str | None
    shape: str
    effect: ShapeEffect
    message: str
    fix: str


def shape_readers(cluster: Cluster, shape: Shape) -> list[ShapeReader]:
    """What every running component does with ``shape``, in ``cluster_components`` order."""
    readers = []
    for component in cluster_components(cluster):
        if not component.running:
            continue
        effect = shape_effect(component, shape)
        readers.append(
            ShapeReader(
                component=component.kind,
                workload=component.workload,
                image=component.image,
                version=(
                    format_version(component.version) if component.version else None
                ),
                shape=shape.value,
                effect=effect,
                message=shape_message(component, shape, effect),
                fix=_reader_fix(component, shape, effect),
            )
        )
    return readers


def shape_warnings(
    cluster: Cluster, document: DeviceConfigDocument
) -> list[ShapeReader]:
    """Running components that cannot read ``document``'s ``vnpus``, or may not.

    Effects ``crash`` and ``fallback``, and ``unknown`` where a version is
    unknown; empty when the document has no ``vnpus`` entries.
    """
    if not document.raw_configs:
        return []
    return [
        reader
        for reader in shape_readers(cluster, document.shape)
        if reader.effect in ("crash", "fallback", "unknown")
    ]
