"""kubectl's imperative generators send protobuf; simcluster decodes it.

Each generator's object is compared with what the same command prints with
``--dry-run=client -o json`` (kubectl's own JSON of the object it sends), so
the expectation comes from kubectl, not from simcluster.
"""

from __future__ import annotations

import base64
import json
import subprocess
from typing import Any

import pytest

from simcluster import protobuf, resources

GENERATORS = [
    ["configmap", "cm1", "--from-literal=a=b", "--from-literal=empty="],
    ["secret", "generic", "s1", "--from-literal=user=admin", "--type=my/type"],
    [
        "secret",
        "docker-registry",
        "reg",
        "--docker-server=r.example",
        "--docker-username=u",
        "--docker-password=p",
    ],
    ["serviceaccount", "sa1"],
    ["service", "clusterip", "svc1", "--tcp=80:8080", "--tcp=443"],
    ["service", "externalname", "ext1", "--external-name=example.com"],
    ["deployment", "web", "--image=nginx:1.27", "--replicas=3", "--port=80"],
    ["priorityclass", "urgent", "--value=-5", "--description=x"],
    ["poddisruptionbudget", "pdb1", "--selector=app=web", "--min-available=50%"],
    ["clusterrole", "reader", "--verb=get,list", "--resource=pods,deployments.apps"],
    [
        "clusterrolebinding",
        "readers",
        "--clusterrole=reader",
        "--user=bob",
        "--group=devs",
        "--serviceaccount=default:sa1",
    ],
    ["role", "r1", "--verb=get", "--resource=configmaps", "--resource-name=cm1"],
    ["rolebinding", "rb1", "--role=r1", "--serviceaccount=default:sa1"],
]
# What the server adds on create (and kubectl's dry-run JSON therefore lacks).
SERVER_FIELDS = {"uid", "resourceVersion", "creationTimestamp", "generation"}


