"""Component versions from image references, and the vnpus shape each version reads.

The boundaries are those of docs/scheduler-behaviour.md, "Device config shape, by
component version".
"""

from __future__ import annotations

import pytest

from apps.inventory.deviceconfig.versions import (
    Component,
    image_kind,
    image_version,
    is_guide_fork,
    shape_effect,
    split_image,
)
from apps.inventory.hami.deviceconfig import Shape

FORK = "swr.cn-east-3.myhuaweicloud.com/lomtom-common/vc-scheduler:v1.13.0-11-07"


@pytest.mark.parametrize(
    ("image", "expected"),
    [
        ("volcanosh/vc-scheduler:v1.15.1", ("volcanosh/vc-scheduler", "v1.15.1")),
        ("registry:5000/hami/hami:v2.5.0", ("registry:5000/hami/hami", "v2.5.0")),
        ("registry:5000/hami/hami", ("registry:5000/hami/hami", "")),
        ("projecthami/hami@sha256:abc", ("projecthami/hami", "")),
        ("projecthami/hami:v2.9.0@sha256:abc", ("projecthami/hami", "v2.9.0")),
    ],
)
def test_split_image(image, expected):
    assert split_image(image) == expected


@pytest.mark.parametrize(
    ("image", "version"),
    [
        ("volcanosh/vc-scheduler:v1.15.1", (1, 15, 1)),
        ("projecthami/ascend-device-plugin:1.3.0", (1, 3, 0)),
        ("volcanosh/vc-scheduler:latest", None),
        ("volcanosh/vc-scheduler", None),
        ("volcanosh/vc-scheduler:v1.16.0-alpha.1", None),  # a pre-release: unknown
        ("volcanosh/vc-scheduler:v1.15", None),
        (FORK, None),
        ("projecthami/hami@sha256:0123", None),
    ],
)
def test_only_a_release_tag_gives_a_version(image, version):
    assert image_version(image) == version


def test_kind_by_the_image_name_and_the_guide_fork():
    assert image_kind("volcanosh/vc-scheduler:v1.15.1") == "volcano"
    assert image_kind(FORK) == "volcano"
    assert image_kind("docker.io/projecthami/hami:v2.10.0") == "hami"
    assert image_kind("projecthami/ascend-device-plugin:v1.1.0") == "device_plugin"
    assert image_kind("registry.k8s.io/kube-scheduler:v1.31.0") is None
    assert is_guide_fork(FORK)
    assert is_guide_fork("my.mirror/lomtom-common/vc-scheduler:v1.13.0-11-07")
    assert not is_guide_fork("volcanosh/vc-scheduler:v1.15.1")


def _component(kind, version, fork=False) -> Component:
    return Component(kind=kind, workload="x", image="i", version=version, fork=fork)


@pytest.mark.parametrize(
    ("kind", "version", "list_effect", "wrapper_effect"),
    [
        ("device_plugin", (1, 0, 0), "ok", "crash"),
        ("device_plugin", (1, 2, 9), "ok", "crash"),
        ("device_plugin", (1, 3, 0), "crash", "ok"),
        ("device_plugin", (1, 4, 0), "crash", "ok"),
        ("hami", (2, 5, 0), "ok", "crash"),
        ("hami", (2, 8, 3), "ok", "crash"),
        ("hami", (2, 9, 0), "crash", "ok"),
        ("hami", (2, 10, 0), "crash", "ok"),
        ("volcano", (1, 13, 5), "none", "none"),
        ("volcano", (1, 14, 0), "ok", "fallback"),
        ("volcano", (1, 14, 3), "ok", "fallback"),
        ("volcano", (1, 14, 4), "ok", "ok"),
        ("volcano", (1, 15, 0), "ok", "fallback"),
        ("volcano", (1, 15, 1), "ok", "ok"),
        ("volcano", (1, 16, 0), "ok", "ok"),
        ("volcano", None, "unknown", "unknown"),
        ("hami", None, "unknown", "unknown"),
        ("device_plugin", None, "unknown", "unknown"),
    ],
)
def test_shape_effect_by_version(kind, version, list_effect, wrapper_effect):
    component = _component(kind, version)
    assert shape_effect(component, Shape.LIST) == list_effect
    assert shape_effect(component, Shape.WRAPPER) == wrapper_effect


def test_the_guide_fork_predates_the_wrapper():
    fork = _component("volcano", None, fork=True)
    assert shape_effect(fork, Shape.LIST) == "ok"
    assert shape_effect(fork, Shape.WRAPPER) == "fallback"
