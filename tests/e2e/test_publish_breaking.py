"""An operator publishes an edit that breaks a running pod, in the browser.

The guide's ``default/npu-pod-310p`` holds template vir01 (3072 MB). Resizing
vir01 breaks it: the Impact panel says this publish would break it, the
Publish button stays off until a checkbox naming the pod is ticked, and once
published the pod is listed as already broken by the published config, which
the next publish is not asked to confirm.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import login
from tests.guide import POD_310P
from tests.polling import wait_for

pytestmark = pytest.mark.browser

OPERATOR = ("otto", "otto-pw-123")


def _vir01_memory(portal) -> int:
    text = portal.kubectl(
        "get", "cm", "hami-scheduler-device", "-n", "kube-system", "-o", "yaml"
    )
    return int(re.search(r"name: vir01\n\s+memory: (\d+)", text).group(1))


def _set_vir01(page, memory: int) -> None:
    row = page.get_by_test_id("template-row-vir01")
    row.locator("input[name=memory]").fill(str(memory))
    row.get_by_test_id("save-template").click()
    expect(page.get_by_test_id("saved")).to_contain_text("Saved template vir01")


def test_an_operator_names_the_pods_a_publish_breaks(page, portal, shot):
    portal.manage(
        "shell",
        "-c",
        "from django.contrib.auth import get_user_model;"
        "from apps.accounts.services import user_set_role;"
        f"u, _ = get_user_model().objects.get_or_create(username='{OPERATOR[0]}');"
        f"u.set_password('{OPERATOR[1]}'); u.save(); user_set_role(user=u, role='operator')",
    )
    login(page, portal, OPERATOR, path="/templates?type=Ascend310P")
    expect(page.get_by_test_id("user")).to_contain_text("operator")

    # given an edit that resizes the template the running pod holds
    _set_vir01(page, 4096)
    page.get_by_test_id("tab-publish").click()

    # then the Impact panel blames this publish for that pod
    breaks = page.get_by_test_id("impact-breaks")
    expect(breaks).to_contain_text("this publish would break")
    expect(breaks).to_contain_text(POD_310P)
    expect(breaks).to_contain_text("resized from 3072 MB to 4096 MB")

    # and the Publish button waits for a checkbox that names the pod
    page.get_by_test_id("publish-reason").fill("e2e: vir01 to 4 GiB")
    confirm = page.get_by_test_id("confirm-breaking")
    expect(page.locator("label", has=confirm)).to_contain_text(
        re.compile(
            r"Publish anyway: \d+ running pods? loses? their template: .*" + POD_310P
        )
    )
    publish = page.get_by_test_id("publish")
    expect(publish).to_be_disabled()
    shot(page, "publish-breaking-confirm", full_page=True)
    assert _vir01_memory(portal) == 3072
    confirm.check()
    expect(publish).to_be_enabled()
    publish.click()
    expect(page.get_by_test_id("publish-result")).to_contain_text("Published v")
    wait_for(lambda: _vir01_memory(portal) == 4096, "vir01 at 4096 MB live")

    # then the pod is broken by the published config now, not by a next publish
    already = page.get_by_test_id("impact-already-broken")
    expect(already).to_contain_text("already broken by the published config")
    expect(already).to_contain_text(POD_310P)
    expect(page.get_by_test_id("impact-breaks")).to_have_count(0)
    expect(page.get_by_test_id("confirm-breaking")).to_have_count(0)
    shot(page, "publish-breaking-already", full_page=True)

    # and putting vir01 back (the pod's size) publishes without a confirmation
    page.get_by_test_id("tab-edit").click()
    _set_vir01(page, 3072)
    page.get_by_test_id("tab-publish").click()
    expect(page.get_by_test_id("impact-breaks")).to_have_count(0)
    page.get_by_test_id("publish-reason").fill("e2e: vir01 back to 3 GiB")
    page.get_by_test_id("publish").click()
    expect(page.get_by_test_id("publish-result")).to_contain_text("Published v")
    wait_for(lambda: _vir01_memory(portal) == 3072, "vir01 at 3072 MB live")
