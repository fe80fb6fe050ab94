"""Fault injection: errors, conflicts, latency, dropped watches, outages."""

from __future__ import annotations

import socket
import time

import pytest
import urllib3
from kubernetes import client, watch
from kubernetes.client.rest import ApiException


def test_share_of_500s_reaches_the_client(core: client.CoreV1Api, raw) -> None:
    status, settings = raw("POST", "/simcluster/faults", {"error_500_rate": 1.0})
    assert status == 200
    assert settings["error_500_rate"] == 1.0
    with pytest.raises(ApiException) as err:
        core.list_node()
    assert err.value.status == 500
    raw("POST", "/simcluster/faults", {"error_500_rate": 0.5})
    codes = []
    for _ in range(40):
        try:
            core.list_namespace()
            codes.append(200)
        except ApiException as exc:
            codes.append(exc.status)
    assert set(codes) == {200, 500}
    raw("POST", "/simcluster/reset", {})
    assert len(core.list_node().items) == 2


def test_429_and_forced_conflicts(core: client.CoreV1Api, sim, raw) -> None:
    sim.set_faults(error_429_rate=1.0)
    status, body = raw("GET", "/api/v1/nodes")
    assert status == 429
    assert body["reason"] == "TooManyRequests"
    sim.set_faults(error_429_rate=0.0, conflict_rate=1.0)
    assert core.read_namespaced_pod("npu-pod-310p", "default")  # reads unaffected
    with pytest.raises(ApiException) as err:
        core.patch_namespaced_pod(
            "npu-pod-310p", "default", {"metadata": {"labels": {"a": "b"}}}
        )
    assert err.value.status == 409
    sim.reset_faults()
    core.patch_namespaced_pod(
        "npu-pod-310p", "default", {"metadata": {"labels": {"a": "b"}}}
    )


def test_latency(core: client.CoreV1Api, sim) -> None:
    sim.set_faults(latency_ms=300)
    started = time.monotonic()
    core.list_node()
    assert time.monotonic() - started >= 0.3


def test_dropped_watch_ends_the_stream(core: client.CoreV1Api, sim) -> None:
    sim.set_faults(watch_drop_after_events=2)
    started = time.monotonic()
    events = []
    stream = watch.Watch().stream(
        core.list_namespaced_pod, "default", resource_version="0", timeout_seconds=10
    )

    def consume() -> None:
        for event in stream:
            events.append(event["object"].metadata.name)

    with pytest.raises((urllib3.exceptions.ProtocolError, ApiException)):
        consume()
    assert len(events) == 2
    assert time.monotonic() - started < 5
    sim.set_faults(watch_drop_after_events=0, watch_drop_after_seconds=0.5)
    started = time.monotonic()
    with pytest.raises((urllib3.exceptions.ProtocolError, ApiException)):
        list(
            watch.Watch().stream(
                core.list_namespaced_pod, "default", timeout_seconds=10
            )
        )
    assert time.monotonic() - started < 5


def _refused(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return False
    except ConnectionRefusedError:
        return True
    except OSError:  # accepted just before the listener closed, then reset
        return False


def test_outage_refuses_connections_then_recovers(
    core: client.CoreV1Api, sim, raw, wait_for
) -> None:
    status, _ = raw("POST", "/simcluster/outage", {"seconds": 1.0})
    assert status == 202
    wait_for(lambda: _refused(sim.port), timeout=2)
    with pytest.raises(urllib3.exceptions.MaxRetryError):
        core.list_node(_request_timeout=1)
    wait_for(lambda: not sim.faults.in_outage(), timeout=3)
    assert len(wait_for(lambda: _list_nodes(core), timeout=3)) == 2


def _list_nodes(core: client.CoreV1Api) -> list[client.V1Node]:
    try:
        return core.list_node(_request_timeout=1).items
    except urllib3.exceptions.HTTPError:
        return []


def test_outage_with_503(core: client.CoreV1Api, sim, wait_for) -> None:
    sim.outage(0.5, mode="503")
    with pytest.raises(ApiException) as err:
        core.list_node()
    assert err.value.status == 503
    wait_for(lambda: not sim.faults.in_outage(), timeout=3)
    assert len(core.list_node().items) == 2


def test_control_endpoint_needs_admin(sim, raw) -> None:
    status, _ = raw(
        "POST", "/simcluster/faults", {"error_500_rate": 1}, token=sim.tokens.readonly
    )
    assert status == 403
    assert (
        raw("POST", "/simcluster/faults", {"error_500_rate": 1}, token="bad")[0] == 401
    )
    assert sim.faults.settings.error_500_rate == 0
