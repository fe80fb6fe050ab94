"""The chart's PrometheusRule (docs/alerts.md): the plain rules file's rules
with the chart's thresholds, rendered by helm.

In a module of their own: a module is one unit of work for the test workers
(tests/xdist_scopes.py), and the Helm tests run last, once the background
build has made helm. Beside the other alert-rule tests, a cold CI run's
worker waited 987 s for helm with nothing else to do (fresh-clone run f16).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.deploy.helmchart import render
from tests.deploy.test_alert_rules import RULES, _run, _tool


def _rule_groups(sets: dict[str, str], values: Path | None = None) -> list[dict]:
    objects = render(values, sets=sets)
    (rule,) = [o for o in objects if o["kind"] == "PrometheusRule"]
    assert rule["apiVersion"] == "monitoring.coreos.com/v1"
    return rule["spec"]["groups"]


@pytest.mark.helm
def test_the_chart_renders_no_rule_unless_enabled():
    assert not [o for o in render() if o["kind"] == "PrometheusRule"]


@pytest.mark.helm
def test_the_charts_rules_are_the_plain_file_at_the_defaults(tmp_path):
    # given the chart with its rule enabled and the placeholder's address
    groups = _rule_groups(
        {
            "prometheusRule.enabled": "true",
            "config.portalUrl": "https://vnpu.example.com",
        }
    )
    # then its rules are the plain file's, and promtool loads them
    assert groups == yaml.safe_load(RULES.read_text())["groups"]
    rendered = tmp_path / "rendered.rules.yml"
    rendered.write_text(yaml.safe_dump({"groups": groups}))
    _run(_tool("promtool"), "check", "rules", str(rendered))


@pytest.mark.helm
def test_chart_values_set_thresholds_links_and_switches(tmp_path):
    # (a values file: helm --set keeps 0.75 a string, which the schema refuses)
    values = tmp_path / "values.yaml"
    values.write_text(
        "alerts:\n"
        "  queueNearQuota: {enabled: true, threshold: 0.75, for: 30m}\n"
        "  idleSlices: {enabled: false, threshold: 0, for: 2h}\n"
    )
    groups = _rule_groups(
        {
            "prometheusRule.enabled": "true",
            "ingress.host": "npu.corp.example",
            "prometheusRule.runbookBaseUrl": "https://docs.corp.example/vnpu/",
        },
        values,
    )
    rules = {rule["alert"]: rule for rule in groups[0]["rules"]}
    assert "VnpuIdleSlices" not in rules
    quota = rules["VnpuQueueNearQuota"]
    assert quota["expr"] == (
        "max without (instance, pod) (vnpu_queue_quota_used_ratio) > 0.75"
    )
    assert quota["for"] == "30m"
    annotations = quota["annotations"]
    assert annotations["portal_url"] == (
        "https://npu.corp.example/queues?cluster={{ $labels.cluster }}"
    )
    assert annotations["runbook_url"] == (
        "https://docs.corp.example/vnpu/alerts.html#vnpuqueuenearquota"
    )
