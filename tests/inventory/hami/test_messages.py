"""A validator's message is its English text, carrying its template and values
so that the portal can say it again in the reader's language (docs/languages.md)."""

from __future__ import annotations

import copy
import dataclasses
import pickle

from apps.inventory.hami.messages import N_, Message
from apps.inventory.hami.validation import Issue, validate_configs

FAKE = {
    "%(chip_type)s: %(problem)s": "[%(chip_type)s] %(problem)s",
    "must be a string, not %(value)s": "not-a-string(%(value)s)",
    "the string %(value)r": "str<%(value)r>",
}


def _fake(text: str) -> str:
    return FAKE.get(text, text)


def test_a_message_is_its_english_text():
    said = N_("%(key)s must be at most %(most)d", key="memory", most=8)
    assert isinstance(said, str)
    assert said == "memory must be at most 8"
    assert f"{said}!" == "memory must be at most 8!"
    assert said.text == "%(key)s must be at most %(most)d"
    assert said.params == {"key": "memory", "most": 8}


def test_translation_reaches_the_messages_inside_the_values():
    inner = N_(
        "must be a string, not %(value)s", value=N_("the string %(value)r", value="8")
    )
    outer = N_("%(chip_type)s: %(problem)s", chip_type="Ascend310P", problem=inner)
    assert outer == "Ascend310P: must be a string, not the string '8'"
    assert outer.translated(_fake) == "[Ascend310P] not-a-string(str<'8'>)"


def test_a_message_without_values_is_its_template():
    assert N_("a list") == "a list"
    assert N_("a list").translated(lambda text: "列表") == "列表"


def test_copies_and_pickles_keep_the_template():
    said = N_("%(node)s registers no chips", node="n1")
    issue = Issue("nodes[0]", said)
    for copied in (
        copy.copy(said),
        copy.deepcopy(said),
        dataclasses.asdict(issue)["message"],
        pickle.loads(pickle.dumps(said)),  # noqa: S301 (our own bytes)
    ):
        assert isinstance(copied, Message)
        assert copied == said
        assert copied.translated(lambda t: f"<{t}>") == "<n1 registers no chips>"


def test_the_validators_messages_translate_as_a_whole():
    report = validate_configs(
        [
            {
                "chipName": "310P3",
                "commonWord": "Ascend310P",
                "resourceName": 8,
                "resourceMemoryName": "huawei.com/Ascend310P-memory",
                "memoryAllocatable": 21527,
                "memoryCapacity": 24576,
            }
        ]
    )
    (error,) = [e for e in report.errors if e.field == "vnpus[0].resourceName"]
    assert error.message == "Ascend310P: resourceName must be a string, not 8"
    assert isinstance(error.message, Message)
    assert (
        error.message.translated(_fake) == "[Ascend310P] resourceName not-a-string(8)"
    )