def _ok(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 0, result.stderr
    return result.stdout


def _clean(value: Any) -> Any:
    """Drop Go's empty values (``null``, ``{}``) that JSON and protobuf treat alike."""
    if isinstance(value, dict):
        cleaned = {k: _clean(v) for k, v in value.items()}
        return {k: v for k, v in cleaned.items() if v not in (None, {}, [])}
    if isinstance(value, list):
        return [_clean(v) for v in value]
    return value


def _sent_fields(sent: Any, stored: Any) -> Any:
    """The part of ``stored`` that ``sent`` has (server defaults left out)."""
    if isinstance(sent, dict) and isinstance(stored, dict):
        return {k: _sent_fields(v, stored.get(k)) for k, v in sent.items()}
    if isinstance(sent, list) and isinstance(stored, list):
        return [_sent_fields(a, b) for a, b in zip(sent, stored, strict=False)]
    return stored


@pytest.mark.parametrize("args", GENERATORS, ids=lambda a: "-".join(a[:2]))
def test_kubectl_create_generator_round_trips(kubectl, args: list[str]) -> None:
    # given the object kubectl would send, as JSON
    sent = _clean(
        json.loads(_ok(kubectl("create", *args, "--dry-run=client", "-o", "json")))
    )
    sent.pop("status", None)
    # when kubectl creates it (a protobuf body)
    created = json.loads(_ok(kubectl("create", *args, "-o", "json")))
    # then the stored object has exactly those fields, plus server-set metadata
    assert set(created["metadata"]) | {"generation"} >= SERVER_FIELDS
    assert _sent_fields(sent, _clean(created)) == sent


def test_kubectl_create_configmap_namespace_secret(kubectl, sim) -> None:
    # when
    out = _ok(
        kubectl("create", "configmap", "app", "--from-literal=a=b", "-n", "default")
    )
    assert out.strip() == "configmap/app created"
    _ok(kubectl("create", "namespace", "team-a"))
    _ok(kubectl("create", "secret", "generic", "db", "--from-literal=password=s3cret"))
    # then the objects are stored with the right data
    cm = sim.store.get(resources.CONFIGMAP, "default", "app")
    assert cm is not None
    assert cm.obj["data"] == {"a": "b"}
    ns = sim.store.get(resources.NAMESPACE, "", "team-a")
    assert ns is not None
    assert ns.obj["status"]["phase"] == "Active"
    secret = sim.store.get(resources.SECRET, "default", "db")
    assert secret is not None
    assert secret.obj["type"] == "Opaque"
    assert base64.b64decode(secret.obj["data"]["password"]) == b"s3cret"
    # and kubectl reads them back
    assert "team-a" in _ok(kubectl("get", "ns", "-o", "name"))
    data = json.loads(_ok(kubectl("get", "secret", "db", "-o", "json")))["data"]
    assert base64.b64decode(data["password"]) == b"s3cret"


def test_kubectl_create_service_gets_cluster_ip_and_node_port(kubectl) -> None:
    _ok(kubectl("create", "service", "nodeport", "np", "--tcp=81:8081"))
    svc = json.loads(_ok(kubectl("get", "svc", "np", "-o", "json")))
    assert svc["spec"]["clusterIP"].startswith("10.96.")
    assert svc["spec"]["clusterIPs"] == [svc["spec"]["clusterIP"]]
    assert 30000 <= svc["spec"]["ports"][0]["nodePort"] <= 32767


def test_kubectl_create_errors_are_the_servers(kubectl) -> None:
    _ok(kubectl("create", "configmap", "twice"))
    result = kubectl("create", "configmap", "twice")
    assert result.returncode != 0
    assert 'configmaps "twice" already exists' in result.stderr
    result = kubectl("create", "configmap", "x", "-n", "missing")
    assert 'namespaces "missing" not found' in result.stderr
    # a subresource simcluster does not serve is 404, not a 415 about protobuf
    result = kubectl("create", "token", "default")
    assert "NotFound" in result.stderr or "not found" in result.stderr


# -- raw protobuf bodies ------------------------------------------------------------
def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _field(number: int, payload: bytes | str) -> bytes:
    data = payload.encode() if isinstance(payload, str) else payload
    return _varint(number << 3 | 2) + _varint(len(data)) + data


def _envelope(api_version: str, kind: str, raw: bytes) -> bytes:
    type_meta = _field(1, api_version) + _field(2, kind)
    return protobuf.MAGIC + _field(1, type_meta) + _field(2, raw)


def _post(sim, api_client, path: str, body: bytes) -> tuple[int, dict[str, Any]]:
    response = api_client.rest_client.pool_manager.request(
        "POST",
        api_client.configuration.host + path,
        body=body,
        headers={
            "Authorization": f"Bearer {sim.tokens.admin}",
            "Content-Type": protobuf.MEDIA_TYPE,
            "Accept": f"{protobuf.MEDIA_TYPE},application/json",
        },
        retries=False,
    )
    return response.status, json.loads(response.data)


def test_protobuf_configmap_by_hand(sim, api_client) -> None:
    meta = _field(1, "hand") + _field(12, _field(1, "note") + _field(2, "yes"))
    raw = _field(1, meta) + _field(2, _field(1, "k") + _field(2, "v"))
    body = _envelope("v1", "ConfigMap", raw)
    status, created = _post(
        sim, api_client, "/api/v1/namespaces/default/configmaps", body
    )
    assert status == 201
    assert created["data"] == {"k": "v"}
    assert created["metadata"]["annotations"] == {"note": "yes"}


@pytest.mark.parametrize(
    ("path", "api_version", "kind", "raw", "expected"),
    [
        # a kind simcluster has no field table for (kube-apiserver would accept it)
        ("/api/v1/nodes", "v1", "Node", _field(1, _field(1, "n")), "kind Node"),
        # CRDs take JSON only, also on a real server
        (
            "/apis/scheduling.volcano.sh/v1beta1/queues",
            "scheduling.volcano.sh/v1beta1",
            "Queue",
            _field(1, _field(1, "q")),
            "kind Queue",
        ),
        # a field outside the table, set: refused rather than dropped
        (
            "/api/v1/namespaces/default/configmaps",
            "v1",
            "ConfigMap",
            _field(1, _field(1, "c")) + _field(99, "surprise"),
            "field 99 of ConfigMap",
        ),
    ],
    ids=["node", "queue", "unknown-field"],
)
def test_protobuf_unsupported_is_415_naming_it(
    sim, api_client, path: str, api_version: str, kind: str, raw: bytes, expected: str
) -> None:
    status, body = _post(sim, api_client, path, _envelope(api_version, kind, raw))
    assert status == 415
    assert body["reason"] == "UnsupportedMediaType"
    assert expected in body["message"]


def test_protobuf_garbage_is_400(sim, api_client) -> None:
    status, body = _post(
        sim, api_client, "/api/v1/namespaces/default/configmaps", b"{not protobuf"
    )
    assert status == 400
    assert "expected prefix" in body["message"]
    truncated = _envelope("v1", "ConfigMap", _field(1, _field(1, "c")))[:-2]
    status, _ = _post(
        sim, api_client, "/api/v1/namespaces/default/configmaps", truncated
    )
    assert status == 400


def test_protobuf_kind_must_match_the_url(sim, api_client) -> None:
    body = _envelope("v1", "ConfigMap", _field(1, _field(1, "c")))
    status, answer = _post(sim, api_client, "/api/v1/namespaces/default/secrets", body)
    assert status == 400
    assert "does not match the expected kind" in answer["message"]


def test_protobuf_schema_refers_to_known_messages() -> None:
    protobuf.check_schema()
