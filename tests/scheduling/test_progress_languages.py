"""The progress of proposals and drains reads in the reader's language (issue 34).

Workers write it with no request, so it is stored as an English template and
its values (``apps.scheduling.progress``) and rendered where the API answers.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.utils import translation

from apps.inventory.hami.messages import Message
from apps.scheduling.choices import DrainScope, DrainState, ProposalState
from apps.scheduling.drain.evict import _progress
from apps.scheduling.drain.services import _first_state
from apps.scheduling.models import Drain, PreemptionProposal
from apps.scheduling.progress import progress_shown, set_progress
from tests.scheduling.helpers import run_pass
from tests.scheduling.stored_texts import sample_values, templates_of

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]
ZH = {"HTTP_ACCEPT_LANGUAGE": "zh-CN"}
HAN = re.compile(r"[\u4e00-\u9fff]")
CHINESE = re.compile(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]")

#: The files that write a proposal's or a drain's progress.
WRITERS = (
    "apps/scheduling/allocation.py",
    "apps/scheduling/decisions.py",
    "apps/scheduling/eviction.py",
    "apps/scheduling/holds.py",
    "apps/scheduling/reconcile.py",
    "apps/scheduling/drain/evict.py",
    "apps/scheduling/drain/finish.py",
    "apps/scheduling/drain/services.py",
)


TEMPLATES = templates_of(WRITERS)


def test_the_writers_progress_templates_are_found():
    # The test below must see them: a marker renamed would leave it empty.
    assert "every victim is gone; the request is being admitted" in TEMPLATES
    assert "%(own)d portal pod(s) to evict" in TEMPLATES
    assert len(TEMPLATES) >= 20


@pytest.mark.parametrize("template", TEMPLATES)
def test_each_progress_reads_in_chinese_with_its_values(template):
    values = sample_values(template)
    row = Drain(progress="")
    set_progress(row, Message(template, values))
    assert row.progress == template % values
    with translation.override("zh-hans"):
        shown = progress_shown(row)
    # Chinese words, or at least Chinese punctuation (the "; " joining two parts).
    assert shown != row.progress
    assert CHINESE.search(shown), shown
    for value in values.values():
        assert str(value) in shown
    with translation.override("en"):
        assert progress_shown(row) == row.progress


def _proposal(world, operator) -> PreemptionProposal:
    (chip,) = world.chips("Ascend310P", 1)
    world.slice(chip, "big", "vir04", priority=100)
    world.slice(chip, "mid", "vir02", priority=1000)
    world.slice(chip, "small", "vir01", priority=1000)
    world.request(operator, template="vir04", memory=None, priority="inference-high")
    run_pass(world.cluster)
    return PreemptionProposal.objects.get()


def test_a_proposals_progress_follows_accept_language(
    world, operator, operator_client, admin_client_api, fake_ops
):
    proposal = _proposal(world, operator)
    url = f"/api/preemptions/{proposal.pk}/"
    assert operator_client.get(url).json()["progress"] == (
        "waiting for an admin's decision"
    )
    assert operator_client.get(url, **ZH).json()["progress"] == "等待管理员决定"
    listed = operator_client.get("/api/preemptions/", **ZH).json()["results"]
    assert listed[0]["progress"] == "等待管理员决定"

    rejected = admin_client_api.post(
        f"{url}reject/", {"reason": "not now"}, format="json", **ZH
    )
    assert rejected.status_code == 200, rejected.json()
    assert rejected.json()["progress"] == "已拒绝；不驱逐任何 Pod"
    assert operator_client.get(url).json()["progress"] == "rejected; nothing is evicted"
    # The English text stays stored for clients that read the rows.
    proposal.refresh_from_db()
    assert proposal.progress == "rejected; nothing is evicted"


def test_an_approved_proposal_counts_its_victims_in_chinese(
    world, operator, operator_client, admin_client_api, fake_ops
):
    proposal = _proposal(world, operator)
    url = f"/api/preemptions/{proposal.pk}/"
    approved = admin_client_api.post(
        f"{url}approve/", {"reason": "urgent"}, format="json", **ZH
    )
    assert approved.status_code == 200, approved.json()
    count = len(proposal.victims)
    shown = operator_client.get(url, **ZH).json()
    if shown["state"] == ProposalState.APPROVED:
        assert shown["progress"] == f"已批准；待驱逐 {count} 个被抢占 Pod"
    else:  # the eviction ran at once: whatever it says, it says it in Chinese
        assert HAN.search(shown["progress"]), shown
    assert not HAN.search(operator_client.get(url).json()["progress"])


def test_a_row_written_before_keeps_showing_its_progress(
    world, operator, operator_client, fake_ops
):
    proposal = _proposal(world, operator)
    PreemptionProposal.objects.filter(pk=proposal.pk).update(
        progress="an old English text", progress_message={}
    )
    url = f"/api/preemptions/{proposal.pk}/"
    assert operator_client.get(url, **ZH).json()["progress"] == "an old English text"
    assert operator_client.get(url).json()["progress"] == "an old English text"


def _pod(name: str, foreign: bool, **more: object) -> dict[str, object]:
    return {
        "namespace": "ci",
        "pod": name,
        "node": "n1",
        "chips": [],
        "templates": ["vir01"],
        "memory": 1024,
        "priority": 0,
        "priority_class": "",
        "foreign": foreign,
        "request": None,
        "request_queue": None,
        "outcome": "evict",
        "pdbs": [],
        "approved": not foreign,
        **more,
    }


def _drain(world, victims: list[dict[str, object]]) -> Drain:
    return Drain.objects.create(
        cluster=world.cluster,
        scope=DrainScope.NODE,
        node="n1",
        victims=victims,
        reason="maintenance",
        **_first_state(victims),
    )


def test_a_drains_progress_follows_accept_language(
    world, operator_client, admin_client_api
):
    drain = _drain(world, [_pod("a", False), _pod("b", True), _pod("c", True)])
    assert drain.state == DrainState.PENDING
    url = f"/api/drains/{drain.pk}/"
    assert operator_client.get(url).json()["progress"] == (
        "1 portal pod(s) to evict; 2 foreign pod(s) wait for an admin's approval"
    )
    assert operator_client.get(url, **ZH).json()["progress"] == (
        "待驱逐 1 个门户 Pod；2 个外部 Pod 等待管理员批准"
    )
    rejected = admin_client_api.post(
        f"{url}reject/", {"reason": "keep them"}, format="json", **ZH
    )
    assert rejected.status_code == 200, rejected.json()
    assert rejected.json()["progress"] == "已拒绝；外部 Pod 继续运行"
    assert operator_client.get(url).json()["progress"] == (
        "rejected; the foreign pods keep running"
    )


def test_a_drains_joined_progress_joins_in_chinese_too(world, operator_client):
    left = [
        _pod("a", False, approved=True, blocked="Cannot evict pod"),
        _pod("b", False, approved=True, last_error="timeout"),
    ]
    unapproved = [_pod("c", True)]
    drain = _drain(world, [])
    set_progress(drain, _progress(left, unapproved))
    drain.save()
    url = f"/api/drains/{drain.pk}/"
    assert operator_client.get(url).json()["progress"] == (
        "waiting on a PodDisruptionBudget: ci/a: Cannot evict pod (retried); "
        "1 pod(s) not evicted yet (ci/b: timeout); retrying; "
        "1 foreign pod(s) wait for an admin's approval"
    )
    assert operator_client.get(url, **ZH).json()["progress"] == (
        "等待 PodDisruptionBudget 允许：ci/a: Cannot evict pod（将重试）；"
        "1 个 Pod 尚未驱逐（ci/b: timeout）；正在重试；"
        "1 个外部 Pod 等待管理员批准"
    )
