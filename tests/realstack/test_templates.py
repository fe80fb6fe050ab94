"""Templates against the real API server, controller-manager and Volcano.

Publishing keeps the ConfigMap's shape and every key the portal does not own;
a hand edit with kubectl is drift; a write that lands between the portal's read
and its write is refused by the API server's resourceVersion check; a rollout
restart through the real controller-manager ends "in effect"; and Volcano,
restarted after a publish, hands out the new templates (it reads the ConfigMap
once per process); until then the portal answers and books the ones it loaded.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from apps.common.exceptions import Conflict, ValidationFailed
from apps.inventory import services
from apps.inventory.deviceconfig import guarded_write, liveconfig, publishing
from apps.inventory.deviceconfig.in_effect import config_in_effect
from apps.inventory.deviceconfig.liveconfig import deviceconfig_drift
from apps.inventory.deviceconfig.refresh import config_loaded_refresh
from apps.inventory.deviceconfig.restarts import restart_states
from apps.inventory.deviceconfig.selectors import template_fit_answer
from apps.inventory.deviceconfig.whatif import slice_name, slices_broken_by_draft
from apps.inventory.hami.deviceconfig import parse_device_config
from apps.inventory.models import Template
from apps.inventory.sync.engine import sync_once
from apps.scheduling.models import Request, Reservation
from apps.scheduling.passes import scheduling_pass
from harness.portal import ci_request, token_client
from kubestack.scenarios import slice_pod, wait_running
from simcluster import guide_data
from tests.polling import wait_for

pytestmark = [
    pytest.mark.realstack,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
]

NS, CM, KEY = "kube-system", "hami-scheduler-device", "device-config.yaml"

# The other shape HAMi's readers accept: ``vnpus: {hamiVnpuCore, configs}``
# (the guide's ConfigMap is the list shape, ``vnpus: [...]``), with an NVIDIA
# section the portal must keep as it is.
WRAPPER_SHAPE = (
    Path(__file__).resolve().parents[1] / "fixtures" / "device-config-wrapper.yaml"
).read_text()


def _live_data(kube_core) -> dict[str, str]:
    return kube_core.read_namespaced_config_map(CM, NS).data or {}


def _set_data(kube_stack, data: dict[str, str]) -> None:
    body = json.dumps({"data": data})
    kube_stack.kubectl("patch", "configmap", "-n", NS, CM, "--type=merge", "-p", body)


@pytest.fixture
def restored_device_config(kube_stack, kube_core):
    """Put the ConfigMap back as it was, and the components that read it."""
    before = _live_data(kube_core)
    restarts = kube_stack.supervisor.scheduler_restarts
    yield before
    current = _live_data(kube_core)
    removed = {key: None for key in current if key not in before}
    _set_data(kube_stack, {**removed, **before})
    kube_stack.device_plugin.reload()
    if kube_stack.supervisor.scheduler_restarts != restarts:
        kube_stack.restart_volcano_scheduler()


def _vir02(cluster, memory: int, admin_user) -> None:
    template = Template.objects.get(
        chip_type__cluster=cluster, chip_type__common_word="Ascend310P", name="vir02"
    )
    services.template_update(
        template=template, actor=admin_user, data={"memory": memory}
    )


@pytest.mark.parametrize("shape", ["list", "wrapper"])
def test_publish_keeps_the_shape_and_the_keys_it_does_not_own(
    kube_stack, kube_core, real_cluster, admin_user, restored_device_config, shape
):
    # given a live config in this shape, with a key someone else keeps beside it
    text = guide_data.DEVICE_CONFIG_YAML if shape == "list" else WRAPPER_SHAPE
    _set_data(kube_stack, {KEY: text, "site-notes.txt": "owned by the site team\n"})
    sync_once(real_cluster)
    if shape == "wrapper":
        publishing.deviceconfig_adopt(
            cluster=real_cluster, actor=admin_user, reason="the wrapper shape"
        )

    # when an admin changes one template and publishes (the stack's device
    # plugin v1.1.0 and HAMi v2.5.0 cannot parse the wrapper: a write of it
    # needs confirm_shape, and says why)
    _vir02(real_cluster, 5120, admin_user)
    result = publishing.deviceconfig_publish(
        cluster=real_cluster,
        actor=admin_user,
        reason="smaller vir02",
        confirm_shape=shape == "wrapper",
    )
    crashing = [r.component for r in result.shape_warnings if r.effect == "crash"]
    assert crashing == ([] if shape == "list" else ["hami", "device_plugin"])

    # then the real ConfigMap has the change, in the same shape, and the other key
    live = _live_data(kube_core)
    assert live["site-notes.txt"] == "owned by the site team\n"
    assert live[KEY] == result.version.text
    assert ("hamiVnpuCore" in live[KEY]) == (shape == "wrapper")
    assert ("nvidia:" in live[KEY]) == (shape == "wrapper")
    before, after = parse_device_config(text), parse_device_config(live[KEY])
    changed = {
        (ct.common_word, t.name, t.memory)
        for ct in after.chip_types()
        for t in ct.templates
    } - {
        (ct.common_word, t.name, t.memory)
        for ct in before.chip_types()
        for t in ct.templates
    }
    assert changed == {("Ascend310P", "vir02", 5120)}
    assert deviceconfig_drift(real_cluster)["in_sync"] is True


def test_a_hand_edit_with_kubectl_is_drift_and_blocks_a_publish(
    kube_stack, kube_core, real_cluster, admin_user, restored_device_config
):
    edited = guide_data.DEVICE_CONFIG_YAML.replace("memory: 6144", "memory: 7168")
    _set_data(kube_stack, {KEY: edited})
    sync_once(real_cluster)

    drift = deviceconfig_drift(real_cluster)
    assert drift["in_sync"] is False
    assert "-    memory: 6144" in drift["diff"]
    assert "+    memory: 7168" in drift["diff"]

    _vir02(real_cluster, 5120, admin_user)
    with pytest.raises(Conflict) as refused:
        publishing.deviceconfig_publish(
            cluster=real_cluster, actor=admin_user, reason="over a hand edit"
        )
    assert refused.value.code == "drift"
    assert _live_data(kube_core)[KEY] == edited  # nothing was written


def test_a_write_between_read_and_put_is_refused_by_the_api_server(
    kube_stack, kube_core, real_cluster, admin_user, restored_device_config, monkeypatch
):
    """Someone edits the ConfigMap after the portal read it: the real server's
    resourceVersion precondition answers 409, and the portal writes nothing."""
    sync_once(real_cluster)
    _vir02(real_cluster, 5120, admin_user)
    theirs = guide_data.DEVICE_CONFIG_YAML.replace("memory: 12288", "memory: 11264")
    read = liveconfig.live_device_config_read

    def read_then_someone_writes(*args, **kwargs):
        live = read(*args, **kwargs)
        _set_data(kube_stack, {KEY: theirs})
        return live

    monkeypatch.setattr(
        guarded_write, "live_device_config_read", read_then_someone_writes
    )
    with pytest.raises(Conflict):
        publishing.deviceconfig_publish(
            cluster=real_cluster, actor=admin_user, reason="racing a hand edit"
        )
    assert _live_data(kube_core)[KEY] == theirs


def test_a_publish_that_breaks_a_running_pod_writes_nothing_until_it_is_named(
    kube_stack, kube_core, real_cluster, admin_user, restored_device_config, cleanup
):
    """A pod Volcano placed on vir02 (it asks 5000 MB, gets 6144): shrinking
    vir02 breaks it, and the real ConfigMap is untouched until it is named."""
    cleanup.append(("default", "tpl-held"))
    pod = slice_pod("tpl-held", "Ascend310P", 5000)
    kube_stack.kubectl("create", "-f", "-", stdin=json.dumps(pod))
    wait_running(kube_stack, [("default", "tpl-held")], timeout=60)
    sync_once(real_cluster)
    before = _live_data(kube_core)[KEY]
    _vir02(real_cluster, 5120, admin_user)
    assert [slice_name(r) for r in slices_broken_by_draft(real_cluster)] == [
        "default/tpl-held"
    ]

    with pytest.raises(ValidationFailed) as refused:
        publishing.deviceconfig_publish(
            cluster=real_cluster, actor=admin_user, reason="smaller vir02"
        )
    assert refused.value.code == "breaks_running_slices"
    (message,) = refused.value.detail["confirm_breaking"]
    assert "default/tpl-held (template vir02 of Ascend310P is resized" in message
    assert _live_data(kube_core)[KEY] == before

    result = publishing.deviceconfig_publish(
        cluster=real_cluster,
        actor=admin_user,
        reason="smaller vir02",
        confirm_breaking=["default/tpl-held"],
    )
    assert _live_data(kube_core)[KEY] == result.version.text
    live = parse_device_config(result.version.text)
    assert ("vir02", 5120) in {
        (t.name, t.memory)
        for ct in live.chip_types()
        if ct.common_word == "Ascend310P"
        for t in ct.templates
    }
    # gone before the next test syncs, which would see it broken too
    kube_stack.kubectl(
        "delete", "pod", "-n", "default", "tpl-held", "--grace-period=0", "--force"
    )


def test_restart_through_the_controller_manager_ends_in_effect_and_volcano_uses_the_new_templates(
    kube_stack,
    kube_core,
    real_cluster,
    admin_user,
    restored_device_config,
    cleanup,
    settings,
):
    settings.PREEMPTION_AUTO_APPROVE_PRIORITY_GAP = None
    sync_once(real_cluster)
    assert config_loaded_refresh(real_cluster) is not None
    loaded = config_in_effect(real_cluster)
    assert (loaded.loaded_by, loaded.pending_restart) == ("volcano-scheduler", False)

    _vir02(real_cluster, 5120, admin_user)
    published = publishing.deviceconfig_publish(
        cluster=real_cluster, actor=admin_user, reason="vir02 at 5 GiB"
    ).version
    sync_once(real_cluster)
    state = restart_states(real_cluster)["components"]
    assert {row["component"]: row["restart_state"] for row in state} == {
        "hami-scheduler": "restart_pending",
        "volcano-scheduler": "restart_pending",
        "hami-ascend-device-plugin": "restart_pending",
    }

    # Volcano still runs with what it loaded at start: 5000 MB is the old vir02
    assert _volcano_gives_5000_mb(kube_stack, kube_core, cleanup, "tpl-before") == 6144
    # and so the portal says, answers and books (the config in effect)
    effect = config_in_effect(real_cluster)
    assert (effect.version, effect.published) == (loaded.version, published.number)
    assert effect.pending_restart
    fit = template_fit_answer(real_cluster, common_word="Ascend310P", memory=5000)
    assert (fit["template"], fit["memory"]) == ("vir02", 6144)
    assert (fit["after_restart"]["template"], fit["after_restart"]["memory"]) == (
        "vir02",
        5120,
    )
    ci = token_client("loaded-bot", "ci")
    submitted = ci.post("/api/requests/", ci_request(), format="json")
    assert submitted.status_code == 201, submitted.json()
    request_id = submitted.json()["id"]
    scheduling_pass(real_cluster.pk)
    booked = Reservation.objects.get(request_id=request_id)
    assert (booked.template, booked.memory) == ("vir02", 6144)
    request = Request.objects.get(pk=request_id)
    cleanup.append(("default", request.pod_name))
    wait_running(kube_stack, [("default", request.pod_name)], timeout=60)
    pod = kube_core.read_namespaced_pod(request.pod_name, "default")
    allocated = pod.metadata.annotations["hami.io/Ascend310P-devices-allocated"]
    assert int(allocated.split(",")[2]) == booked.memory

    # when the admin restarts the components through the portal
    for component in (
        "volcano-scheduler",
        "hami-scheduler",
        "hami-ascend-device-plugin",
    ):
        publishing.workload_restart(
            cluster=real_cluster, component=component, actor=admin_user
        )

    # then the real controllers replace every pod, and the state ends in effect
    def in_effect() -> bool:
        rows = restart_states(real_cluster)["components"]
        return all(row["restart_state"] == "in_effect" for row in rows)

    wait_for(in_effect, "every component to be in effect", timeout=90, interval=1)
    assert kube_stack.supervisor.scheduler_restarts >= 1

    # and the restarted Volcano hands out the published vir02, as the portal says
    assert _volcano_gives_5000_mb(kube_stack, kube_core, cleanup, "tpl-after") == 5120
    config_loaded_refresh(real_cluster)
    assert config_in_effect(real_cluster).version == published.number
    fit = template_fit_answer(real_cluster, common_word="Ascend310P", memory=5000)
    assert (fit["memory"], fit["after_restart"]) == (5120, None)


def _volcano_gives_5000_mb(kube_stack, kube_core, cleanup, name: str) -> int:
    """Place a pod asking for 5000 MB of a 310P; the memory Volcano booked for it."""
    cleanup.append(("default", name))
    pod = slice_pod(name, "Ascend310P", 5000)
    kube_stack.kubectl("create", "-f", "-", stdin=json.dumps(pod))
    wait_running(kube_stack, [("default", name)], timeout=60)
    found = kube_core.read_namespaced_pod(name, "default")
    allocated = found.metadata.annotations["hami.io/Ascend310P-devices-allocated"]
    return int(allocated.split(",")[2])


def test_equal_templates_tie_as_volcano_breaks_it(
    kube_stack, kube_core, real_cluster, admin_user, restored_device_config, cleanup
):
    """Two 310P templates of 6144 MB, the new one first in the file: the real
    Volcano (Go's sort.Slice, file order for ties) hands out the first, and the
    portal's fit answer names that one, not the one first by name."""
    tied = guide_data.DEVICE_CONFIG_YAML.replace(
        "  - name: vir02\n",
        "  - name: vir02x\n    memory: 6144\n    aiCore: 2\n    aiCPU: 2\n"
        "  - name: vir02\n",
        1,
    )
    assert tied != guide_data.DEVICE_CONFIG_YAML
    _set_data(kube_stack, {KEY: tied})
    sync_once(real_cluster)
    restarts = kube_stack.supervisor.scheduler_restarts
    publishing.workload_restart(
        cluster=real_cluster, component="volcano-scheduler", actor=admin_user
    )

    def loaded() -> bool:
        config_loaded_refresh(real_cluster)
        return (
            kube_stack.supervisor.scheduler_restarts > restarts
            and not config_in_effect(real_cluster).pending_restart
        )

    wait_for(loaded, "Volcano restarted on the tied config", timeout=90, interval=1)
    fit = template_fit_answer(real_cluster, common_word="Ascend310P", memory=5000)
    assert (fit["template"], fit["memory"]) == ("vir02x", 6144)

    cleanup.append(("default", "tpl-tied"))
    pod = slice_pod("tpl-tied", "Ascend310P", 5000)
    kube_stack.kubectl("create", "-f", "-", stdin=json.dumps(pod))
    wait_running(kube_stack, [("default", "tpl-tied")], timeout=60)
    found = kube_core.read_namespaced_pod("tpl-tied", "default")
    (runtime,) = json.loads(found.metadata.annotations["huawei.com/Ascend310P"])
    assert runtime["temp"] == fit["template"]
