"""``vnpu`` without a portal: its arguments, exit codes, error lines and log
resumption, and its whole ``run`` against a scripted stand-in (fake_portal).

The same command against the real demo (simcluster, the portal, its worker)
is tests/e2e/test_ci_templates.py.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from vnpucli import exitcodes, i18n, show
from vnpucli.client import (
    Client,
    PortalError,
    accept_language,
    error_for,
    refusal_text,
)
from vnpucli.logs import LogPrinter, parse_timestamp, split_line
from vnpucli.main import main, parse
from vnpucli.run import request_body

ROOT = Path(__file__).resolve().parents[2]
RUN = [
    "run",
    "--cluster",
    "demo",
    "--namespace",
    "ci",
    "--queue",
    "ci",
    "--chip-type",
    "Ascend310P",
    "--memory",
    "5000",
    "--image",
    "ascend-pytorch:24.0",
]


# --- arguments ----------------------------------------------------------------


def test_run_takes_every_flag_and_the_command_after_the_double_dash():
    args = parse(
        [
            *RUN,
            "--priority",
            "batch-high",
            "--env",
            "EPOCHS=3",
            "--env",
            "NOTE=a=b",
            "--time-limit",
            "600",
            "--grace-seconds",
            "0",
            "--idempotency-key",
            "pipe-1",
            "--",
            "python",
            "train.py",
            "--epochs",
            "3",
        ]
    )
    assert request_body(args) == {
        "cluster": "demo",
        "namespace": "ci",
        "chip_type": "Ascend310P",
        "memory": 5000,
        "queue": "ci",
        "priority": "batch-high",
        "time_limit_seconds": 600,
        "idempotency_key": "pipe-1",
        "workload": {
            "image": "ascend-pytorch:24.0",
            "command": ["python", "train.py", "--epochs", "3"],
            "env": {"EPOCHS": "3", "NOTE": "a=b"},
            "grace_seconds": 0,
        },
    }


def test_template_or_whole_card_instead_of_memory(monkeypatch):
    base = [a for a in RUN if a not in ("--memory", "5000")]
    assert request_body(parse([*base, "--template", "vir04"]))["template"] == "vir04"
    body = request_body(parse([*base, "--whole-card"]))
    assert body["whole_card"] is True
    assert "memory" not in body
    assert "template" not in body
    # --env NAME alone passes this shell's value (and nothing when unset)
    monkeypatch.setenv("FROM_SHELL", "line 1\nline 2")
    monkeypatch.delenv("UNSET_HERE", raising=False)
    body = request_body(parse([*RUN, "--env", "FROM_SHELL", "--env", "UNSET_HERE"]))
    assert body["workload"]["env"] == {"FROM_SHELL": "line 1\nline 2"}
    assert "command" not in body["workload"]


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        ([*RUN, "--template", "vir02"], "not allowed with argument"),
        ([a for a in RUN if a not in ("--memory", "5000")], "one of the arguments"),
        (RUN[:3], "required"),
        (["logs", "7", "--", "ls"], "only `vnpu run` takes a command"),
        (["wait", "7", "--for", "bound"], "invalid choice"),
        (["logs", "x"], "not a whole number"),
        ([*RUN, "--env", "=v"], "NAME=VALUE"),
        ([*RUN, "--grace-seconds", "-1"], "must be 0 or more"),
        ([], "a command is needed"),
    ],
)
def test_usage_errors_exit_64_and_say_what(argv, said, capsys):
    with pytest.raises(SystemExit) as exit_:
        parse(argv)
    assert exit_.value.code == exitcodes.USAGE
    assert said in capsys.readouterr().err


def test_every_subcommand_has_a_help_that_says_what_it_does(capsys):
    for sub, words in [
        ("run", "exit with the job's exit code"),
        ("wait", "long-polling"),
        ("logs", "resumed without repeating"),
        ("release", "release its vNPU"),
        ("status", "its exit code"),
        ("ls", "List the requests"),
    ]:
        with pytest.raises(SystemExit) as exit_:
            parse([sub, "--help"])
        assert exit_.value.code == 0
        text = " ".join(capsys.readouterr().out.split())
        assert words in text, sub
    with pytest.raises(SystemExit):
        parse(["--help"])
    text = capsys.readouterr().out
    for code, _ in exitcodes.TABLE:
        assert f"  {code} " in text


def test_no_url_is_a_usage_error_and_no_token_an_auth_error(monkeypatch, capsys):
    monkeypatch.delenv("VNPU_URL", raising=False)
    monkeypatch.delenv("VNPU_TOKEN", raising=False)
    assert main(["status", "7"]) == exitcodes.USAGE
    assert "VNPU_URL" in capsys.readouterr().err
    assert main(["--url", "http://127.0.0.1:9", "status", "7"]) == exitcodes.AUTH
    assert "VNPU_TOKEN" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("environ", "header"),
    [
        ({"LANG": "zh_CN.UTF-8"}, "zh-CN"),
        ({"LC_ALL": "zh_CN.utf8", "LANG": "en_US.UTF-8"}, "zh-CN"),
        ({"LANGUAGE": "zh_CN:en", "LANG": "C"}, "zh-CN, en;q=0.9"),
        ({"LANGUAGE": "", "LANG": "en_US.UTF-8"}, "en-US"),
        ({"LANG": "C.UTF-8"}, None),
        ({}, None),
    ],
)
def test_the_shells_language_goes_to_the_portal_as_accept_language(environ, header):
    assert accept_language(environ) == header


def test_each_call_asks_for_the_shells_language(monkeypatch):
    client = Client("http://portal", "vnp_x")
    for variable in ("LANGUAGE", "LC_ALL", "LC_MESSAGES"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("LANG", "zh_CN.UTF-8")
    asked = client._request("GET", "http://portal/api/requests/7/")
    assert asked.get_header("Accept-language") == "zh-CN"
    monkeypatch.setenv("LANG", "C")
    asked = client._request("GET", "http://portal/api/requests/7/")
    assert asked.get_header("Accept-language") is None


# --- exit codes and error lines -------------------------------------------------


@pytest.mark.parametrize(
    ("request_", "code"),
    [
        ({"state": "succeeded", "exit_code": 0}, 0),
        ({"state": "succeeded", "result": {"exit_code": 0, "reason": "Completed"}}, 0),
        ({"state": "failed", "result": {"exit_code": 3, "reason": "Error"}}, 3),
        ({"state": "failed", "exit_code": 137, "result": {"reason": "OOMKilled"}}, 137),
        # the time limit wins over the code of the killed container
        (
            {
                "state": "expired",
                "result": {"exit_code": 137, "reason": "DeadlineExceeded"},
            },
            124,
        ),
        ({"state": "expired", "running_at": "2026-12-06T20:00:00Z"}, 124),
        # expired while pending: it never ran
        ({"state": "expired", "reason": "pending too long"}, 1),
        (
            {
                "state": "cancelled",
                "result": {"exit_code": None, "reason": "Cancelled"},
            },
            1,
        ),
        ({"state": "failed", "result": {"exit_code": None, "reason": "Evicted"}}, 1),
        ({"state": "failed", "result": {"exit_code": 0, "reason": "Preempted"}}, 1),
    ],
)
def test_a_finished_request_gives_the_jobs_exit_code(request_, code):
    got, why = exitcodes.job_result({"id": 7, **request_})
    assert got == code
    assert why.startswith("request 7 ")


def test_a_refusal_names_each_field_on_one_line():
    body = {
        "code": "invalid",
        "message": "workload.image: This field is required.",
        "errors": {
            "workload.image": ["This field is required."],
            "memory": ["must be\nbigger", "and even"],
        },
    }
    error = error_for(400, body, "the new request")
    assert error.exit_code == exitcodes.REFUSED
    assert error.message == (
        "the portal refused the new request (400): workload.image: This field is "
        "required.; memory: must be bigger and even"
    )
    # DRF's own nested shape, a bare detail, and text
    assert (
        refusal_text({"workload": {"image": ["required"]}})
        == "workload.image: required"
    )
    assert refusal_text({"detail": "Invalid token."}) == "Invalid token."
    assert refusal_text("<h1>Bad Gateway</h1>\n") == "<h1>Bad Gateway</h1>"


@pytest.mark.parametrize(
    ("status", "code", "transient"),
    [
        (409, exitcodes.REFUSED, False),
        (401, exitcodes.AUTH, False),
        (403, exitcodes.AUTH, False),
        (404, exitcodes.NOT_FOUND, False),
        (500, exitcodes.UNAVAILABLE, False),
        (503, exitcodes.UNAVAILABLE, True),
        (429, exitcodes.UNAVAILABLE, True),
    ],
)
def test_each_status_has_its_exit_code(status, code, transient):
    error = error_for(status, {"code": "x", "message": "said"}, "request 7")
    assert (error.exit_code, error.transient) == (code, transient)
    assert error.message.endswith(f"({status}): said")


def test_no_portal_there_is_unavailable_after_the_retries():
    slept: list[float] = []
    client = Client(
        "http://127.0.0.1:9", "vnp_unused", retry_seconds=3, sleep=slept.append
    )
    with pytest.raises(PortalError) as error:
        client.request(7)
    assert error.value.exit_code == exitcodes.UNAVAILABLE
    assert "cannot reach the portal at http://127.0.0.1:9" in error.value.message
    # the wait doubles; one that would end past the 3 s is not taken
    assert slept == [0.5, 1.0, 2.0]


# --- the log: timestamps and resuming -------------------------------------------


def test_timestamps_are_read_to_the_nanosecond():
    assert parse_timestamp("1970-01-01T00:00:01.000000001Z") == 1_000_000_001
    assert parse_timestamp("1970-01-01T01:00:00+01:00") == 0
    assert parse_timestamp("1970-01-01T00:00:00.5Z") == 500_000_000
    assert parse_timestamp("[vnpu-portal]") is None
    assert split_line("2026-12-06T20:00:00.123456789Z epoch 1 ") == (
        "2026-12-06T20:00:00.123456789Z",
        parse_timestamp("2026-12-06T20:00:00.123456789Z"),
        "epoch 1 ",
    )
    assert split_line("2026-12-06T20:00:00Z") == (
        "2026-12-06T20:00:00Z",
        split_line("2026-12-06T20:00:00Z")[1],
        "",
    )


def _lines(*pairs: tuple[str, str]) -> list[str]:
    return [f"2026-12-06T20:00:0{s}Z {text}" for s, text in pairs]


def test_a_resumed_read_prints_each_line_once():
    out = io.StringIO()
    printer = LogPrinter(out)
    log = _lines(
        ("0.000001100", "a"),
        ("0.000001200", "b"),
        ("0.000001200", "b"),  # the same text at the same time, twice
        ("0.000001200", "c"),
        ("1.5", "d"),
        ("2", "e"),
    )
    printer.begin_pass()
    for line in log[:3]:
        printer.accept(line)  # cut after the first "b" of .0000012
    assert printer.since_time() == "2026-12-06T20:00:00.000001200Z"
    # the resumed read starts at the microsecond: "a" and one "b" come again
    printer.begin_pass()
    for line in log:
        printer.accept(line)
    assert out.getvalue().splitlines() == ["a", "b", "b", "c", "d", "e"]


def test_a_resume_keeps_a_line_that_is_new_at_the_same_time():
    out = io.StringIO()
    printer = LogPrinter(out, timestamps=True)
    first, second = _lines(("0.1", "x"), ("0.1", "y"))
    printer.begin_pass()
    printer.accept(first)
    printer.begin_pass()
    printer.accept(first)
    printer.accept(second)
    printer.accept("[vnpu-portal] log truncated: kept the last 1 MiB")
    printer.begin_pass()  # a marker that comes again on a later read is dropped
    printer.accept("[vnpu-portal] log truncated: kept the last 1 MiB")
    assert out.getvalue().splitlines() == [
        first,
        second,
        "[vnpu-portal] log truncated: kept the last 1 MiB",
    ]


@pytest.fixture
def chinese():
    """vnpu speaking Chinese (its catalog is compiled by tests/conftest.py)."""
    i18n.activate({"LANG": "zh_CN.UTF-8"})
    yield
    i18n.activate({"LANG": "C"})


@pytest.mark.parametrize(
    ("environ", "locale"),
    [
        ({"LANG": "zh_CN.UTF-8"}, "zh_Hans"),
        ({"LANGUAGE": "zh_TW:en"}, "zh_Hans"),
        ({"LANGUAGE": "fr:zh_CN", "LANG": "C"}, "zh_Hans"),
        ({"LANGUAGE": "en:zh_CN"}, None),
        ({"LC_ALL": "C", "LANG": "zh_CN.UTF-8"}, None),
        ({}, None),
    ],
)
def test_the_shells_locale_picks_vnpus_language(environ, locale):
    assert i18n.catalog_locale(environ) == locale


def test_vnpu_speaks_chinese_under_a_chinese_locale(chinese, capsys):
    pending = {"id": 7, "state": "pending", "position": 2, "queue": "ci"}
    assert show.state_line({**pending, "reason": "Insufficient room"}) == (
        "申请 7 等待中（队列 ci 中第 2 位）：Insufficient room"
    )
    failed = {"id": 7, "state": "failed", "result": {"exit_code": 3, "reason": "Error"}}
    assert exitcodes.job_result(failed) == (3, "申请 7 失败：退出码 3（Error）")
    # the portal's own words (already in Chinese, by Accept-Language) stay as said
    error = error_for(409, {"code": "x", "message": "令牌已过期"}, "申请 7")
    assert error.message == "门户拒绝了申请 7（409）：令牌已过期"
    assert error.exit_code == exitcodes.REFUSED
    # a status's labels line up with two cells per Chinese character
    lines = show.status_text({"id": 7, "state": "running", "queue": "ci"}).splitlines()
    assert lines == ["申请: 7", "状态: running", "队列: ci"]
    with pytest.raises(SystemExit):
        parse(["--help"])
    assert "退出码：" in capsys.readouterr().out


def test_vnpu_speaks_english_by_default():
    i18n.activate({})
    assert show.state_line({"id": 7, "state": "reserved"}) == (
        "request 7 reserved: room booked"
    )
