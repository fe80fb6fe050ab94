"""The chart's rendered manifests, every variant, sent to the real kube-apiserver as a
server-side dry run: the server validates each object against its real schema
(strict field validation, as kubectl asks by default) and its admission, the
least-privilege ClusterRole included, and changes nothing.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from apps.common.kube_permissions import cluster_role_rules
from tests.deploy.conftest import DEPLOY
from tests.deploy.helmchart import CI_VALUES, NAMESPACE, render_text

pytestmark = [pytest.mark.realstack, pytest.mark.slow, pytest.mark.helm]
VARIANTS = [None, *CI_VALUES]
PROMETHEUS_RULE_CRD = (
    Path(__file__).resolve().parents[1]
    / "fixtures"
    / "crds"
    / "prometheusrules.monitoring.coreos.com.yaml"
)
IDS = ["default", *(path.name.removesuffix("-values.yaml") for path in CI_VALUES)]


@pytest.fixture
def namespace(kube_stack) -> str:
    # Namespaced objects are dry-run into a namespace that exists (restricted Pod Security).
    kube_stack.kubectl("apply", "-f", str(DEPLOY / "00-namespace.yaml"))
    return NAMESPACE


def _dry_run(kube_stack, path: Path) -> tuple[int, list[dict[str, Any]], str]:
    done = kube_stack.kubectl(
        "apply",
        "--server-side",
        "--dry-run=server",
        "--field-manager=vnpu-portal-chart-test",
        "-o",
        "json",
        "-f",
        str(path),
        check=False,
    )
    if done.returncode != 0:
        return done.returncode, [], done.stderr
    answer = json.loads(done.stdout)
    return 0, answer.get("items", [answer]), done.stderr


@pytest.mark.parametrize("variant", VARIANTS, ids=IDS)
def test_the_api_server_accepts_every_rendered_object(
    kube_stack, namespace, tmp_path, variant
):
    rendered = render_text(variant)
    sent = [doc for doc in yaml.safe_load_all(rendered) if doc]
    path = tmp_path / "rendered.yaml"
    path.write_text(rendered)
    code, accepted, errors = _dry_run(kube_stack, path)
    assert code == 0, errors
    assert sorted((o["kind"], o["metadata"]["name"]) for o in accepted) == sorted(
        (o["kind"], o["metadata"]["name"]) for o in sent
    )
    role = [o for o in accepted if o["kind"] == "ClusterRole"]
    assert len(role) == 1
    if variant is None:
        # the server's copy of the role is exactly the registry's least privilege
        assert role[0]["rules"] == cluster_role_rules()
    # a dry run: nothing was created
    for obj in sent:
        if obj["kind"] in ("ClusterRole", "Deployment", "Secret"):
            args = ["get", obj["kind"], obj["metadata"]["name"], "--ignore-not-found"]
            if obj["kind"] != "ClusterRole":
                args += ["-n", namespace]
            assert kube_stack.kubectl(*args).stdout.strip() == ""


def test_the_dry_run_does_refuse_an_invalid_object(kube_stack, namespace, tmp_path):
    """The check can fail: a mistyped field or a bad value in the chart would be caught."""
    docs = [doc for doc in yaml.safe_load_all(render_text()) if doc]
    web = next(
        d
        for d in docs
        if d["kind"] == "Deployment" and d["metadata"]["name"].endswith("-web")
    )
    web["spec"]["template"]["spec"]["containers"][0]["readinessProbe"]["httpGet"][
        "paht"
    ] = "/"
    path = tmp_path / "broken.yaml"
    path.write_text(yaml.safe_dump_all(docs))
    code, _, errors = _dry_run(kube_stack, path)
    assert code != 0
    assert "paht" in errors, errors

    role = next(d for d in docs if d["kind"] == "ClusterRole")
    web["spec"]["template"]["spec"]["containers"][0]["readinessProbe"]["httpGet"].pop(
        "paht"
    )
    role["rules"][0]["verbs"] = "get"  # a string where the schema wants a list
    path.write_text(yaml.safe_dump_all(docs))
    code, _, errors = _dry_run(kube_stack, path)
    assert code != 0, "a malformed ClusterRole was accepted"


@pytest.fixture
def prometheus_rule_crd(kube_stack) -> None:
    """The Prometheus Operator's PrometheusRule CRD, as a cluster running the
    operator has it (tests/fixtures/crds), established before the test."""
    kube_stack.kubectl("apply", "-f", str(PROMETHEUS_RULE_CRD))
    kube_stack.kubectl(
        "wait",
        "--for=condition=Established",
        "--timeout=60s",
        "crd/prometheusrules.monitoring.coreos.com",
    )


def test_the_charts_prometheus_rule_passes_the_servers_dry_run(
    kube_stack, namespace, prometheus_rule_crd, tmp_path
):
    # given the chart with its rule on, where the operator's CRD is installed
    rendered = render_text(sets={"prometheusRule.enabled": "true"})
    docs = [doc for doc in yaml.safe_load_all(rendered) if doc]
    (rule,) = [d for d in docs if d["kind"] == "PrometheusRule"]
    path = tmp_path / "rule.yaml"
    path.write_text(yaml.safe_dump(rule))
    # when the server dry-runs it, then it takes every alert as rendered
    code, accepted, errors = _dry_run(kube_stack, path)
    assert code == 0, errors
    alerts = [r["alert"] for g in accepted[0]["spec"]["groups"] for r in g["rules"]]
    assert alerts == [r["alert"] for g in rule["spec"]["groups"] for r in g["rules"]]
    assert len(alerts) >= 10
    # and it can fail: a misspelt key and a duration Prometheus cannot read
    rule["spec"]["groups"][0]["rules"][0]["fro"] = "5m"
    path.write_text(yaml.safe_dump(rule))
    code, _, errors = _dry_run(kube_stack, path)
    assert code != 0
    assert "fro" in errors, errors
    del rule["spec"]["groups"][0]["rules"][0]["fro"]
    rule["spec"]["groups"][0]["rules"][0]["for"] = "5 minutes"
    path.write_text(yaml.safe_dump(rule))
    code, _, errors = _dry_run(kube_stack, path)
    assert code != 0
    assert "for" in errors, errors


def test_install_and_upgrade_keep_the_generated_secret_key(
    kube_stack, namespace, stack_kubeconfig
):
    """A real ``helm install`` then ``helm upgrade``: the random Django key survives
    (a new one would log everyone out and make stored cluster tokens unreadable).
    No replicas and no hooks: only the objects, nothing scheduled."""
    import base64

    from tests.deploy.helmchart import CHART, helm

    release = "keytest"
    common = [
        "--namespace",
        namespace,
        "--kubeconfig",
        str(stack_kubeconfig),
        "--no-hooks",
        "--set",
        "web.replicas=0",
        "--set",
        "worker.replicas=0",
        "--set",
        "beat.replicas=0",
    ]

    def key() -> str:
        data = kube_stack.kubectl(
            "get", "secret", f"{release}-vnpu-portal", "-n", namespace, "-o", "json"
        ).stdout
        return base64.b64decode(json.loads(data)["data"]["DJANGO_SECRET_KEY"]).decode()

    try:
        helm("install", release, str(CHART), *common)
        first = key()
        assert len(first) >= 50
        helm("upgrade", release, str(CHART), *common, "--set", "config.logLevel=DEBUG")
        assert key() == first
        config = kube_stack.kubectl(
            "get", "configmap", f"{release}-vnpu-portal", "-n", namespace, "-o", "json"
        ).stdout
        assert json.loads(config)["data"]["LOG_LEVEL"] == "DEBUG"
    finally:
        helm(
            "uninstall",
            release,
            "--namespace",
            namespace,
            "--kubeconfig",
            str(stack_kubeconfig),
            check=False,
        )
