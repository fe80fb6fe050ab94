"""A vNPU that runs on a chip reported unhealthy is flagged where people look.

The device plugin's Allocate hands out a sick chip like any other
(Project-HAMi/ascend-device-plugin v1.1.0 to v1.4.0, ``internal/server/
server.go`` ``Allocate``: no health check), and Volcano checks no chip health,
so such a pod runs. The chip, the slice, the request and the Health page say so.
"""

from __future__ import annotations

import pytest

from apps.inventory.deviceconfig.health import cluster_health
from apps.scheduling.choices import RequestState
from apps.scheduling.models import Request
from tests.scheduling.helpers import World

pytestmark = pytest.mark.django_db


@pytest.fixture
def sick_world(guide_cluster, operator):
    world = World(guide_cluster)
    world.priority_classes()
    world.queue("default", namespaces=("ci", "default"))
    well, sick = world.chips("Ascend910B4", 2, node="npu-a")
    sick.healthy = False
    sick.save()
    world.slice(well, "fine", "vir05_1c_8g")
    world.slice(sick, "stuck", "vir05_1c_8g", namespace="ci")
    world.slice(sick, "stuck-too", "vir05_1c_8g", namespace="ci")
    return world, well, sick


def test_the_chip_and_its_slices_say_they_run_while_unhealthy(
    sick_world, admin_client_api
):
    world, well, sick = sick_world
    answer = admin_client_api.get("/api/chips/", {"cluster": world.cluster.pk})
    assert answer.status_code == 200, answer.content
    by_uuid = {c["uuid"]: c for c in answer.json()["results"]}
    assert by_uuid[sick.uuid]["running_while_unhealthy"] == 2
    assert by_uuid[well.uuid]["running_while_unhealthy"] == 0

    answer = admin_client_api.get("/api/slices/", {"cluster": world.cluster.pk})
    assert answer.status_code == 200, answer.content
    flags = {s["pod_name"]: s["on_unhealthy_chip"] for s in answer.json()["results"]}
    assert flags == {"fine": False, "stuck": True, "stuck-too": True}


def test_the_health_page_names_what_to_move(sick_world):
    world, _, sick = sick_world
    checks = {c["id"]: c for c in cluster_health(world.cluster)["checks"]}
    found = checks["slices_on_unhealthy_chips"]
    assert found["check_status"] == "warn"
    assert (
        "2 vNPUs run on a chip its device plugin reports unhealthy"
        in (found["message"])
    )
    assert f"ci/stuck (node npu-a, chip {sick.index})" in found["message"]
    assert "fine" not in found["message"]
    assert found["fix"].startswith("move them")

    sick.healthy = True
    sick.save()
    checks = {c["id"]: c for c in cluster_health(world.cluster)["checks"]}
    assert checks["slices_on_unhealthy_chips"]["check_status"] == "ok"


def test_a_running_request_on_the_sick_chip_is_flagged(
    sick_world, operator, operator_client
):
    world, well, sick = sick_world
    request = world.request(operator, chip_type="Ascend910B4", memory=8192)
    Request.objects.filter(pk=request.pk).update(state=RequestState.RUNNING, chip=sick)
    answer = operator_client.get(f"/api/requests/{request.pk}/")
    assert answer.status_code == 200, answer.content
    assert answer.json()["on_unhealthy_chip"] is True

    Request.objects.filter(pk=request.pk).update(chip=well)
    answer = operator_client.get(f"/api/requests/{request.pk}/")
    assert answer.json()["on_unhealthy_chip"] is False
