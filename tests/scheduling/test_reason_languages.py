"""A request's reason reads in the reader's language (issue 34).

The passes, admission and reconciliation write it with no request, so it is
stored as the English text and its message (``apps.scheduling.texts``) and
rendered where the API answers; a reason that is a value (a person's words,
Kubernetes' own text) or a row written before has no message and shows as
it is.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.utils import translation

from apps.inventory.hami.messages import N_, Message
from apps.scheduling import states
from apps.scheduling.choices import RequestState
from apps.scheduling.models import PreemptionProposal, Request
from apps.scheduling.texts import set_text, text_shown
from tests.scheduling.helpers import run_pass
from tests.scheduling.stored_texts import sample_values, templates_of

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]
ZH = {"HTTP_ACCEPT_LANGUAGE": "zh-CN"}
HAN = re.compile(r"[\u4e00-\u9fff]")
CHINESE = re.compile(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]")

#: The files that write a request's reason (or a part of one).
WRITERS = (
    "apps/scheduling/admission.py",
    "apps/scheduling/allocation.py",
    "apps/scheduling/allocator/chipsearch.py",
    "apps/scheduling/allocator/reasons.py",
    "apps/scheduling/allocator/volcano_room.py",
    "apps/scheduling/decisions.py",
    "apps/scheduling/drain/evict.py",
    "apps/scheduling/eviction.py",
    "apps/scheduling/reconcile.py",
    "apps/scheduling/retries.py",
    "apps/scheduling/services/requests.py",
    "apps/scheduling/volcano.py",
)


TEMPLATES = templates_of(WRITERS)


def test_the_writers_reason_templates_are_found():
    assert "waiting for the next allocation pass" in TEMPLATES
    assert "no healthy %(chip_type)s chip has room for %(shape)s" in TEMPLATES
    assert "the pod failed before it ran: %(problem)s" in TEMPLATES
    assert len(TEMPLATES) >= 80


@pytest.mark.parametrize("template", TEMPLATES)
def test_each_reason_reads_in_chinese_with_its_values(template):
    values = sample_values(template)
    row = Request(reason="")
    set_text(row, "reason", Message(template, values))
    assert row.reason == template % values
    with translation.override("zh-hans"):
        shown = text_shown(row, "reason")
    assert shown != row.reason
    assert CHINESE.search(shown), shown
    for value in values.values():
        assert str(value) in shown
    with translation.override("en"):
        assert text_shown(row, "reason") == row.reason


def test_a_nested_reason_is_chinese_throughout():
    # A capacity reason with its preemption note: each part is a message.
    row = Request(reason="")
    set_text(
        row,
        "reason",
        N_(
            "%(reason)s; %(note)s",
            reason=N_("a whole card (%(memory)s MB)", memory=8192),
            note=N_("preemption is off"),
        ),
    )
    assert row.reason == "a whole card (8192 MB); preemption is off"
    with translation.override("zh-hans"):
        assert text_shown(row, "reason") == "整卡（8192 MB）；抢占已关闭"


def test_a_move_keeps_a_reasons_message_and_a_value_clears_it(world, operator):
    request = world.request(operator, template="vir02", memory=None)
    assert states.request_move(
        request.pk,
        from_states=[RequestState.PENDING],
        to=RequestState.PENDING,
        reason=N_("chip type %(chip_type)s is no longer configured", chip_type="X"),
    )
    request.refresh_from_db()
    assert request.reason == "chip type X is no longer configured"
    assert request.reason_message == {
        "text": "chip type %(chip_type)s is no longer configured",
        "params": {"chip_type": "X"},
    }
    states.request_move(
        request.pk,
        from_states=[RequestState.PENDING],
        to=RequestState.CANCELLED,
        reason="Back-off pulling image",
    )
    request.refresh_from_db()
    assert request.reason_message == {}
    with translation.override("zh-hans"):
        assert text_shown(request, "reason") == "Back-off pulling image"


def test_a_stale_message_is_not_shown_for_a_new_text(world, operator):
    # A writer that set only the text: the message says something else, so
    # the text is shown, not the old message in another language.
    request = world.request(operator, template="vir02", memory=None)
    set_text(request, "reason", N_("waiting for the next allocation pass"))
    request.reason = "something else"
    with translation.override("zh-hans"):
        assert text_shown(request, "reason") == "something else"


def _waiting_for_approval(world, operator) -> Request:
    (chip,) = world.chips("Ascend310P", 1)
    world.slice(chip, "big", "vir04", priority=100)
    world.slice(chip, "mid", "vir02", priority=1000)
    world.slice(chip, "small", "vir01", priority=1000)
    world.request(operator, template="vir04", memory=None, priority="inference-high")
    run_pass(world.cluster)
    return PreemptionProposal.objects.get().request


def test_a_waiting_requests_reason_follows_accept_language(
    world, operator, operator_client, fake_ops
):
    request = _waiting_for_approval(world, operator)
    url = f"/api/requests/{request.pk}/"
    english = operator_client.get(url).json()["reason"]
    assert english.startswith("waiting for an admin to approve preemption proposal")
    assert english == Request.objects.get(pk=request.pk).reason
    chinese = operator_client.get(url, **ZH).json()["reason"]
    assert chinese.startswith("等待管理员批准抢占提议"), chinese
    assert "（优先级 " in chinese
    listed = operator_client.get("/api/requests/", **ZH).json()["results"]
    assert [row["reason"] for row in listed if row["id"] == request.pk] == [chinese]


def test_a_capacity_reason_reads_in_chinese(world, operator, operator_client, fake_ops):
    (chip,) = world.chips("Ascend310P", 1)
    world.slice(chip, "big", "vir04", priority=100000)
    request = world.request(operator, template="vir04", memory=None)
    run_pass(world.cluster)
    url = f"/api/requests/{request.pk}/"
    english = operator_client.get(url).json()["reason"]
    chinese = operator_client.get(url, **ZH).json()["reason"]
    assert english.startswith("no healthy Ascend310P chip has room for vir04"), english
    assert chinese.startswith("没有健康的 Ascend310P 芯片放得下 vir04（"), chinese
    assert "；" in chinese
    assert not HAN.search(english)


def test_a_row_without_a_message_shows_its_reason(
    world, operator, operator_client, fake_ops
):
    request = world.request(operator, template="vir02", memory=None)
    Request.objects.filter(pk=request.pk).update(
        reason="written before reasons kept a message", reason_message={}
    )
    url = f"/api/requests/{request.pk}/"
    for headers in ({}, ZH):
        shown = operator_client.get(url, **headers).json()["reason"]
        assert shown == "written before reasons kept a message"
