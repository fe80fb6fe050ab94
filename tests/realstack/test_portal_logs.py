"""A job's log and exit code through the portal, on the real kube-apiserver.

The portal reads ``pods/log`` from the real API server, which proxies it to
the node's kubelet (KWOK's, behind kubestack's front: docs/kubestack.md), and
the exit code from the real container status the job player wrote. What the
portal streams must be the bytes ``kubectl logs`` gives, and the copy it
keeps when the request ends must be ``kubectl logs --timestamps``.
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from django.test import AsyncClient

from apps.scheduling.models import Request
from harness.portal import (
    Running,
    ci_request,
    job_workload,
    request_state,
    token_client,
)
from tests.polling import wait_for

pytestmark = [
    pytest.mark.realstack,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
]

LINES = ["loading the model", "epoch 1 loss 0.71", "epoch 2 loss nan", "giving up"]


def test_the_portal_follows_the_real_log_and_reports_the_real_exit_code(
    kube_stack, real_cluster, cleanup, live_logs
):
    ci = token_client("ci-logs", "operator")
    token = ci._credentials["HTTP_AUTHORIZATION"]  # "Bearer vnp_..."
    job = ci_request(
        idempotency_key="real-logs-1",
        workload=job_workload(LINES, run_seconds=12, exit_code=3),
    )
    with Running(real_cluster):
        submitted = ci.post("/api/requests/", job, format="json")
        assert submitted.status_code == 201, submitted.json()
        request_id = submitted.json()["id"]
        # Follow as soon as the container runs, as the cluster says, not when
        # the portal's sync has seen it: that lag, on a busy machine, once let
        # the job end first (one chunk: nothing shown to stream).
        pod = wait_for(
            lambda: Request.objects.get(pk=request_id).pod_name,
            "the request's pod",
            timeout=90,
        )
        wait_for(
            lambda: kube_stack.kubectl(
                "get",
                "pod",
                pod,
                "-o",
                "jsonpath={.status.containerStatuses[0].state.running.startedAt}",
                check=False,
            ).stdout.strip(),
            "the job's container to run",
            timeout=90,
        )

        async def follow() -> tuple[Any, list[tuple[float, bytes]]]:
            response = await AsyncClient().get(
                f"/api/requests/{request_id}/logs/?follow=true",
                headers={"authorization": token},
            )
            assert response.streaming, (response.status_code, response.content)
            chunks = [
                (time.monotonic(), chunk) async for chunk in response.streaming_content
            ]
            return response, chunks

        response, chunks = async_to_sync(follow)()
        shown = wait_for(
            lambda: (s := request_state(ci, request_id))["result"] and s,
            "the request's result",
            timeout=60,
        )

    pod = Request.objects.get(pk=request_id).pod_name
    cleanup.append(("default", pod))
    followed = b"".join(chunk for _, chunk in chunks).decode()
    assert followed == kube_stack.kubectl("logs", pod).stdout
    assert followed == "".join(f"{line}\n" for line in LINES)
    assert chunks[-1][0] - chunks[0][0] > 1.0  # streamed while the job ran
    assert response["X-Log-Source"] == "live"
    # the real container status speaks for the job
    assert shown["state"] == "failed"
    assert shown["exit_code"] == 3
    assert shown["result"]["reason"] == "Error"
    assert shown["result"]["containers"][0]["name"] == "main"
    # the copy kept when it ended is kubectl's, stamps and all
    kept = ci.get(f"/api/requests/{request_id}/logs/?timestamps=true")
    assert kept["X-Log-Source"] == "kept"
    assert (
        kept.content.decode() == kube_stack.kubectl("logs", pod, "--timestamps").stdout
    )


def test_the_real_api_server_refuses_a_log_asked_for_as_text_alone(
    kube_stack, kube_core
):
    """Why the portal asks with */* (and simcluster refuses text/plain alone)."""
    import json

    from kubernetes.client.rest import ApiException

    pod = "text-only"
    kube_stack.kubectl("run", pod, "--image=busybox", "--restart=Never")
    try:
        with pytest.raises(ApiException) as refused:
            kube_core.api_client.call_api(
                f"/api/v1/namespaces/default/pods/{pod}/log",
                "GET",
                header_params={"Accept": "text/plain"},
                auth_settings=["BearerToken"],
                _preload_content=False,
            )
        assert refused.value.status == 406
        assert json.loads(refused.value.body)["message"] == (
            "only the following media types are accepted: application/json, "
            "application/yaml, application/vnd.kubernetes.protobuf"
        )
    finally:
        kube_stack.kubectl("delete", "pod", pod, "--grace-period=0", "--force")
