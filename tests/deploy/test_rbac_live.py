"""The portal, run as its ServiceAccount against a cluster that enforces deploy/'s RBAC.

Every kind of cluster call the code makes is exercised for real: sync (list and
watch of every target), the live device-config read and the guarded publish,
rollout restarts and their state, and scheduling's pod, eviction and event
calls. simcluster enforces the applied ClusterRole for the ServiceAccount's
token and logs each request; the test then requires that nothing was refused
and that the calls made are exactly the registry (apps.common.kube_permissions).
"""

from __future__ import annotations

import pytest

from apps.common.kube_permissions import granted_atoms
from apps.inventory import services
from apps.inventory.choices import ConnectionKind
from simcluster import rbac
from tests.deploy.conftest import DEPLOY
from tests.deploy.portal_calls import (
    NODE_CONFIG_MAP,
    make_every_portal_call,
    refusals_beyond_the_grant,
)

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]
USER = rbac.service_account_user("vnpu-system", "vnpuportal")


@pytest.fixture
def portal_cluster(sim, kubectl, settings):
    settings.VOLCANO_SCHEDULER_CONFIGMAP = "volcano-system/volcano-scheduler-configmap"
    settings.DEVICE_PLUGIN_DAEMONSET = "kube-system/hami-ascend-device-plugin"
    settings.WATCHED_DEPLOYMENTS = [
        "volcano-system/volcano-scheduler",
        "kube-system/hami-scheduler",
    ]
    applied = kubectl("apply", "-f", str(DEPLOY))
    assert applied.returncode == 0, applied.stderr
    namespace, name, key = NODE_CONFIG_MAP
    made = kubectl(
        "create", "configmap", name, "-n", namespace, f"--from-literal={key}=nodes: []"
    )
    assert made.returncode == 0, made.stderr
    return services.cluster_create(
        actor=None,
        name="self",
        connection=ConnectionKind.TOKEN,
        api_url=sim.url,
        token=sim.service_account_token("vnpu-system", "vnpuportal"),
        ca_cert=sim.certificate.cert_pem.decode(),
    )


def _atom(entry) -> tuple[str, str, str, str]:
    resource = entry.resource + (f"/{entry.subresource}" if entry.subresource else "")
    wanted = granted_atoms()
    general = (entry.group, resource, entry.verb, "*")
    return (
        general
        if general in wanted
        else (entry.group, resource, entry.verb, entry.name)
    )


def test_the_portal_needs_exactly_what_deploy_grants(
    sim, portal_cluster, admin_user, kubectl
):
    def touch_queue(name: str) -> None:
        touched = kubectl("annotate", "queue", name, "example.com/touched=yes")
        assert touched.returncode == 0, touched.stderr

    make_every_portal_call(
        portal_cluster, admin_user, watch_seconds=2.0, touch_queue=touch_queue
    )

    made = sim.requests_by(USER)
    refused = sorted(
        {(e.verb, e.resource, e.subresource, e.name) for e in made if not e.allowed}
    )
    # then nothing the portal does was refused by the ClusterRole
    assert refused == []
    # and it used every permission it is granted, and nothing else
    assert {_atom(e) for e in made} == granted_atoms()


def test_the_service_account_cannot_do_more(sim, portal_cluster):
    answers = refusals_beyond_the_grant(portal_cluster)
    assert [status for _, _, status in answers] == [403] * len(answers), answers
