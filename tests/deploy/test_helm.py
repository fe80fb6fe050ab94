"""The Helm chart: lint and render every variant (default and ci/*), check what it renders
against the plain manifests in deploy/ and the permission registry, and check that
bad values are refused by values.schema.json.

``helm`` is the one kubestack builds from its Go module (``python -m kubestack
build`` or ``build-tools``); without it these tests fail naming that command.
scripts/test.sh builds it last, beside the tests, so these run last.
"""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import environ
import pytest
import yaml

from apps.common.kube_permissions import cluster_role_rules, rule_atoms
from tests.deploy.helmchart import (
    CHART,
    CI_VALUES,
    NAMESPACE,
    helm,
    render,
    render_text,
)

pytestmark = pytest.mark.helm
ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
VARIANTS = [None, *CI_VALUES]
IDS = ["default", *(path.name.removesuffix("-values.yaml") for path in CI_VALUES)]


def _plain(kind: str, name: str) -> dict[str, Any]:
    for path in sorted(DEPLOY.glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            if doc and doc["kind"] == kind and doc["metadata"]["name"] == name:
                return doc
    raise AssertionError(f"no {kind} {name} in deploy/")


def _find(
    objects: list[dict[str, Any]], kind: str, suffix: str = ""
) -> list[dict[str, Any]]:
    return [
        o
        for o in objects
        if o["kind"] == kind and o["metadata"]["name"].endswith(suffix)
    ]


def _one(objects: list[dict[str, Any]], kind: str, suffix: str = "") -> dict[str, Any]:
    found = _find(objects, kind, suffix)
    assert len(found) == 1, (kind, suffix, [o["metadata"]["name"] for o in found])
    return found[0]


def _values(variant: Path | None) -> dict[str, Any]:
    """The values helm uses: the chart's defaults with the variant merged over them."""
    merged = yaml.safe_load((CHART / "values.yaml").read_text())

    def merge(base: dict[str, Any], over: dict[str, Any]) -> None:
        for key, value in over.items():
            if isinstance(value, dict) and isinstance(base.get(key), dict):
                merge(base[key], value)
            else:
                base[key] = value

    if variant is not None:
        merge(merged, yaml.safe_load(variant.read_text()))
    return merged


def _container(deployment: dict[str, Any]) -> dict[str, Any]:
    containers = deployment["spec"]["template"]["spec"]["containers"]
    assert len(containers) == 1
    return containers[0]


# --- lint and render -------------------------------------------------------------------


@pytest.mark.tools
@pytest.mark.parametrize("variant", VARIANTS, ids=IDS)
def test_helm_lint_is_clean(variant: Path | None):
    args = ["lint", str(CHART), "--strict", "--namespace", NAMESPACE]
    if variant is not None:
        args += ["-f", str(variant)]
    done = helm(*args)
    assert "0 chart(s) failed" in done.stdout, done.stdout


def test_there_are_ci_variants():
    assert {path.name for path in CI_VALUES} >= {
        "existing-secret-values.yaml",
        "ingress-values.yaml",
        "minimal-values.yaml",
        "oidc-values.yaml",
        "scaled-values.yaml",
    }


@pytest.mark.tools
@pytest.mark.parametrize("variant", VARIANTS, ids=IDS)
def test_every_variant_renders_the_portal(variant: Path | None):
    values = _values(variant)
    objects = render(variant)
    for obj in objects:
        if obj["kind"] not in ("ClusterRole", "ClusterRoleBinding"):
            assert obj["metadata"]["namespace"] == NAMESPACE, obj["metadata"]
        assert obj["metadata"]["labels"]["app.kubernetes.io/instance"] == "vnpu"
    for component in ("web", "worker", "beat"):
        deployment = _one(objects, "Deployment", f"-{component}")
        assert deployment["spec"]["replicas"] == values[component]["replicas"]
        container = _container(deployment)
        assert container["args"] == [component]
        assert container["image"] == "vnpuportal:0.1.0"
        assert container["resources"] == values[component]["resources"]
        assert container["resources"]["requests"]["memory"]
        assert container["resources"]["limits"]["memory"]
        pod = deployment["spec"]["template"]["spec"]
        assert pod["securityContext"]["runAsNonRoot"] is True
        assert container["securityContext"]["readOnlyRootFilesystem"] is True
        # the selector picks this component's pods only
        selector = deployment["spec"]["selector"]["matchLabels"]
        labels = deployment["spec"]["template"]["metadata"]["labels"]
        assert selector["app.kubernetes.io/component"] == component
        assert selector.items() <= labels.items()
    assert (
        _one(objects, "Deployment", "-beat")["spec"]["strategy"]["type"] == "Recreate"
    )
    service = _one(objects, "Service", "-web")
    assert service["spec"]["selector"]["app.kubernetes.io/component"] == "web"


@pytest.mark.tools
def test_the_default_matches_the_plain_manifests():
    """Probes, resources, security and mounts are those of deploy/30-50 (kept in step)."""
    objects = render()
    for component in ("web", "worker", "beat"):
        chart = _container(_one(objects, "Deployment", f"-{component}"))
        plain = _container(_plain("Deployment", f"vnpuportal-{component}"))
        for field in (
            "args",
            "readinessProbe",
            "livenessProbe",
            "resources",
            "securityContext",
            "volumeMounts",
            "ports",
        ):
            assert chart.get(field) == plain.get(field), (component, field)
        chart_pod = _one(objects, "Deployment", f"-{component}")["spec"]["template"]
        plain_pod = _plain("Deployment", f"vnpuportal-{component}")["spec"]["template"]
        assert (
            chart_pod["spec"]["securityContext"] == plain_pod["spec"]["securityContext"]
        )
        assert (
            chart_pod["spec"]["automountServiceAccountToken"]
            == plain_pod["spec"]["automountServiceAccountToken"]
        )
    web = _container(_one(objects, "Deployment", "-web"))
    assert web["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "http"}
    assert web["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "http"}
    assert "exec" in _container(_one(objects, "Deployment", "-worker"))["livenessProbe"]


@pytest.mark.tools
def test_settings_reach_the_pods():
    objects = render(CHART / "ci" / "scaled-values.yaml")
    config = _one(objects, "ConfigMap")["data"]
    assert config["WATCHED_DEPLOYMENTS"] == (
        "volcano/vc-scheduler,hami/hami-scheduler,hami/hami-webhook"
    )
    assert config["DEVICE_PLUGIN_DAEMONSET"] == "hami/ascend-device-plugin"
    assert config["VOLCANO_SCHEDULER_CONFIGMAP"] == "volcano/vc-scheduler-conf"
    assert config["WEB_CONCURRENCY"] == "2"
    assert config["CELERY_CONCURRENCY"] == "8"
    assert config["PREEMPTION_ENABLED"] == "false"
    assert config["SCHEDULING_PASS_SECONDS"] == "10"
    assert config["DJANGO_DEBUG"] == "false"
    assert config["PROMETHEUS_URL"] == "http://prometheus-operated.monitoring:9090"
    assert "PROMETHEUS_URL" not in _one(render(), "ConfigMap")["data"]
    # by default a web process per CPU of the pod (docker/entrypoint-web.sh)
    assert _one(render(), "ConfigMap")["data"]["WEB_CONCURRENCY"] == "auto"
    for component in ("web", "worker", "beat"):
        env_from = _container(_one(objects, "Deployment", f"-{component}"))["envFrom"]
        assert {"configMapRef": {"name": "vnpu-vnpu-portal"}} in env_from
        assert {"secretRef": {"name": "vnpu-vnpu-portal"}} in env_from
    job = _one(objects, "Job", "-register-cluster")
    assert job["metadata"]["annotations"]["helm.sh/hook"] == "post-install,post-upgrade"
    env = {e["name"]: e["value"] for e in _container_of_job(job)["env"]}
    assert env == {"CLUSTER_NAME": "prod-a", "DEVICE_CONFIG": "hami/hami-device-config"}


@pytest.mark.tools
def test_oidc_settings_and_the_client_secret_reach_the_web_pods():
    objects = render(CHART / "ci" / "oidc-values.yaml")
    config = _one(objects, "ConfigMap")["data"]
    assert config["LOCAL_LOGIN_ENABLED"] == "false"
    assert config["OIDC_ISSUER"] == "https://sso.example.org/realms/corp"
    assert config["OIDC_CLIENT_ID"] == "vnpu-portal"
    assert config["OIDC_SCOPES"] == "openid,profile,email,groups"
    assert config["OIDC_OPERATOR_GROUPS"] == "/npu-operators,/sre"
    assert config["OIDC_CI_GROUPS"] == ""
    assert config["OIDC_DEFAULT_ROLE"] == "none"
    assert "OIDC_CLIENT_SECRET" not in config  # never in the ConfigMap
    web = _container(_one(objects, "Deployment", "-web"))
    (secret,) = [e for e in web["env"] if e["name"] == "OIDC_CLIENT_SECRET"]
    assert secret["valueFrom"] == {
        "secretKeyRef": {"name": "vnpu-oidc", "key": "client-secret"}
    }
    assert "OIDC_CLIENT_SECRET" not in _one(objects, "Secret")["data"]
    # the web pods may reach the provider, and only there
    egress = _one(objects, "NetworkPolicy", "-egress")["spec"]["egress"]
    assert {
        "ports": [{"protocol": "TCP", "port": 443}],
        "to": [{"ipBlock": {"cidr": "10.30.0.0/16"}}],
    } in egress
    # off by default: nothing of it rendered; local passwords on
    plain = _one(render(), "ConfigMap")["data"]
    assert plain["LOCAL_LOGIN_ENABLED"] == "true"
    assert not [k for k in plain if k.startswith("OIDC_")]
    # a try-out's secret value goes to the generated Secret
    tried = render(
        sets={
            "signIn.oidc.enabled": "true",
            "signIn.oidc.issuer": "https://sso.example.org",
            "signIn.oidc.clientId": "portal",
            "signIn.oidc.clientSecret.value": "try-out",
        }
    )
    assert "OIDC_CLIENT_SECRET" in _one(tried, "Secret")["data"]
    web = _container(_one(tried, "Deployment", "-web"))
    assert not [e for e in web["env"] if e["name"] == "OIDC_CLIENT_SECRET"]


def _container_of_job(job: dict[str, Any]) -> dict[str, Any]:
    return job["spec"]["template"]["spec"]["containers"][0]


# --- RBAC ------------------------------------------------------------------------------


@pytest.mark.tools
def test_the_cluster_role_is_the_plain_least_privilege_role():
    role = _one(render(), "ClusterRole")
    plain = _plain("ClusterRole", "vnpuportal")
    assert role["rules"] == plain["rules"]
    assert role["rules"] == cluster_role_rules()
    binding = _one(render(), "ClusterRoleBinding")
    account = _one(render(), "ServiceAccount")
    assert binding["roleRef"]["name"] == role["metadata"]["name"]
    assert binding["subjects"] == [
        {
            "kind": "ServiceAccount",
            "name": account["metadata"]["name"],
            "namespace": NAMESPACE,
        }
    ]


@pytest.mark.tools
def test_the_cluster_role_follows_the_watched_cluster_names():
    """Other object names: the same grants, on those names and no others."""
    rename = {
        "hami-scheduler-device": "hami-device-config",
        "volcano-scheduler-configmap": "vc-scheduler-conf",
        "hami-ascend-device-plugin": "ascend-device-plugin",
        "volcano-scheduler": "vc-scheduler",
    }
    expected = {
        (group, resource, verb, rename.get(name, name))
        for group, resource, verb, name in rule_atoms(cluster_role_rules())
    }
    # a third watched Deployment gets what the others get
    expected |= {
        ("apps", "deployments", verb, "hami-webhook")
        for verb in ("get", "list", "patch", "watch")
    }
    role = _one(render(CHART / "ci" / "scaled-values.yaml"), "ClusterRole")
    assert rule_atoms(role["rules"]) == expected


# --- network ---------------------------------------------------------------------------


@pytest.mark.tools
def test_network_policies():
    objects = render()
    web = _one(objects, "NetworkPolicy", "-web")
    assert (
        web["spec"]["podSelector"]["matchLabels"]["app.kubernetes.io/component"]
        == "web"
    )
    (rule,) = web["spec"]["ingress"]
    assert rule["ports"] == [{"protocol": "TCP", "port": 8000}]
    assert rule["from"] == [
        {
            "namespaceSelector": {
                "matchLabels": {"kubernetes.io/metadata.name": "ingress-nginx"}
            }
        }
    ]
    closed = _one(objects, "NetworkPolicy", "-no-ingress")
    assert closed["spec"]["policyTypes"] == ["Ingress"]
    assert "ingress" not in closed["spec"]
    egress = _one(objects, "NetworkPolicy", "-egress")
    ports = {
        (p["protocol"], p["port"]) for r in egress["spec"]["egress"] for p in r["ports"]
    }
    assert ports == {
        ("UDP", 53),
        ("TCP", 53),
        ("TCP", 5432),
        ("TCP", 6379),
        ("TCP", 443),
        ("TCP", 6443),
    }
    # the scaled variant narrows the destinations
    scaled = _one(
        render(CHART / "ci" / "scaled-values.yaml"), "NetworkPolicy", "-egress"
    )
    tos = [r.get("to") for r in scaled["spec"]["egress"]]
    assert [{"ipBlock": {"cidr": "10.20.0.0/16"}}] in tos
    assert [{"ipBlock": {"cidr": "10.96.0.1/32"}}] in tos
    # with a Prometheus set, the portal may reach it (the usage pages), and only there
    (to_prometheus,) = [
        r
        for r in scaled["spec"]["egress"]
        if r["ports"] == [{"protocol": "TCP", "port": 9090}]
    ]
    assert to_prometheus["to"] == [
        {
            "namespaceSelector": {
                "matchLabels": {"kubernetes.io/metadata.name": "monitoring"}
            }
        }
    ]
    assert not _find(render(CHART / "ci" / "minimal-values.yaml"), "NetworkPolicy")


@pytest.mark.tools
def test_ingress_is_optional():
    assert not _find(render(), "Ingress")
    objects = render(CHART / "ci" / "ingress-values.yaml")
    ingress = _one(objects, "Ingress")
    assert ingress["spec"]["ingressClassName"] == "nginx"
    assert ingress["spec"]["tls"] == [
        {"hosts": ["npu.example.org"], "secretName": "npu-example-org-tls"}
    ]
    (rule,) = ingress["spec"]["rules"]
    backend = rule["http"]["paths"][0]["backend"]["service"]
    assert backend["name"] == _one(objects, "Service", "-web")["metadata"]["name"]
    assert _one(objects, "ConfigMap")["data"]["ALLOWED_HOSTS"] == "npu.example.org"


# --- secrets ---------------------------------------------------------------------------


@pytest.mark.tools
def test_a_generated_secret_holds_urls_django_reads_back():
    objects = render(CHART / "ci" / "ingress-values.yaml")
    data = {
        key: base64.b64decode(value).decode()
        for key, value in _one(objects, "Secret")["data"].items()
    }
    assert set(data) == {
        "DJANGO_SECRET_KEY",
        "DATABASE_URL",
        "REDIS_URL",
        "CACHE_URL",
        "METRICS_TOKEN",
    }
    assert len(data["DJANGO_SECRET_KEY"]) >= 50
    db = environ.Env.db_url_config(data["DATABASE_URL"])
    assert (db["HOST"], db["PORT"], db["NAME"], db["USER"], db["PASSWORD"]) == (
        "pg.databases.svc",
        5432,
        "vnpu",
        "vnpu",
        "s3cret/with:odd@chars",
    )
    assert data["REDIS_URL"] == "redis://:r3dis@redis.databases.svc:6379/0"
    assert data["CACHE_URL"] == "redis://:r3dis@redis.databases.svc:6379/1"
    assert data["METRICS_TOKEN"] == "scrape-me"


@pytest.mark.tools
def test_an_existing_secret_is_used_and_nothing_is_inlined():
    sentinels = {
        "postgresql.password": "PG-SENTINEL-4711",
        "redis.password": "REDIS-SENTINEL-4711",
        "secrets.metricsToken": "METRICS-SENTINEL-4711",
        "secrets.djangoSecretKey": "DJANGO-SENTINEL-" + "x" * 50,
    }
    variant = CHART / "ci" / "existing-secret-values.yaml"
    objects = render(variant, sentinels)
    assert not _find(objects, "Secret")
    refs = [
        ref["secretRef"]["name"]
        for obj in objects
        if obj["kind"] in ("Deployment", "Job")
        for ref in obj["spec"]["template"]["spec"]["containers"][0]["envFrom"]
        if "secretRef" in ref
    ]
    assert refs
    assert set(refs) == {"vnpu-portal-credentials"}
    text = render_text(variant, sentinels)
    for value in sentinels.values():
        assert value not in text
        assert base64.b64encode(value.encode()).decode()[:16] not in text
    # while without it the same values do end up in the generated Secret (the check can fail)
    assert (
        "PG-SENTINEL-4711"
        in base64.b64decode(
            _one(render(None, sentinels), "Secret")["data"]["DATABASE_URL"]
        ).decode()
    )


# --- bad values ------------------------------------------------------------------------

BAD_VALUES = [
    ({"beat.replicas": "2"}, "/beat/replicas"),
    ({"web.replicas": "-1"}, "/web/replicas"),
    ({"worker.concurrency": "0"}, "/worker/concurrency"),
    ({"web.concurrency": "0"}, "/web/concurrency"),
    ({"web.concurrency": "many"}, "/web/concurrency"),
    ({"web.readinessProbe.httpGet.path": "readyz"}, "/web/readinessProbe"),
    ({"web.resources.requests.memory": "lots"}, "/web/resources/requests/memory"),
    ({"postgresql.port": "70000"}, "/postgresql/port"),
    ({"redis.brokerDb": "16"}, "/redis/brokerDb"),
    ({"cluster.deviceConfig": "hami-scheduler-device"}, "/cluster/deviceConfig"),
    ({"cluster.watchedDeployments": "null"}, "watchedDeployments"),
    ({"config.logLevel": "LOUD"}, "/config/logLevel"),
    ({"secrets.djangoSecretKey": "short"}, "/secrets/djangoSecretKey"),
    ({"ingress.enabled": "true", "ingress.host": ""}, "/ingress/host"),
    ({"image.pullPolicy": "Sometimes"}, "/image/pullPolicy"),
    ({"webReplicas": "3"}, "webReplicas"),
    ({"web.replica": "3"}, "replica"),
    ({"prometheus.url": "prometheus:9090"}, "/prometheus/url"),
    ({"signIn.oidc.enabled": "true"}, "/signIn/oidc"),  # no issuer, client, secret
    ({"signIn.oidc.issuer": "sso.example.org"}, "/signIn/oidc/issuer"),
    ({"signIn.oidc.defaultRole": "root"}, "/signIn/oidc/defaultRole"),
    ({"signIn.oidc.scopes": "{profile}"}, "/signIn/oidc/scopes"),
]


@pytest.mark.tools
@pytest.mark.parametrize(("sets", "named"), BAD_VALUES, ids=[n for _, n in BAD_VALUES])
def test_bad_values_are_refused_by_the_schema(sets: dict[str, str], named: str):
    args = []
    for key, value in sets.items():
        args += ["--set", f"{key}={value}"]
    done = helm("template", "vnpu", str(CHART), *args, check=False)
    assert done.returncode != 0, f"{sets} was accepted"
    assert "schema" in done.stderr.lower(), done.stderr
    assert named in done.stderr, done.stderr
    lint = helm("lint", str(CHART), *args, check=False)
    assert lint.returncode != 0, f"helm lint accepted {sets}"


@pytest.mark.tools
def test_the_schema_accepts_the_defaults_it_documents():
    """Every key of values.yaml is described by the schema (none is left unchecked)."""
    import json

    schema = json.loads((CHART / "values.schema.json").read_text())
    values = yaml.safe_load((CHART / "values.yaml").read_text())
    assert schema["additionalProperties"] is False
    assert set(values) <= set(schema["properties"])
    for key, value in values.items():
        section = schema["properties"][key]
        if isinstance(value, dict) and section.get("additionalProperties") is False:
            assert set(value) <= set(section["properties"]), key


# --- how helm is built -------------------------------------------------------------------


def test_kubectl_helm_and_the_control_plane_have_their_own_cache_keys(
    tmp_path, monkeypatch
):
    """Bumping helm rebuilds neither kubectl nor the control plane, nor the
    reverse; kubectl follows the API server's version (both keys read the
    kubernetes module)."""
    import shutil

    from kubestack import build

    go = build.go_binary()
    gomod = tmp_path / "gomod"
    shutil.copytree(build.GOMOD, gomod)
    monkeypatch.setattr(build, "GOMOD", gomod)

    def keys() -> tuple[str, str, str]:
        return (
            build.cache_key(go),
            build.stage_folder(go, "kubectl").name,
            build.stage_folder(go, "helm").name,
        )

    plane, kubectl, helm = keys()
    assert kubectl.startswith("kubectl-v1.")
    assert helm.startswith("helm-v4.")
    with (gomod / "helm" / "go.mod").open("a") as handle:
        handle.write("\n// bumped\n")
    plane_now, kubectl_now, helm_now = keys()
    assert (plane_now, kubectl_now) == (plane, kubectl)
    assert helm_now != helm
    helm = helm_now
    with (gomod / "kwok" / "go.mod").open("a") as handle:
        handle.write("\n// bumped\n")
    plane_now, kubectl_now, helm_now = keys()
    assert plane_now != plane
    assert (kubectl_now, helm_now) == (kubectl, helm)
    plane = plane_now
    with (gomod / "kubernetes" / "go.mod").open("a") as handle:
        handle.write("\n// bumped\n")
    plane_now, kubectl_now, helm_now = keys()
    assert plane_now != plane
    assert kubectl_now != kubectl
    assert helm_now == helm
    assert build.tools_cache_root() != build.cache_root()
    assert build.tools_cache_root().parent == build.cache_root().parent


def test_kubestack_bin_puts_helm_on_the_path():
    import os
    import subprocess
    import sys

    from kubestack.build import cache_root as build_cache_root

    # --planned, as scripts/test.sh asks while the builds run beside the
    # tests: kubectl's folder, helm's, then the control plane's.
    done = subprocess.run(
        [sys.executable, "-m", "kubestack", "bin", "--planned"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    folders = done.stdout.strip().split(os.pathsep)
    assert len(folders) == 3
    assert (Path(folders[0]) / "kubectl").is_file()
    assert (Path(folders[1]) / "helm").is_file()
    assert Path(folders[2]).name == "bin"
    assert Path(folders[2]).parent.parent == build_cache_root()
