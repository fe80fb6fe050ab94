"""Publishing an edit that breaks running slices: each must be named first.

The guide's ``default/npu-pod-310p`` holds vir01 (3072 MB) and
``default/npu-pod-910b`` holds vir05_1c_8g (8192 MB). Resizing either
template breaks that pod's slice; the what-if blames the publish for it only
while the published config still agrees with the pod.
"""

from __future__ import annotations

import pytest

from apps.inventory.models import DeviceConfigVersion, Template
from tests.guide import POD_310P, POD_910B

pytestmark = pytest.mark.django_db


def _resize(client, cluster, name: str, memory: int) -> None:
    template = Template.objects.get(chip_type__cluster=cluster, name=name)
    answer = client.patch(f"/api/templates/{template.pk}/", {"memory": memory})
    assert answer.status_code == 200, answer.json()


def _pods(rows: list[dict]) -> list[str]:
    return sorted(f"{r['namespace']}/{r['pod_name']}" for r in rows)


def test_each_running_slice_a_publish_breaks_must_be_named(
    cluster, live_text, operator_client, url
):
    # given edits that resize the templates both running pods hold
    before = live_text()
    _resize(operator_client, cluster, "vir01", 4096)
    _resize(operator_client, cluster, "vir05_1c_8g", 9216)
    what_if = operator_client.get(url("what-if")).json()
    assert _pods(what_if["invalid_slices"]) == [POD_310P, POD_910B]
    assert what_if["already_invalid_slices"] == []

    # when an operator publishes naming none: 400 on confirm_breaking, both listed
    answer = operator_client.post(url("publish"), {"reason": "bigger"})
    assert answer.status_code == 400, answer.json()
    body = answer.json()
    assert body["code"] == "breaks_running_slices"
    (message,) = body["errors"]["confirm_breaking"]
    assert "breaks 2 running slice(s)" in message
    assert POD_310P in message
    assert POD_910B in message
    assert "vir01 of Ascend310P is resized from 3072 MB to 4096 MB" in message
    assert live_text() == before

    # when naming only one: still refused, and only the other is listed
    answer = operator_client.post(
        url("publish"), {"reason": "bigger", "confirm_breaking": [POD_310P]}
    )
    assert answer.status_code == 400, answer.json()
    (message,) = answer.json()["errors"]["confirm_breaking"]
    assert "breaks 1 running slice(s)" in message
    assert POD_910B in message
    assert POD_310P not in message
    assert live_text() == before
    assert not DeviceConfigVersion.objects.filter(source="published").exists()

    # when naming both: published
    answer = operator_client.post(
        url("publish"), {"reason": "bigger", "confirm_breaking": [POD_910B, POD_310P]}
    )
    assert answer.status_code == 201, answer.json()
    assert "memory: 4096" in live_text()
    assert "memory: 9216" in live_text()


def test_confirm_breaking_must_be_a_list(cluster, operator_client, url):
    _resize(operator_client, cluster, "vir01", 4096)
    answer = operator_client.post(
        url("publish"), {"reason": "bigger", "confirm_breaking": POD_310P}
    )
    assert answer.status_code == 400, answer.json()
    assert "confirm_breaking" in answer.json()["errors"]
    assert answer.json()["code"] != "breaks_running_slices"


def test_a_slice_already_broken_by_the_published_config_is_not_this_publishs(
    cluster, live_text, operator_client, url
):
    # given vir01 resized by an earlier, confirmed publish: the pod that holds
    # 3072 MB of it is broken under the published config already
    _resize(operator_client, cluster, "vir01", 4096)
    first = operator_client.post(
        url("publish"), {"reason": "v2", "confirm_breaking": [POD_310P]}
    )
    assert first.status_code == 201, first.json()

    # when an operator edits a template no running pod holds
    _resize(operator_client, cluster, "vir02", 7168)

    # then the what-if lists the pod as already broken, not as this publish's doing
    what_if = operator_client.get(url("what-if")).json()
    assert what_if["invalid_slices"] == []
    (already,) = what_if["already_invalid_slices"]
    assert _pods([already]) == [POD_310P]
    assert "vir01" in already["reason"]
    # and the publish needs no confirmation for it
    answer = operator_client.post(url("publish"), {"reason": "v3"})
    assert answer.status_code == 201, answer.json()
    assert "memory: 7168" in live_text()


def test_accepting_a_template_covers_the_pods_that_run_it_when_it_lands(
    cluster, live_text, operator_client, url
):
    """Pods come and go between the preview and the click (the demo starts
    vir01 pods every few seconds): a publish confirmed by template lands on
    the first click; a pod of a template not accepted still stops it."""
    from apps.inventory.models import Slice

    _resize(operator_client, cluster, "vir01", 4096)
    previewed = _pods(operator_client.get(url("what-if")).json()["invalid_slices"])
    assert previewed == [POD_310P]
    # a vir01 pod starts after the preview (what sync mirrors)
    running = Slice.objects.get(cluster=cluster, pod_name=POD_310P.split("/")[1])
    running.pk = None
    running.pod_name = "arrived-later"
    running.save()

    # named by pod, the new one stops the publish, and its template is named
    answer = operator_client.post(
        url("publish"), {"reason": "bigger", "confirm_breaking": previewed}
    )
    assert answer.status_code == 400, answer.json()
    errors = answer.json()["errors"]
    assert "default/arrived-later" in errors["confirm_breaking"][0]
    assert "Ascend310P/vir01" in errors["confirm_breaking_templates"][0]

    # a template not concerned does not accept it
    answer = operator_client.post(
        url("publish"),
        {"reason": "bigger", "confirm_breaking_templates": ["Ascend310P/vir02"]},
    )
    assert answer.status_code == 400, answer.json()

    # accepted by template: published at once, whichever pods run it
    answer = operator_client.post(
        url("publish"),
        {"reason": "bigger", "confirm_breaking_templates": ["Ascend310P/vir01"]},
    )
    assert answer.status_code == 201, answer.json()
    assert "memory: 4096" in live_text()


@pytest.mark.parametrize("value", ["vir01", "Ascend310P/", "/vir01", ["a b/c"], 7])
def test_confirm_breaking_templates_names_the_field_when_malformed(
    cluster, operator_client, url, value
):
    _resize(operator_client, cluster, "vir01", 4096)
    answer = operator_client.post(
        url("publish"),
        {"reason": "bigger", "confirm_breaking_templates": value},
        format="json",
    )
    assert answer.status_code == 400, answer.json()
    fields = answer.json()["errors"]
    assert [f for f in fields if f.startswith("confirm_breaking_templates")], fields
    assert answer.json()["code"] != "breaks_running_slices"
