"""A listed pod slimmed as its page arrives: sync reads from it exactly what it
reads from the whole pod, and what it never reads is gone."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from kubernetes import config

from apps.inventory.sync import kubeapi
from apps.inventory.sync.derive import (
    PREEMPTABLE_KEY,
    VOLCANO_QUEUE_KEY,
    pod_pending,
    pod_slices,
    slim_pod,
)
from apps.inventory.sync.targets import Target
from apps.inventory.sync.watcher import skipped_entry

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
PODS = ("pod-310p-vir01.json", "pod-910b4-vir05.json")
TARGET = Target("pods", "/api/v1/pods", None, print, print, "Pod")


def _fixture(name: str) -> dict:
    return json.loads((FIXTURES / name).read_text())


def _bulky(pod: dict) -> dict:
    """The pod as a real API server lists it: much that sync never reads."""
    pod = copy.deepcopy(pod)
    meta = pod["metadata"]
    meta["annotations"]["kubectl.kubernetes.io/last-applied-configuration"] = (
        json.dumps(pod)
    )
    meta["managedFields"] = [{"manager": "kubectl", "fieldsV1": {"f:spec": {}}}] * 3
    meta.setdefault("labels", {})["app"] = "train"
    pod["spec"]["volumes"] = [{"name": "data", "emptyDir": {}}]
    pod["spec"]["tolerations"] = [{"operator": "Exists"}]
    pod.setdefault("status", {})["containerStatuses"] = [
        {"name": "main", "ready": True}
    ]
    return pod


def _waiting(pod: dict) -> dict:
    """The pod still waiting for a node, its vNPU asked by an init container too."""
    pod = copy.deepcopy(pod)
    pod["spec"].pop("nodeName", None)
    pod["spec"]["initContainers"] = [
        {
            "name": "warm",
            "resources": {"limits": {"huawei.com/Ascend310P": "1"}},
        }
    ]
    pod["status"] = {
        "phase": "Pending",
        "conditions": [
            {
                "type": "PodScheduled",
                "status": "False",
                "message": "0/2 nodes are available: insufficient vNPU",
            }
        ],
    }
    return pod


def _variants() -> list[dict]:
    pods = []
    for name in PODS:
        pod = _bulky(_fixture(name))
        pods.append(pod)
        pods.append(_waiting(pod))
        labelled = copy.deepcopy(pod)
        labelled["metadata"]["labels"][PREEMPTABLE_KEY] = "false"
        labelled["metadata"]["annotations"][VOLCANO_QUEUE_KEY] = "research"
        pods.append(labelled)
        done = copy.deepcopy(pod)
        done["status"]["phase"] = "Succeeded"
        pods.append(done)
    return pods


@pytest.mark.parametrize("pod", _variants())
def test_sync_reads_the_same_from_the_slim_pod(pod):
    slim = slim_pod(pod)
    for words in (None, {"Ascend310P"}, {"Ascend310P", "Ascend910B4"}):
        assert pod_slices(slim, words) == pod_slices(pod, words)
    assert pod_pending(slim) == pod_pending(pod)
    failure = ValueError("bad")
    assert {**skipped_entry(TARGET, slim, failure), "at": 0} == {
        **skipped_entry(TARGET, pod, failure),
        "at": 0,
    }
    assert slim_pod(slim) == slim  # slimming twice changes nothing


def test_what_sync_never_reads_is_dropped():
    pod = _bulky(_fixture(PODS[0]))
    slim = slim_pod(pod)
    assert pod_slices(slim)  # it holds a slice
    assert "managedFields" not in slim["metadata"]
    assert (
        "kubectl.kubernetes.io/last-applied-configuration"
        not in (slim["metadata"]["annotations"])
    )
    assert "labels" not in slim["metadata"]
    # a running pod's containers and conditions are read by nothing
    assert set(slim["spec"]) <= {"priority", "priorityClassName", "nodeName"}
    assert set(slim["status"]) <= {"phase", "startTime"}
    assert len(json.dumps(slim)) < len(json.dumps(pod)) / 3
    waiting = slim_pod(_waiting(pod))
    assert waiting["spec"]["initContainers"]
    assert waiting["status"]["conditions"]


@pytest.mark.parametrize(
    "pod",
    [
        "not a pod",
        {"spec": {}},  # no metadata
        {"metadata": ["a", "list"]},
        {"metadata": {"name": "p", "annotations": ["x"]}},
        {"metadata": {"name": "p"}, "spec": "nonsense"},
    ],
)
def test_a_pod_not_shaped_as_expected_is_kept_whole(pod):
    assert slim_pod(pod) is pod


def test_a_list_is_slimmed_page_by_page(sim, tmp_path, monkeypatch):
    """Each page's pods are slimmed before the next page is asked for, so a
    page's whole pods are never held past it."""
    api = config.new_client_from_config(
        config_file=str(sim.write_kubeconfig(tmp_path / "kubeconfig"))
    )
    whole = kubeapi.list_all(api, "/api/v1/pods")
    monkeypatch.setattr(kubeapi, "PAGE_SIZE", 2)
    steps: list[str] = []
    fetch = kubeapi._get

    def fetch_page(*args, **kwargs):
        steps.append("page")
        return fetch(*args, **kwargs)

    def keep(pod: dict) -> dict:
        steps.append("slim")
        return slim_pod(pod)

    monkeypatch.setattr(kubeapi, "_get", fetch_page)
    slimmed = kubeapi.list_all(api, "/api/v1/pods", keep=keep)
    assert len(whole.items) > 2  # more than one page
    assert slimmed.items == [slim_pod(p) for p in whole.items]
    # page, its pods slimmed, the next page, its pods slimmed, ...
    pages = "".join("|" if step == "page" else "s" for step in steps).split("|")[1:]
    assert pages == ["ss"] * (len(whole.items) // 2) + (
        ["s"] if len(whole.items) % 2 else []
    )
