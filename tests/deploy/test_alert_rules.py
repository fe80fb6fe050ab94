"""The alert rules (docs/alerts.md): generated from one set of definitions,
loaded cleanly by promtool, each alert tested firing and not firing, each with
a runbook section; and the Alertmanager example accepted by amtool. The
chart's PrometheusRule: tests/deploy/test_alert_rules_chart.py.

promtool and amtool come with Debian's ``prometheus`` and
``prometheus-alertmanager`` (scripts/services.sh installs both under CI).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from django.core.management import call_command
from django.core.management.base import CommandError

from apps.common.alerting.definitions import ALERTS, DURATION
from apps.common.alerting.rules import chart_defaults, plain_rules
from tests.deploy.helmchart import CHART
from tests.requires import missing

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "deploy" / "prometheus" / "vnpu-alerts.rules.yml"
UNIT_TESTS = ROOT / "deploy" / "prometheus" / "tests" / "vnpu-alerts.test.yml"
ALERTMANAGER = ROOT / "deploy" / "alertmanager" / "alertmanager.example.yml"
DOCS = ROOT / "docs" / "alerts.md"


def _tool(name: str) -> str:
    found = shutil.which(name) or (
        f"/usr/bin/{name}" if Path(f"/usr/bin/{name}").exists() else None
    )
    if found is None:
        package = "prometheus-alertmanager" if name == "amtool" else "prometheus"
        missing(f"{name} is not installed (apt-get install {package})")
    return found


def _run(*args: str) -> str:
    done = subprocess.run(args, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, f"{' '.join(args)}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def test_the_generated_files_are_current():
    call_command("alert_rules", "--check")


def test_each_definition_is_well_formed():
    names = [alert.name for alert in ALERTS]
    assert len(set(names)) == len(names)
    for alert in ALERTS:
        assert re.fullmatch(r"Vnpu[A-Z][A-Za-z]+", alert.name), alert.name
        assert DURATION.match(alert.for_), alert
        assert alert.page.startswith("/"), alert
        assert not alert.increase_over or DURATION.match(alert.increase_over)


def test_every_alert_has_a_runbook_section_and_a_promtool_case():
    headings = set(re.findall(r"^### (Vnpu\w+)$", DOCS.read_text(), re.MULTILINE))
    tested = {case["name"] for case in yaml.safe_load(UNIT_TESTS.read_text())["tests"]}
    names = {alert.name for alert in ALERTS}
    assert headings == names
    # one case per alert, named after it, and cases about every rule (replicas)
    assert names <= tested
    assert all(not name.startswith("Vnpu") for name in tested - names)


def test_the_charts_values_hold_every_alert_at_its_default():
    values = yaml.safe_load((CHART / "values.yaml").read_text())
    assert values["alerts"] == chart_defaults()
    assert values["prometheusRule"]["enabled"] is False


def test_print_uses_the_portal_url(settings, capsys):
    settings.PORTAL_URL = "https://npu.corp.example"
    call_command("alert_rules")
    printed = capsys.readouterr().out
    assert printed == plain_rules("https://npu.corp.example")
    assert "https://npu.corp.example/preemptions?cluster=" in printed


def test_print_takes_a_short_for_and_a_threshold(capsys):
    # what the demo and the end-to-end test render: alerts in seconds, not minutes
    call_command(
        "alert_rules",
        "--portal-url=http://127.0.0.1:8000",
        "--for=1s",
        "--threshold=VnpuPreemptionAwaitingApproval=0",
    )
    rules = {
        rule["alert"]: rule
        for rule in yaml.safe_load(capsys.readouterr().out)["groups"][0]["rules"]
    }
    assert {rule["for"] for rule in rules.values()} == {"1s"}
    assert rules["VnpuPreemptionAwaitingApproval"]["expr"] == (
        "max without (instance, pod) "
        "(vnpu_preemption_proposal_oldest_pending_age_seconds) > 0"
    )
    assert rules["VnpuRequestsStuckPending"]["expr"].endswith("> 1800")
    for wrong in (["--for=soon"], ["--threshold=VnpuNoSuchAlert=1"]):
        with pytest.raises(CommandError):
            call_command("alert_rules", "--portal-url=http://x", *wrong)


@pytest.mark.prometheus
def test_promtool_loads_the_rules():
    out = _run(_tool("promtool"), "check", "rules", str(RULES))
    assert f"{len(ALERTS)} rules found" in out


@pytest.mark.prometheus
def test_promtool_unit_tests_fire_and_stay_quiet():
    # Each case: the alert absent before its `for`, then exactly the firing series.
    _run(_tool("promtool"), "test", "rules", str(UNIT_TESTS))


@pytest.mark.prometheus
def test_amtool_accepts_the_alertmanager_example():
    out = _run(_tool("amtool"), "check-config", str(ALERTMANAGER))
    assert "SUCCESS" in out
