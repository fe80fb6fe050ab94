"""An operator publishes an edit that breaks a running pod, in the browser.

The guide's ``default/npu-pod-910b`` holds template vir05_1c_8g (8192 MB).
Resizing it breaks the pod: the Impact panel says this publish would break it, the
Publish button stays off until a checkbox naming the pod is ticked, and once
published the pod is listed as already broken by the published config, which
the next publish is not asked to confirm.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import login
from tests.guide import POD_910B
from tests.polling import wait_for

pytestmark = pytest.mark.browser

OPERATOR = ("otto", "otto-pw-123")


# Not vir01 and the 310P pod: test_portal.py leaves vir01 published at 3000 MB,
# which already breaks that pod (the portal is shared by the session).
TEMPLATE = "vir05_1c_8g"


def _live_memory(portal) -> int:
    text = portal.kubectl(
        "get", "cm", "hami-scheduler-device", "-n", "kube-system", "-o", "yaml"
    )
    return int(re.search(rf"name: {TEMPLATE}\n\s+memory: (\d+)", text).group(1))


def _set_memory(page, memory: int) -> None:
    row = page.get_by_test_id(f"template-row-{TEMPLATE}")
    row.locator("input[name=memory]").fill(str(memory))
    row.get_by_test_id("save-template").click()
    expect(page.get_by_test_id("saved")).to_contain_text(f"Saved template {TEMPLATE}")


def test_an_operator_names_the_pods_a_publish_breaks(page, portal, shot):
    portal.manage(
        "shell",
        "-c",
        "from django.contrib.auth import get_user_model;"
        "from apps.accounts.services import user_set_role;"
        f"u, _ = get_user_model().objects.get_or_create(username='{OPERATOR[0]}');"
        f"u.set_password('{OPERATOR[1]}'); u.save(); user_set_role(user=u, role='operator')",
    )
    login(page, portal, OPERATOR, path="/templates?type=Ascend910B4")
    expect(page.get_by_test_id("user")).to_contain_text("operator")

    # given an edit that resizes the template the running pod holds
    _set_memory(page, 9216)
    page.get_by_test_id("tab-publish").click()

    # then the Impact panel blames this publish for that pod
    breaks = page.get_by_test_id("impact-breaks")
    expect(breaks).to_contain_text("this publish would break")
    expect(breaks).to_contain_text(POD_910B)
    expect(breaks).to_contain_text("resized from 8192 MB to 9216 MB")

    # and the Publish button waits for a checkbox that names the template
    # (whichever pods run it when the publish lands) and the pods now
    page.get_by_test_id("publish-reason").fill("e2e: vir05 to 9 GiB")
    confirm = page.get_by_test_id("confirm-breaking")
    expect(page.locator("label", has=confirm)).to_contain_text(
        re.compile(
            r"Publish anyway: the running slices of Ascend910B4/vir05_1c_8g lose "
            r"their template, whichever pods run them when it lands \(\d+ pods? "
            r"now: .*" + POD_910B
        )
    )
    publish = page.get_by_test_id("publish")
    expect(publish).to_be_disabled()
    shot(page, "publish-breaking-confirm", full_page=True)
    assert _live_memory(portal) == 8192
    confirm.check()
    expect(publish).to_be_enabled()
    publish.click()
    expect(page.get_by_test_id("publish-result")).to_contain_text("Published v")
    wait_for(lambda: _live_memory(portal) == 9216, f"{TEMPLATE} at 9216 MB live")

    # then the pod is broken by the published config now, not by a next publish
    already = page.get_by_test_id("impact-already-broken")
    expect(already).to_contain_text("already broken by the published config")
    expect(already).to_contain_text(POD_910B)
    expect(page.get_by_test_id("impact-breaks")).to_have_count(0)
    expect(page.get_by_test_id("confirm-breaking")).to_have_count(0)
    shot(page, "publish-breaking-already", full_page=True)

    # and putting it back (the pod's size) publishes without a confirmation
    page.get_by_test_id("tab-edit").click()
    _set_memory(page, 8192)
    page.get_by_test_id("tab-publish").click()
    expect(page.get_by_test_id("impact-breaks")).to_have_count(0)
    page.get_by_test_id("publish-reason").fill("e2e: vir05 back to 8 GiB")
    page.get_by_test_id("publish").click()
    expect(page.get_by_test_id("publish-result")).to_contain_text("Published v")
    wait_for(lambda: _live_memory(portal) == 8192, f"{TEMPLATE} at 8192 MB live")
