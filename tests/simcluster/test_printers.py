"""The printers' rules as units (cases checked against kube-apiserver v1.35's Table)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from simcluster import printers, resources


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (-5, "<invalid>"),
        (-1, "0s"),
        (0, "0s"),
        (119, "119s"),
        (120, "2m"),
        (125, "2m5s"),
        (599, "9m59s"),
        (600, "10m"),
        (3 * 3600 - 1, "179m"),
        (3 * 3600, "3h"),
        (3 * 3600 + 60, "3h1m"),
        (8 * 3600, "8h"),
        (47 * 3600, "47h"),
        (48 * 3600, "2d"),
        (3 * 86400 + 5 * 3600, "3d5h"),
        (8 * 86400, "8d"),
        (2 * 365 * 86400, "2y"),
        (3 * 365 * 86400 + 10 * 86400, "3y10d"),
        (9 * 365 * 86400, "9y"),
    ],
)
def test_human_duration(seconds: int, text: str) -> None:
    assert printers.human_duration(seconds) == text


def test_selector_string() -> None:
    selector = {
        "matchLabels": {"z": "1", "a": "2"},
        "matchExpressions": [
            {"key": "m", "operator": "In", "values": ["b", "a"]},
            {"key": "e", "operator": "DoesNotExist"},
            {"key": "x", "operator": "Exists"},
        ],
    }
    assert printers.selector_string(selector) == "a=2,!e,m in (a,b),x,z=1"
    assert printers.selector_string({}) == ""
    assert printers.selector_string({"matchExpressions": [{"operator": "Bad"}]}) is None


def _container(name: str, state: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"name": name, "ready": False, "restartCount": 0, "state": state, **extra}


RUNNING = {"running": {"startedAt": "2026-01-01T00:00:00Z"}}


@pytest.mark.parametrize(
    ("status", "spec", "ready", "reason"),
    [
        (
            {
                "phase": "Running",
                "containerStatuses": [
                    _container("a", {"waiting": {"reason": "CrashLoopBackOff"}}),
                    _container("b", RUNNING, ready=True),
                ],
            },
            {},
            "1/2",
            "CrashLoopBackOff",
        ),
        (
            {
                "phase": "Failed",
                "containerStatuses": [
                    _container("a", {"terminated": {"exitCode": 2}}),
                    _container("b", {"terminated": {"exitCode": 0, "signal": 9}}),
                ],
            },
            {},
            "0/2",
            "ExitCode:2",
        ),
        (
            {
                "phase": "Running",
                "containerStatuses": [
                    _container("a", RUNNING, ready=True),
                    _container(
                        "b", {"terminated": {"exitCode": 0, "reason": "Completed"}}
                    ),
                ],
            },
            {},
            "1/2",
            "NotReady",
        ),
        (
            {
                "phase": "Pending",
                "initContainerStatuses": [
                    _container("i1", {"terminated": {"exitCode": 0}}),
                    _container("i2", {"waiting": {"reason": "PodInitializing"}}),
                ],
            },
            {"initContainers": [{"name": "i1"}, {"name": "i2"}]},
            "0/2",
            "Init:1/2",
        ),
        (
            {
                "phase": "Pending",
                "initContainerStatuses": [
                    _container("i1", {"terminated": {"exitCode": 3}})
                ],
            },
            {"initContainers": [{"name": "i1"}]},
            "0/2",
            "Init:ExitCode:3",
        ),
        (
            {
                "phase": "Pending",
                "conditions": [
                    {
                        "type": "PodScheduled",
                        "status": "False",
                        "reason": "SchedulingGated",
                    }
                ],
            },
            {},
            "0/2",
            "SchedulingGated",
        ),
        (
            {
                "phase": "Running",
                "conditions": [
                    {"type": "Initialized", "status": "True"},
                    {"type": "Ready", "status": "True"},
                ],
                "initContainerStatuses": [
                    _container("s", RUNNING, ready=True, started=True)
                ],
                "containerStatuses": [
                    _container("a", RUNNING, ready=True),
                    _container(
                        "b", {"terminated": {"exitCode": 0, "reason": "Completed"}}
                    ),
                ],
            },
            {"initContainers": [{"name": "s", "restartPolicy": "Always"}]},
            "2/3",
            "Running",
        ),
    ],
    ids=["crashloop", "exitcode", "notready", "init", "initfail", "gated", "sidecar"],
)
def test_pod_status_rules(
    status: dict[str, Any], spec: dict[str, Any], ready: str, reason: str
) -> None:
    # the cases were checked against kube-apiserver v1.35's own Table
    pod = {
        "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "a"}, {"name": "b"}], **spec},
        "status": status,
    }
    got_ready, got_reason, *_ = printers.pod_status(pod)
    assert (got_ready, got_reason) == (ready, reason)


def test_restarts_show_when_the_last_one_was() -> None:
    finished = "2026-01-01T00:00:00Z"
    pod = {
        "metadata": {"name": "p", "creationTimestamp": finished},
        "spec": {"containers": [{"name": "a"}]},
        "status": {
            "phase": "Running",
            "containerStatuses": [
                _container(
                    "a",
                    RUNNING,
                    ready=True,
                    restartCount=3,
                    lastState={"terminated": {"exitCode": 1, "finishedAt": finished}},
                )
            ],
        },
    }
    now = datetime(2026, 1, 3, 5, 0, tzinfo=UTC)
    cells = printers.PRINTERS[resources.POD.key].cells(pod, now)
    assert cells[3] == "3 (2d5h ago)"
