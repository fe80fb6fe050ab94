"""The third probe's input findings (issue 39): each test failed before its fix.

Unicode spellings of a username around the sign-in throttle, usernames that
cannot be told apart, relative kubeconfig file names, the diff of two huge
versions, date-times and Volcano confs that raised 500s, the admin's Cluster
form, and ``extra`` keys that could not be removed.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import yaml
from django.conf import settings
from django.test import Client
from rest_framework.test import APIClient

from apps.accounts.services import token_create, user_ensure
from apps.common.exceptions import ValidationFailed
from apps.inventory.choices import ConnectionKind

pytestmark = pytest.mark.django_db


def _client(user) -> APIClient:
    client = APIClient()
    client.force_login(user)
    return client


# --- 1. the sign-in throttle and usernames -----------------------------------------


@pytest.fixture
def low_login_rate(settings):
    settings.THROTTLE_RATES = {**settings.THROTTLE_RATES, "login": "3/min"}


def _admin_form_login(client: Client, username: str, password: str):
    return client.post(
        "/admin/login/",
        {"username": username, "password": password, "next": "/admin/"},
        REMOTE_ADDR="10.0.0.1",
    )


@pytest.mark.parametrize(
    "spellings",
    [
        ("\uff41\uff44\uff41",) * 3,  # full-width
        ("\U0001d41ada", "a\U0001d41da", "ad\U0001d41a"),  # mathematical bold
        ("\uff21\uff24\uff21", "\U0001d41ada", "\uff41da"),  # mixed, upper case
    ],
)
def test_unicode_spellings_of_a_username_share_its_login_budget(
    spellings, low_login_rate, admin_user
):
    admin_user.is_staff = True
    admin_user.save()
    client = Client()
    # given three wrong passwords under spellings the admin's form reads as "ada"
    for name in spellings:
        assert _admin_form_login(client, name, "wrong").status_code == 200
    # then the right password, under the plain name, waits like any fourth guess
    assert _admin_form_login(client, "ada", "pw-ada").status_code == 429
    # and so does the API login
    api = APIClient()
    answer = api.post(
        "/api/auth/login/",
        {"username": "ada", "password": "pw-ada"},
        format="json",
        REMOTE_ADDR="10.0.0.1",
    )
    assert answer.status_code == 429


@pytest.mark.parametrize(
    "username",
    [
        "ci\u202egpj",  # right-to-left override
        "c\u200bi",  # zero-width space
        "c\u200ci",  # zero-width non-joiner
        "c\u200di",  # zero-width joiner
        "c\u2060i",  # word joiner
        "\ufeffci",  # byte-order mark
        "ci\u2066x",  # left-to-right isolate
        "ci🚀",  # emoji
        "ci\u2764\ufe0f",  # emoji with its variation selector
        "\uff41\uff44\uff4d\uff49\uff4e",  # full-width: signs in as "admin"
        "\U0001d41admin",  # mathematical bold: signs in as "admin"
        "ci bot",  # a space
    ],
)
def test_usernames_that_cannot_be_told_apart_are_refused(username, admin_user):
    from django.contrib.auth import get_user_model

    # through the service
    with pytest.raises(ValidationFailed) as refused:
        user_ensure(username=username, role="ci", is_service_account=True)
    assert "username" in refused.value.detail
    # through the API that creates service accounts: 400 naming the field
    response = _client(admin_user).post(
        "/api/tokens/",
        {"username": username, "role": "admin"},
        format="json",
    )
    assert response.status_code == 400, response.json()
    assert "username" in response.json()["errors"]
    # nothing was created
    assert not get_user_model().objects.filter(username=username).exists()


def test_createtoken_refuses_such_a_username():
    from django.contrib.auth import get_user_model
    from django.core.management import CommandError, call_command

    with pytest.raises(CommandError, match="username"):
        call_command("createtoken", "ci\u202ebot", role="admin")
    assert not get_user_model().objects.filter(username="ci\u202ebot").exists()


def test_ordinary_usernames_are_still_accepted():
    for name in ("ci", "gitlab-ci", "ops.bot", "team+ci@example.com", "zoë", "李雷"):
        assert user_ensure(username=name, role="viewer").get_username() == name


# --- 2. the diff of two versions ----------------------------------------------------


def _version(cluster, number: int, text: str):
    import hashlib

    from apps.inventory.models import DeviceConfigVersion

    return DeviceConfigVersion.objects.create(
        cluster=cluster,
        number=number,
        text=text,
        shape="list",
        source="imported",
        sha256=hashlib.sha256(text.encode()).hexdigest(),
    )


def _huge(prefix: str) -> str:
    # ~900 KB, different on every other line: difflib's worst case
    return "".join(
        f"  - name: {prefix if i % 2 else 'x'}{i:06d}-{'p' * 40}\n"
        for i in range(15_000)
    )


def test_the_diff_of_two_huge_versions_is_capped_and_cheap(guide_cluster, viewer):
    first = _version(guide_cluster, 100, _huge("a"))
    second = _version(guide_cluster, 101, _huge("b"))
    client = _client(viewer)
    started = time.process_time()
    response = client.get(
        f"/api/device-config-versions/{first.pk}/diff/?other={second.pk}"
    )
    spent = time.process_time() - started
    assert response.status_code == 200
    diff = response.json()["diff"]
    # a clear marker instead of the diff, decided by counting
    assert "diff not computed" in diff
    assert diff.startswith("--- v100\n+++ v101\n")
    assert spent < 1.0, f"{spent:.1f} s of CPU for one diff"


def test_a_version_diff_is_computed_once(guide_cluster, viewer, monkeypatch):
    from apps.inventory.deviceconfig import selectors

    first = _version(guide_cluster, 100, "a: 1\nb: 2\n")
    second = _version(guide_cluster, 101, "a: 1\nb: 3\n")
    calls = []
    real = selectors.text_diff

    def counted(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(selectors, "text_diff", counted)
    client = _client(viewer)
    url = f"/api/device-config-versions/{first.pk}/diff/?other={second.pk}"
    answers = [client.get(url).json()["diff"] for _ in range(3)]
    assert answers[0] == answers[1] == answers[2]
    assert "-b: 2\n+b: 3\n" in answers[0]
    assert len(calls) == 1


def test_small_diffs_are_unchanged():
    from apps.inventory.deviceconfig.selectors import text_diff

    assert text_diff("a\n", "a\n", before_label="x", after_label="y") == ""
    assert text_diff("a\n", "b\n", before_label="x", after_label="y") == (
        "--- x\n+++ y\n@@ -1 +1 @@\n-a\n+b\n"
    )


# --- 4. relative kubeconfig file names ----------------------------------------------


def _kubeconfig(user: dict, cluster: dict | None = None) -> str:
    return yaml.safe_dump(
        {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [
                {"name": "c", "cluster": cluster or {"server": "https://127.0.0.1:9"}}
            ],
            "users": [{"name": "u", "user": user}],
            "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
            "current-context": "x",
        }
    )


@pytest.mark.parametrize(
    ("user", "cluster"),
    [
        ({"tokenFile": "token"}, None),
        ({"tokenFile": "./pyproject.toml"}, None),
        ({"client-certificate": "cert.pem", "client-key": "key.pem"}, None),
        ({"token": "t"}, {"server": "https://h", "certificate-authority": "ca.pem"}),
    ],
)
def test_relative_file_names_in_a_kubeconfig_are_refused(
    user, cluster, admin_user, settings, tmp_path
):
    from apps.inventory.models import Cluster

    folder = tmp_path / "kubeconfigs"
    folder.mkdir()
    settings.KUBECONFIG_DIR = str(folder)
    for name in ("token", "cert.pem", "key.pem", "ca.pem"):
        (folder / name).write_text("inside")
    response = _client(admin_user).post(
        "/api/clusters/",
        {
            "name": "rel",
            "connection": ConnectionKind.KUBECONFIG,
            "kubeconfig": _kubeconfig(user, cluster),
        },
        format="json",
    )
    assert response.status_code == 400, response.json()
    assert "kubeconfig" in response.json()["errors"]
    assert "absolute" in response.json()["message"]
    assert not Cluster.objects.exists()


def test_a_stored_kubeconfig_with_a_relative_file_is_refused_at_load_time(
    viewer, settings, tmp_path, monkeypatch
):
    # A row written before the rule: the loader would read ./token from the
    # working directory and send its first line to the server as a token.
    from apps.common.crypto import encrypt
    from apps.inventory.models import Cluster

    folder = tmp_path / "kubeconfigs"
    folder.mkdir()
    settings.KUBECONFIG_DIR = str(folder)
    workdir = tmp_path / "cwd"
    workdir.mkdir()
    (workdir / "token").write_text("a-secret-of-the-server")
    monkeypatch.chdir(workdir)
    cluster = Cluster.objects.create(
        name="old",
        connection=ConnectionKind.KUBECONFIG,
        kubeconfig_encrypted=encrypt(_kubeconfig({"tokenFile": "token"})),
    )
    response = _client(viewer).get(f"/api/clusters/{cluster.pk}/drift/?live=true")
    assert response.status_code == 400
    assert "tokenFile" in response.json()["message"]


def test_absolute_file_names_inside_the_dir_are_still_accepted(
    admin_user, settings, tmp_path
):
    folder = tmp_path / "kubeconfigs"
    folder.mkdir()
    settings.KUBECONFIG_DIR = str(folder)
    (folder / "token").write_text("t")
    response = _client(admin_user).post(
        "/api/clusters/",
        {
            "name": "abs",
            "connection": ConnectionKind.KUBECONFIG,
            "kubeconfig": _kubeconfig({"tokenFile": str(folder / "token")}),
        },
        format="json",
    )
    assert response.status_code == 201, response.json()


# --- 5. three 500s ------------------------------------------------------------------


@pytest.mark.parametrize(
    "since",
    [
        "9999-12-31T23:59:59-23:59",  # year 10000 in UTC
        "0001-01-01T00:00:00+23:59",  # year 0 in UTC
    ],
)
def test_a_date_time_out_of_range_in_utc_is_a_400(since, admin_user):
    response = Client(raise_request_exception=False).get(
        "/api/audit-events/",
        QUERY_STRING=f"since={since.replace('+', '%2B')}",
        HTTP_AUTHORIZATION=f"Bearer {token_create(user=admin_user).plaintext}",
    )
    assert response.status_code == 400, response.content[:300]
    assert "since" in response.json()["errors"]


@pytest.mark.parametrize(
    ("conf", "verdict"),
    [
        # yaml.v2 reads a number past 64 bits as a string: such a conf is read
        (
            "tiers:\n- plugins:\n  - name: deviceshare\n    arguments:\n"
            "      deviceshare.ScheduleWeight: " + "1" * 5000 + "\n",
            "ok",
        ),
        ("a: -0x" + "f" * 5000, "ok"),
        # the others are reported as unreadable
        ("a: " + "[" * 5000 + "]" * 5000, "fail"),
        ("a: !!int " + "9" * 5000, "fail"),
        ("- " * 5000 + "x", "fail"),
    ],
    ids=["5000-digit-int", "hex", "nested-5000", "tagged-int", "block-nested"],
)
def test_a_volcano_conf_that_cannot_be_read_is_reported_not_a_500(
    conf, verdict, guide_cluster, viewer
):
    from apps.inventory.models import ClusterObject

    namespace, name = settings.VOLCANO_SCHEDULER_CONFIGMAP.split("/")
    ClusterObject.objects.create(
        cluster=guide_cluster,
        kind="ConfigMap",
        namespace=namespace,
        name=name,
        data={"data": {"volcano-scheduler.conf": conf}},
    )
    response = _client(viewer).get(f"/api/clusters/{guide_cluster.pk}/health/")
    assert response.status_code == 200
    checks = {c["id"]: c for c in response.json()["checks"]}
    assert checks["volcano_config"]["check_status"] == verdict


def test_a_huge_number_is_a_string_as_yaml_v2_reads_it():
    from apps.inventory.hami.goconf import load_go_yaml

    assert load_go_yaml("a: " + "1" * 5000) == {"a": "1" * 5000}
    assert load_go_yaml("a: 0x" + "0" * 30 + "ff") == {"a": 255}
    assert load_go_yaml("a: 18446744073709551615") == {"a": 2**64 - 1}
    assert load_go_yaml("a: 18446744073709551616") == {"a": 1.8446744073709552e19}


# --- 7. the Django admin's Cluster form ---------------------------------------------


def test_the_admin_cluster_form_neither_shows_nor_edits_the_kubeconfig(admin_user):
    from apps.common.crypto import encrypt
    from apps.inventory.models import Cluster

    admin_user.is_staff = True
    admin_user.is_superuser = True
    admin_user.save()
    cluster = Cluster.objects.create(
        name="kc",
        connection=ConnectionKind.KUBECONFIG,
        kubeconfig_encrypted=encrypt(_kubeconfig({"token": "secret-token"})),
    )
    stored = cluster.kubeconfig_encrypted
    client = Client()
    client.force_login(admin_user)
    page = client.get(f"/admin/inventory/cluster/{cluster.pk}/change/")
    assert page.status_code == 200
    assert "kubeconfig_encrypted" not in page.content.decode()
    assert stored not in page.content.decode()
    # a form post carrying the field does not change it
    form = page.context["adminform"].form
    data = {
        key: ("" if value is None else value)
        for key, value in form.initial.items()
        if key in form.fields
    }
    data["kubeconfig_encrypted"] = "forged"
    client.post(f"/admin/inventory/cluster/{cluster.pk}/change/", data)
    cluster.refresh_from_db()
    assert cluster.kubeconfig_encrypted == stored


# --- 8. removing an extra key -------------------------------------------------------


EXTRA_FIXTURE = Path(__file__).resolve().parents[1] / "fixtures"


def _with_extras() -> str:
    text = (EXTRA_FIXTURE / "device-config-list.yaml").read_text()
    # a published config whose 310P entry and its first template hold extra keys
    return text.replace(
        "  commonWord: Ascend310P\n",
        "  commonWord: Ascend310P\n  memoryFactor: 2\n  superPod: false\n",
        1,
    )


def test_an_extra_key_once_published_can_be_removed(operator):
    from apps.inventory.deviceconfig.services import deviceconfig_import
    from apps.inventory.models import ChipType, Cluster

    deviceconfig_import(cluster_name="guide", text=_with_extras())
    cluster = Cluster.objects.get(name="guide")
    chip_type = ChipType.objects.get(cluster=cluster, common_word="Ascend310P")
    assert chip_type.extra == {"memoryFactor": 2, "superPod": False}
    client = _client(operator)
    # when the editor removes memoryFactor (null) and keeps superPod
    response = client.patch(
        f"/api/chip-types/{chip_type.pk}/",
        {"extra": {"memoryFactor": None, "superPod": False}},
        format="json",
    )
    assert response.status_code == 200, response.json()
    # then what the portal would publish no longer holds it
    rendered = client.get(f"/api/clusters/{cluster.pk}/device-config/").json()
    assert "memoryFactor" not in rendered["yaml"]
    assert "superPod: false" in rendered["yaml"]
    assert "-  memoryFactor: 2\n" in rendered["diff_from_base"]


def test_a_template_extra_key_can_be_removed(operator):
    from apps.inventory.deviceconfig.services import deviceconfig_import
    from apps.inventory.models import Cluster, Template

    text = (EXTRA_FIXTURE / "device-config-list.yaml").read_text()
    text = text.replace(
        "  - name: vir05_1c_8g\n", "  - name: vir05_1c_8g\n    futureKey: x\n", 1
    )
    deviceconfig_import(cluster_name="guide", text=text)
    cluster = Cluster.objects.get(name="guide")
    template = Template.objects.get(chip_type__cluster=cluster, name="vir05_1c_8g")
    assert template.extra == {"futureKey": "x"}
    client = _client(operator)
    response = client.patch(
        f"/api/templates/{template.pk}/", {"extra": {"futureKey": None}}, format="json"
    )
    assert response.status_code == 200, response.json()
    rendered = client.get(f"/api/clusters/{cluster.pk}/device-config/").json()
    assert "futureKey" not in rendered["yaml"]
