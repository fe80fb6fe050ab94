"""A refused template edit answers in the language ``Accept-Language`` asks for:
the HAMi validator's messages translated, the status, code and fields unchanged
(docs/languages.md)."""

from __future__ import annotations

import re

import pytest

from apps.inventory.models import Template

pytestmark = pytest.mark.django_db

CJK = re.compile(r"[\u4e00-\u9fff]")


def _refused(client, template: Template, change: dict, language: str):
    return client.patch(
        f"/api/templates/{template.pk}/",
        change,
        format="json",
        HTTP_ACCEPT_LANGUAGE=language,
    )


@pytest.mark.parametrize(
    ("change", "field", "chinese"),
    [
        ({"memory": 0}, "memory", "Ascend310P 模板 vir02：memory 必须大于 0"),
        (
            {"memory": 30000},
            "memory",
            "Ascend310P 模板 vir02：memory 30000 MB 超过 memoryAllocatable 21527 MB",
        ),
        (
            {"name": "vir01"},
            "name",
            "Ascend310P 模板 vir01：名称 vir01 已被另一个模板使用",
        ),
    ],
)
def test_a_refused_template_edit_answers_in_chinese(
    operator_client, guide_cluster, change, field, chinese
):
    vir02 = Template.objects.get(
        chip_type__cluster=guide_cluster,
        chip_type__common_word="Ascend310P",
        name="vir02",
    )
    english = _refused(operator_client, vir02, change, "en")
    answer = _refused(operator_client, vir02, change, "zh-CN")
    en, zh = english.json(), answer.json()
    assert (answer.status_code, english.status_code) == (400, 400)
    assert zh["code"] == en["code"] == "invalid"
    assert zh["errors"].keys() == en["errors"].keys()
    assert field in zh["errors"]
    assert zh["errors"][field] == [chinese], zh
    assert zh["message"] == chinese
    # English by default: the same message, word for word as before
    assert not CJK.search(en["message"])
    assert en["errors"][field][0].startswith("Ascend310P template vir0")
    vir02.refresh_from_db()
    assert (vir02.name, vir02.memory) == ("vir02", 6144)


def test_the_fit_reason_follows_the_language(viewer_client, guide_cluster):
    url = f"/api/clusters/{guide_cluster.pk}/fit/"
    params = {"chip_type": "Ascend310P", "memory": 3000}
    en = viewer_client.get(url, params, HTTP_ACCEPT_LANGUAGE="en").json()
    zh = viewer_client.get(url, params, HTTP_ACCEPT_LANGUAGE="zh-CN").json()
    assert (zh["kind"], zh["template"], zh["memory"]) == (
        en["kind"],
        en["template"],
        en["memory"],
    )
    assert en["reason"] == "Ascend310P: 3000 MB fits template vir01 (3072 MB)"
    assert zh["reason"] == "Ascend310P：3000 MB 匹配模板 vir01（3072 MB）"
