"""The config in effect: until the scheduler restarts, the version it loaded.

On simcluster, whose schedulers (like the real ones) read the device config
once per process: after a publish the fit answers, the room and the
allocator's rules stay those of the loaded version and the API says the
published one takes effect after a restart; once the scheduler's new pod is
read, the published version is in effect. The real Volcano's side is in
tests/realstack/test_templates.py.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.management import call_command
from django.utils import timezone

from apps.inventory.deviceconfig.in_effect import config_in_effect
from apps.inventory.deviceconfig.refresh import config_loaded_refresh
from apps.inventory.models import DeviceConfigVersion, Template
from apps.scheduling.snapshot import rules_for
from tests.guide import POD_310P

pytestmark = pytest.mark.django_db


def _fit(client, url, memory: int) -> dict:
    answer = client.get(url("fit") + f"?chip_type=Ascend310P&memory={memory}")
    assert answer.status_code == 200, answer.json()
    return answer.json()


def _vir01(cluster) -> int:
    (vir01,) = [
        t for t in rules_for(cluster)["Ascend310P"].templates if t.name == "vir01"
    ]
    return vir01.memory


def _publish_bigger_vir01(cluster, operator_client, url) -> int:
    """vir01 to 4096 MB, published (the guide's 310P pod named); its number."""
    template = Template.objects.get(chip_type__cluster=cluster, name="vir01")
    operator_client.patch(f"/api/templates/{template.pk}/", {"memory": 4096})
    answer = operator_client.post(
        url("publish"), {"reason": "bigger vir01", "confirm_breaking": [POD_310P]}
    )
    assert answer.status_code == 201, answer.json()
    return answer.json()["number"]


@pytest.fixture
def loaded(cluster):
    """The scheduler's start read (as the beat does), before any publish."""
    assert config_loaded_refresh(cluster) is not None
    effect = config_in_effect(cluster)
    assert (effect.loaded_by, effect.pending_restart) == ("volcano-scheduler", False)
    return effect


def test_an_unpublished_edit_changes_nothing_a_request_gets(
    cluster, loaded, operator_client, viewer_client, url
):
    template = Template.objects.get(chip_type__cluster=cluster, name="vir01")
    answer = operator_client.patch(f"/api/templates/{template.pk}/", {"memory": 4096})
    assert answer.status_code == 200, answer.json()

    assert _vir01(cluster) == 3072
    fit = _fit(viewer_client, url, 3500)
    assert (fit["template"], fit["memory"], fit["after_restart"]) == (
        "vir02",
        6144,
        None,
    )


def test_after_a_publish_the_loaded_version_places_until_the_restart(
    cluster,
    loaded,
    operator_client,
    viewer_client,
    url,
    wait_until,
    capsys,
    later_second,
):
    # given a publish in a later second than the scheduler's start (whole-second stamps)
    later_second()
    published = _publish_bigger_vir01(cluster, operator_client, url)

    # then a request of 3500 MB still gets the loaded vir02, and the API says
    # what it gets after the restart
    config_loaded_refresh(cluster)
    assert _vir01(cluster) == 3072
    fit = _fit(viewer_client, url, 3500)
    assert (fit["template"], fit["memory"]) == ("vir02", 6144)
    assert (fit["config_version"], fit["published_version"]) == (
        loaded.version,
        published,
    )
    assert (fit["after_restart"]["template"], fit["after_restart"]["memory"]) == (
        "vir01",
        4096,
    )
    state = viewer_client.get(url("device-config")).json()["in_effect"]
    assert state["pending_restart"] is True
    assert (state["version"], state["published"]) == (loaded.version, published)
    assert state["loaded_by"] == "volcano-scheduler"
    restarts = viewer_client.get(url("restarts")).json()
    assert {c["component"]: c["loaded_version"] for c in restarts["components"]} == {
        "volcano-scheduler": loaded.version,
        "hami-scheduler": loaded.version,
        "hami-ascend-device-plugin": loaded.version,
    }
    rooms = viewer_client.get(f"/api/chips/?cluster={cluster.pk}&room_for=vir01")
    assert rooms.status_code == 200, rooms.json()
    call_command(
        "deviceconfig",
        "fit",
        "--cluster",
        "sim",
        "--chip-type",
        "Ascend310P",
        "--memory",
        "3500",
    )
    printed = capsys.readouterr().out
    assert printed.splitlines()[0] == "vir02 (6144 MB)"
    assert f"after it restarts (v{published}): vir01 (4096 MB)" in printed

    # when the scheduler is restarted, its new pod read the published version
    answer = operator_client.post(url("restarts/volcano-scheduler"), {"confirm": True})
    assert answer.status_code == 202, answer.json()

    def in_effect() -> bool:
        config_loaded_refresh(cluster)
        return not config_in_effect(cluster).pending_restart

    wait_until(in_effect)
    assert config_in_effect(cluster).version == published
    assert _vir01(cluster) == 4096
    fit = _fit(viewer_client, url, 3500)
    assert (fit["template"], fit["memory"], fit["after_restart"]) == (
        "vir01",
        4096,
        None,
    )
    rows = viewer_client.get(url("restarts")).json()["components"]
    assert {c["component"]: c["loaded_version"] for c in rows}[
        "volcano-scheduler"
    ] == published


def test_a_stored_text_that_does_not_parse_falls_back_to_the_portals_templates(
    guide_cluster,
):
    # an older release recorded a version this one cannot read
    from apps.inventory.deviceconfig.specs import chip_type_specs
    from apps.inventory.models import DeviceConfigVersion

    DeviceConfigVersion.objects.create(
        cluster=guide_cluster,
        number=2,
        text="vnpus:\n- chipName: 310P3\n",
        shape="list",
        source="observed",
        sha256="0" * 64,
    )
    effect = config_in_effect(guide_cluster)
    assert "v2 does not parse" in effect.why
    assert effect.chip_types == tuple(chip_type_specs(guide_cluster))
    assert _vir01(guide_cluster) == 3072


def test_a_newer_version_with_the_same_templates_needs_no_restart(
    cluster, loaded, live_text, hand_edit, resync, later_second
):
    # given a hand edit after the scheduler started that keeps every template
    # (a key of the file nobody reads here), as sync records it
    later_second()
    hand_edit(live_text() + "# tuned by hand: no template changed\n")
    resync()
    config_loaded_refresh(cluster)

    effect = config_in_effect(cluster)
    # then the newer version is the published one, and no restart is asked for
    assert effect.published > loaded.version
    assert effect.version == loaded.version
    assert effect.pending_restart is False
    assert "no restart is needed" in effect.why


def test_the_restarts_view_reads_the_schedulers_start_again(
    cluster, loaded, operator_client, viewer_client, url, wait_until, later_second
):
    """No sync runs here, so no Deployment event refreshes the stored start:
    the restarts view, which lists the scheduler's pods live anyway, does."""
    later_second()
    published = _publish_bigger_vir01(cluster, operator_client, url)
    config_loaded_refresh(cluster)
    assert config_in_effect(cluster).pending_restart
    # when volcano-scheduler is restarted and nothing else reads its start
    answer = operator_client.post(url("restarts/volcano-scheduler"), {"confirm": True})
    assert answer.status_code == 202, answer.json()

    def shown_in_effect() -> bool:
        state = viewer_client.get(url("restarts")).json()["in_effect"]
        return state["pending_restart"] is False

    # then the restarts view alone brings the banner up to date
    wait_until(shown_in_effect)
    cluster.refresh_from_db()
    assert config_in_effect(cluster).version == published


def test_which_version_is_in_effect_is_read_again_only_when_it_can_differ(
    cluster, loaded, operator_client, url, later_second, django_assert_num_queries
):
    """Every submission asks which version is in effect (issue 38: a POST's
    CPU is mostly its queries), so the history is read once more only when a
    change came after the scheduler started."""
    first = loaded.version
    # given a scheduler that started long before the portal's first sync
    # (the usual case): it runs what that sync found, whatever its start
    cluster.config_loaded_at = DeviceConfigVersion.objects.get(
        cluster=cluster, number=first
    ).created_at - timedelta(hours=1)
    with django_assert_num_queries(2):  # no change yet; the first version seen
        effect = config_in_effect(cluster)
    assert (effect.version, effect.pending_restart) == (first, False)

    # given a publish after the scheduler's start: the history is read for
    # the version before it (here none changed: the first one seen)
    later_second()
    published = _publish_bigger_vir01(cluster, operator_client, url)
    with django_assert_num_queries(3):
        effect = config_in_effect(cluster)
    assert (effect.version, effect.published) == (first, published)
    assert effect.pending_restart is True

    # given a scheduler started after that publish: the newest, in one read
    cluster.config_loaded_at = timezone.now() + timedelta(seconds=2)
    with django_assert_num_queries(1):
        effect = config_in_effect(cluster)
    assert (effect.version, effect.pending_restart) == (published, False)
