"""The API and the commands answer in English or Simplified Chinese (docs/languages.md).

``Accept-Language`` picks the language of an error's ``message`` and of each
field's messages; the ``code``, the field names and the HTTP status are the
same in every language, so pipelines never depend on the text. The commands
follow the shell's ``LANGUAGE``/``LC_ALL``/``LC_MESSAGES``/``LANG``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command, get_commands, load_command_class
from django.core.management.base import CommandError

from apps.accounts.services import token_create, token_revoke, user_ensure
from apps.common.catalogs import catalog_problems, compile_catalog, locale_files
from apps.common.management.base import PortalCommand, cli_language

CJK = re.compile(r"[\u4e00-\u9fff]")
ENGLISH, CHINESE = "en", "zh-CN"


def _errors(client: Any, call: str, path: str, language: str, **body: Any) -> Any:
    return getattr(client, call)(
        path, body or None, format="json", HTTP_ACCEPT_LANGUAGE=language
    )


@pytest.fixture
def revoked_token(db: Any, admin_user: Any, ci_queue: Any) -> int:
    user = user_ensure(username="ci-bot", role="ci", is_service_account=True)
    issued = token_create(user=user, queues=["guide/ci"])
    token_revoke(token_id=issued.token.pk, actor=admin_user)
    return issued.token.pk


def _answers(
    language: str, api_client: Any, viewer_client: Any, admin_client: Any, token: int
) -> dict[str, Any]:
    """One answer of each kind, asked in ``language``."""
    return {
        # 400, DRF's own field messages
        "required": _errors(api_client, "post", "/api/auth/login/", language),
        # 400, the portal's own serializer message
        "duration": _errors(
            admin_client,
            "post",
            "/api/alerts/silences/",
            language,
            matchers={"alertname": "VnpuChipUnhealthy"},
            duration="soon",
            comment="x",
        ),
        # 401, the portal's domain error; 401, DRF's
        "credentials": _errors(
            api_client,
            "post",
            "/api/auth/login/",
            language,
            username="nobody",
            password="wrong",
        ),
        "anonymous": _errors(api_client, "get", "/api/clusters/", language),
        # 403, the role check
        "role": _errors(viewer_client, "post", "/api/queues/", language, name="q"),
        # 404, a domain error
        "cluster": _errors(
            viewer_client, "get", "/api/usage/chips/?cluster=999", language
        ),
        # 409, a domain error
        "rotate": _errors(
            admin_client, "post", f"/api/tokens/{token}/rotate/", language
        ),
    }


def test_the_language_changes_the_words_never_the_codes_or_fields(
    api_client: Any, viewer_client: Any, admin_client_api: Any, revoked_token: int
) -> None:
    english = _answers(
        ENGLISH, api_client, viewer_client, admin_client_api, revoked_token
    )
    chinese = _answers(
        CHINESE, api_client, viewer_client, admin_client_api, revoked_token
    )
    statuses = {name: answer.status_code for name, answer in english.items()}
    assert statuses == {
        "required": 400,
        "duration": 400,
        "credentials": 401,
        "anonymous": 401,
        "role": 403,
        "cluster": 404,
        "rotate": 409,
    }
    for name, en in english.items():
        zh = chinese[name]
        en_body, zh_body = en.json(), zh.json()
        assert zh.status_code == en.status_code, name
        assert zh_body["code"] == en_body["code"], name
        assert set(zh_body.get("errors", {})) == set(en_body.get("errors", {})), name
        assert en["Content-Language"] == "en", name
        assert zh["Content-Language"] == "zh-hans", name
        assert not CJK.search(en_body["message"]), (name, en_body)
        assert CJK.search(zh_body["message"]), (name, zh_body)
    assert english["required"].json()["errors"].keys() == {"username", "password"}
    assert chinese["required"].json()["errors"]["username"] == ["该字段是必填项。"]
    assert chinese["credentials"].json() == {
        "code": "invalid_credentials",
        "message": "用户名或密码错误。",
    }
    assert chinese["anonymous"].json()["message"] == "身份认证信息未提供。"
    assert chinese["role"].json()["message"] == "您的角色不允许此操作。"
    assert chinese["cluster"].json()["message"] == "集群 999 不存在"
    assert chinese["duration"].json()["errors"]["duration"] == [
        "请写作 <n>m、<n>h 或 <n>d，例如 2h"
    ]
    assert chinese["rotate"].json()["code"] == "token_not_live"


@pytest.mark.parametrize(
    ("header", "language"),
    [
        ("zh-CN,zh;q=0.9,en;q=0.8", "zh-hans"),
        ("zh-Hans", "zh-hans"),
        ("zh", "zh-hans"),
        ("zh-SG", "zh-hans"),
        ("zh-TW", "zh-hans"),  # Simplified is nearer than English
        ("en-US,en;q=0.9", "en"),
        ("fr-FR,de;q=0.5", "en"),  # neither: the default
        ("fr-FR,zh;q=0.5", "zh-hans"),
    ],
)
def test_accept_language_picks_the_answers_language(
    api_client: Any, db: Any, header: str, language: str
) -> None:
    answer = api_client.get("/api/clusters/", HTTP_ACCEPT_LANGUAGE=header)
    assert answer.status_code == 401
    assert answer["Content-Language"] == language
    assert "Accept-Language" in answer["Vary"]


def test_without_accept_language_the_api_answers_in_english(
    api_client: Any, db: Any
) -> None:
    answer = api_client.get("/api/clusters/")
    assert answer["Content-Language"] == "en"
    assert answer.json()["message"] == "Authentication credentials were not provided."


# --- the commands -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("environ", "language"),
    [
        ({"LANG": "zh_CN.UTF-8"}, "zh-hans"),
        ({"LC_ALL": "zh_CN.utf8", "LANG": "en_US.UTF-8"}, "zh-hans"),
        ({"LC_MESSAGES": "zh_SG", "LANG": "en_US.UTF-8"}, "zh-hans"),
        ({"LANGUAGE": "zh_CN:en", "LANG": "en_US.UTF-8"}, "zh-hans"),
        ({"LANGUAGE": "fr:zh_CN", "LANG": "en_US.UTF-8"}, "zh-hans"),
        ({"LANGUAGE": "en", "LANG": "zh_CN.UTF-8"}, "en"),
        ({"LANG": "C.UTF-8"}, "en"),
        ({"LC_ALL": "C", "LANG": "zh_CN.UTF-8"}, "en"),
        ({"LANG": "de_DE.UTF-8"}, "en"),
        ({}, "en"),
    ],
)
def test_the_shells_locale_picks_the_commands_language(
    environ: dict[str, str], language: str
) -> None:
    assert cli_language(environ) == language


def test_every_command_of_the_apps_speaks_the_shells_language() -> None:
    ours = {
        name: app for name, app in get_commands().items() if app.startswith("apps.")
    }
    assert {
        "cluster",
        "createtoken",
        "deviceconfig",
        "nodeconfig",
        "compile_locale",
    } <= set(ours)
    for name, app in ours.items():
        assert isinstance(load_command_class(app, name), PortalCommand), name


def test_a_command_answers_in_chinese_under_a_chinese_locale(
    db: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("LANGUAGE", "")
    monkeypatch.setenv("LANG", "zh_CN.UTF-8")
    with pytest.raises(CommandError, match="没有集群 'nope'"):
        call_command("cluster", "remove", "nope")
    # the domain error a service raised, in the same language
    with pytest.raises(CommandError, match="集群 'nope' 不存在"):
        call_command("inventory", "chips", "--cluster", "nope")
    monkeypatch.setenv("LANG", "en_US.UTF-8")
    with pytest.raises(CommandError, match="no cluster 'nope'"):
        call_command("cluster", "remove", "nope")


def test_a_commands_help_is_in_the_shells_language(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    command = load_command_class("apps.accounts", "createtoken")
    monkeypatch.setenv("LANGUAGE", "zh_CN")
    with pytest.raises(SystemExit):
        command.run_from_argv(["manage.py", "createtoken", "--help"])
    help_text = capsys.readouterr().out
    assert "并为其生成新的 API 令牌" in help_text
    assert "令牌的标签" in help_text
    assert "--queue" in help_text  # options keep their names


# --- the catalogs ---------------------------------------------------------------


def test_the_shipped_catalogs_are_complete() -> None:
    from django.conf import settings

    root = Path(settings.BASE_DIR)
    files = locale_files(root / "locale", ["zh_Hans"])
    assert files[0].po.exists()
    assert catalog_problems(root, files[0], check_mo=False) == []


def _tree(tmp_path: Path, code: str, po_body: str) -> Any:
    (tmp_path / "apps").mkdir()
    (tmp_path / "apps" / "m.py").write_text(code)
    files = locale_files(tmp_path / "locale", ["zh_Hans"])[0]
    files.po.parent.mkdir(parents=True)
    files.po.write_text(
        'msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=utf-8\\n"\n'
        '"Plural-Forms: nplurals=1; plural=0;\\n"\n\n' + po_body
    )
    return files


CODE = (
    "from django.utils.translation import gettext as _, gettext_lazy, ngettext, pgettext\n"
    "A = _('cluster %(name)s')\n"
    "B = gettext_lazy('queue')\n"
    "C = ngettext('%(n)d chip', '%(n)d chips', 2)\n"
    "D = pgettext('verb', 'drain')\n"
)
COMPLETE = (
    'msgid "cluster %(name)s"\nmsgstr "集群 %(name)s"\n\n'
    'msgid "queue"\nmsgstr "队列"\n\n'
    'msgid "%(n)d chip"\nmsgid_plural "%(n)d chips"\nmsgstr[0] "%(n)d 个芯片"\n\n'
    'msgctxt "verb"\nmsgid "drain"\nmsgstr "排空"\n'
)


def test_a_complete_catalog_passes_and_compiles(tmp_path: Path) -> None:
    files = _tree(tmp_path, CODE, COMPLETE)
    assert catalog_problems(tmp_path, files, check_mo=False) == []
    problems = catalog_problems(tmp_path, files, check_mo=True)
    assert len(problems) == 1
    assert "django.mo" in problems[0]
    assert compile_catalog(files) is True
    assert compile_catalog(files) is False  # current: not written again
    assert catalog_problems(tmp_path, files, check_mo=True) == []


@pytest.mark.parametrize(
    ("code", "po", "expected"),
    [
        (CODE + "E = _('new message')\n", COMPLETE, "missing msgid 'new message'"),
        (CODE.replace("B = gettext_lazy('queue')\n", ""), COMPLETE, "no longer used"),
        (CODE, COMPLETE.replace('msgstr "队列"', 'msgstr ""'), "untranslated 'queue'"),
        (
            CODE,
            COMPLETE.replace('msgid "queue"', '#, fuzzy\nmsgid "queue"'),
            "fuzzy 'queue'",
        ),
        (CODE, COMPLETE.replace("集群 %(name)s", "集群"), "placeholders"),
    ],
    ids=["missing", "obsolete", "untranslated", "fuzzy", "placeholder"],
)
def test_an_incomplete_catalog_fails_the_check(
    tmp_path: Path, code: str, po: str, expected: str
) -> None:
    files = _tree(tmp_path, code, po)
    problems = catalog_problems(tmp_path, files, check_mo=False)
    assert any(expected in line for line in problems), problems


def test_compile_locale_check_fails_on_a_stale_mo(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, settings: Any
) -> None:
    locale = tmp_path / "locale"
    source = (
        Path(settings.BASE_DIR) / "locale" / "zh_Hans" / "LC_MESSAGES" / "django.po"
    )
    target = locale / "zh_Hans" / "LC_MESSAGES"
    target.mkdir(parents=True)
    (target / "django.po").write_bytes(source.read_bytes())
    settings.LOCALE_PATHS = [locale]
    with pytest.raises(CommandError, match="problem"):
        call_command("compile_locale", "--check")
    call_command("compile_locale")
    call_command("compile_locale", "--check")


def test_a_translation_with_a_placeholder_too_many_fails_the_check(
    tmp_path: Path,
) -> None:
    po = COMPLETE.replace("集群 %(name)s", "集群 %(name)s %(other)s")
    files = _tree(tmp_path, CODE, po)
    problems = catalog_problems(tmp_path, files, check_mo=False)
    assert any("placeholders ['name', 'other']" in line for line in problems), problems


def test_answers_made_outside_drf_follow_the_header_too(
    api_client: Any, db: Any
) -> None:
    english = api_client.get("/api/no-such-endpoint/")
    chinese = api_client.get("/api/no-such-endpoint/", HTTP_ACCEPT_LANGUAGE="zh-CN")
    assert english.status_code == chinese.status_code == 404
    assert english.json() == {
        "code": "not_found",
        "message": "no API endpoint at /api/no-such-endpoint/",
    }
    assert chinese.json() == {
        "code": "not_found",
        "message": "没有此 API 端点：/api/no-such-endpoint/",
    }
    assert chinese["Content-Language"] == "zh-hans"
