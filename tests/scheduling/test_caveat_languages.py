"""A placement's caveat in the reader's language (apps/scheduling/caveats.py):
the allocator words it in English, the answer reads it back and words it again."""

from __future__ import annotations

import re

import pytest
from django.utils.translation import override

from apps.scheduling.allocator import reasons
from apps.scheduling.caveats import caveat_shown
from apps.scheduling.models import PreemptionProposal
from tests.scheduling.helpers import run_pass

HAN = re.compile("[\u4e00-\u9fff]")
ENGLISH = re.compile(r"\b(guaranteed|picks|which|instead|victims|unhealthy|index)\b")


def _caveat(*whys: str, freed: str = "") -> str:
    hazards = [
        reasons.hazard(f"UUID-{i} (index {i})", why) for i, why in enumerate(whys)
    ]
    text = reasons.unguaranteed("npu-node-910b-01", hazards)
    # as allocation._proposal_caveat stores a proposal's
    return f"{text}, instead of chip {freed} that its victims free" if freed else text


@pytest.mark.parametrize(
    "whys",
    [
        ("is unhealthy",),
        ("is cordoned", "the request excludes"),
        ("has 2 AICPU free, not 4", "is unhealthy", "is cordoned"),
    ],
)
def test_every_caveat_the_allocator_words_reads_in_chinese(whys):
    text = _caveat(*whys, freed="UUID-9 (index 9)")
    with override("zh-hans"):
        shown = caveat_shown(text)
    assert shown.startswith("无法保证：")
    assert HAN.search(shown)
    assert not ENGLISH.search(shown), shown
    # the names stay as they are
    assert "npu-node-910b-01" in shown
    assert "UUID-9（索引 9）" in shown
    assert all(f"UUID-{i}（索引 {i}）" in shown for i in range(len(whys)))


def test_in_english_a_caveat_reads_as_it_was_stored():
    text = _caveat("is unhealthy", "has 2 AICPU free, not 4")
    with override("en"):
        assert caveat_shown(text) == text
    assert caveat_shown(text) == text


def test_a_text_outside_the_grammar_is_shown_as_it_is():
    with override("zh-hans"):
        assert caveat_shown("something an older release wrote") == (
            "something an older release wrote"
        )
        odd = "not guaranteed: Volcano picks the chip on node n1 and may pick chip 3, which glows"
        assert caveat_shown(odd) == odd
        assert caveat_shown("") == ""


def test_the_aicpu_phrase_is_the_allocators_own():
    # chipsearch.py words it so: a change there must change caveats.py too
    import inspect

    from apps.scheduling.allocator import chipsearch

    source = inspect.getsource(chipsearch)
    for why in (
        'N_("is unhealthy")',
        'N_("is cordoned")',
        'N_("the request excludes")',
    ):
        assert why in source
    assert '"has %(free)s AICPU free, not %(need)s"' in source


@pytest.mark.django_db
def test_a_proposals_caveat_follows_accept_language(world, operator, operator_client):
    (chip,) = world.chips("Ascend310P", 1)
    world.slice(chip, "big", "vir04", priority=100)
    world.request(operator, template="vir04", memory=None, priority="inference-high")
    run_pass(world.cluster)
    proposal = PreemptionProposal.objects.get()
    stored = _caveat("is unhealthy", freed=f"{chip.uuid} (index 0)")
    PreemptionProposal.objects.filter(pk=proposal.pk).update(caveat=stored)
    url = f"/api/preemptions/{proposal.pk}/"
    assert operator_client.get(url).json()["caveat"] == stored
    shown = operator_client.get(url, HTTP_ACCEPT_LANGUAGE="zh-CN").json()["caveat"]
    assert shown.startswith("无法保证：")
    assert f"{chip.uuid}（索引 0）" in shown
