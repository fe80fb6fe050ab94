"""Shared fixtures: the simulator, users of each role, API clients, the fixture files."""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

TESTS = Path(__file__).resolve().parent
FIXTURES = TESTS / "fixtures"
# The background build's stages done when the run started, as the controller
# saw them (pytest_configure).
STAGES_BUILT_ENV = "VNPU_TEST_STAGES_BUILT"

# The lanes (docs/testing.md) are chosen by markers of what a test needs. They
# are set here, by folder and by fixture, so that a new test lands in the right
# lane without anyone remembering to mark it; a test marks itself only for what
# cannot be seen from outside (``slow``, ``processes``, ``tools`` without the
# ``kubectl`` fixture).
MARK_BY_FOLDER = {
    "e2e": "browser",
    "realstack": "realstack",
    "faults": "faults",
}
MARK_BY_FIXTURE = {
    "page": "browser",
    "browser": "browser",
    "prometheus": "prometheus",
    "alertmanager": "prometheus",
    "redis_layer": "redis",
    "kubectl": "tools",
    "hydra_server": "oidc",
    "hydra": "oidc",
}
# A test that calls ``missing()`` unless the database is PostgreSQL needs it.
POSTGRES_ONLY = 'connection.vendor != "postgresql"'
# Pods start and stop quickly and bookmarks come often, so tests do not wait
# on the simulator's realistic delays.
FAST_SIM: dict[str, Any] = {
    "ready_delay": 0.1,
    "pod_shutdown_seconds": 0.3,
    "bookmark_interval": 0.5,
}


def _marks_of(item: pytest.Item) -> set[str]:
    marks: set[str] = set()
    try:
        folder = Path(item.path).resolve().relative_to(TESTS).parts[0]
    except ValueError:
        folder = ""
    if folder in MARK_BY_FOLDER:
        marks.add(MARK_BY_FOLDER[folder])
    fixtures = set(getattr(item, "fixturenames", ()))
    marks |= {mark for name, mark in MARK_BY_FIXTURE.items() if name in fixtures}
    function = getattr(item, "function", None)
    if function is not None:
        try:
            source = inspect.getsource(function)
        except (OSError, TypeError):
            source = ""
        if POSTGRES_ONLY in source:
            marks.add("postgres")
    return marks


def _mark_needs(items: list[pytest.Item]) -> None:
    """Mark each test with what it needs (see MARK_BY_FOLDER)."""
    for item in items:
        for mark in sorted(_marks_of(item) - {m.name for m in item.iter_markers()}):
            item.add_marker(mark)


@pytest.fixture(autouse=True)
def _portal_celery_app_stays_current() -> Iterator[None]:
    """Fail the test that leaves another Celery app current.

    The portal's tasks are ``shared_task``s: they send through whichever app
    is current. A test that made its own app current (``Celery(...)`` without
    ``set_as_current=False``) sent every later task of its xdist worker to its
    private Redis, which was gone by then: connection refused, far from the
    cause."""
    yield
    from celery import current_app

    from vnpuportal.celery import app

    assert current_app._get_current_object() is app, (
        f"this test left Celery app {current_app.main!r} current: create "
        "other apps with set_as_current=False"
    )


@pytest.fixture(autouse=True)
def _english_after_each_test() -> Iterator[None]:
    """Each test starts in the portal's source language: a request with
    ``Accept-Language: zh-CN`` leaves Chinese active in its thread
    (LocaleMiddleware activates, nothing deactivates), and the next test of
    that worker would read its texts in Chinese."""
    yield
    from django.utils import translation

    translation.deactivate()


@pytest.fixture
def sim_factory() -> Iterator[Callable[..., Any]]:
    """Start simulated clusters (``FAST_SIM`` plus the options given); all are
    stopped after the test."""
    from simcluster.server import SimCluster

    started: list[SimCluster] = []

    def make(scenario: str = "guide", **options: Any) -> SimCluster:
        cluster = SimCluster(scenario=scenario, port=0, **{**FAST_SIM, **options})
        cluster.start()
        started.append(cluster)
        return cluster

    yield make
    for cluster in started:
        cluster.stop()


@pytest.fixture
def sim_options() -> dict[str, Any]:
    """Options of ``sim`` (a module or test overrides this fixture)."""
    return {}


@pytest.fixture
def sim(sim_factory: Callable[..., Any], sim_options: dict[str, Any]) -> Any:
    """The ``guide`` scenario: a 310P node (4 chips) and a 910B4 node (8 chips)."""
    return sim_factory(**sim_options)


@pytest.fixture
def synced(sim: Any, tmp_path: Path, db: Any) -> Any:
    """Cluster ``sim`` (the ``sim`` fixture's scenario) registered and synced once."""
    from django.core.management import call_command

    from apps.inventory.choices import ConnectionKind
    from apps.inventory.services import cluster_create

    kubeconfig = sim.write_kubeconfig(tmp_path / "kubeconfig")
    cluster = cluster_create(
        actor=None,
        name="sim",
        connection=ConnectionKind.KUBECONFIG,
        kubeconfig=Path(kubeconfig).read_text(),
    )
    call_command("sync", "--cluster", "sim", "--once")
    return cluster


@pytest.fixture
def fixtures_dir() -> Path:
    return FIXTURES


def _user(django_user_model, username: str, role: str):
    from apps.accounts.services import user_set_role

    user = django_user_model.objects.create_user(
        username=username, password="pw-" + username
    )
    user_set_role(user=user, role=role)
    return user


@pytest.fixture
def viewer(db, django_user_model):
    return _user(django_user_model, "vera", "viewer")


@pytest.fixture
def operator(db, django_user_model):
    return _user(django_user_model, "otto", "operator")


@pytest.fixture
def admin_user(db, django_user_model):
    return _user(django_user_model, "ada", "admin")


@pytest.fixture
def ci_queue(db):
    """Queue ``ci`` (open to all) of a cluster ``guide``: a non-admin token must
    name the queues it is limited to, so tests of tokens need one."""
    from apps.inventory.models import Cluster
    from apps.scheduling.models import Queue

    cluster, _ = Cluster.objects.get_or_create(name="guide")
    queue, _ = Queue.objects.get_or_create(
        cluster=cluster, name="ci", defaults={"open_to_all": True}
    )
    return queue


# APIClient is imported inside the fixtures: the pure packages' tests
# (simcluster, the allocator, the HAMi formats) run without Django too.


@pytest.fixture
def api_client():
    from rest_framework.test import APIClient

    return APIClient()


def _client_for(user):
    from rest_framework.test import APIClient

    client = APIClient()
    client.force_authenticate(user=user)
    return client


@pytest.fixture
def viewer_client(viewer):
    return _client_for(viewer)


@pytest.fixture
def operator_client(operator):
    return _client_for(operator)


@pytest.fixture
def admin_client_api(admin_user):
    return _client_for(admin_user)


@pytest.fixture
def guide_cluster(db):
    """Cluster ``guide`` with the guide's device config (list shape) imported."""
    from apps.inventory.deviceconfig.services import deviceconfig_import

    deviceconfig_import(
        cluster_name="guide", text=(FIXTURES / "device-config-list.yaml").read_text()
    )
    from apps.inventory.models import Cluster

    return Cluster.objects.get(name="guide")


@pytest.fixture
def prometheus_options() -> dict[str, Any]:
    """Options of ``prometheus`` (``scrape_interval`` in s; a module or test
    overrides this fixture)."""
    return {}


@pytest.fixture
def prometheus(
    sim: Any,
    prometheus_options: dict[str, Any],
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Any]:
    """A real Prometheus scraping ``sim``'s npu-exporters (every second unless
    ``prometheus_options`` says otherwise), started and scraped once (``.url``,
    ``.query(expr)``, ``.wait_until(expr)``; see harness/prometheus.py). Its log is
    added to a failed test's report."""
    from harness.prometheus import Prometheus, binary
    from tests.requires import missing

    if binary() is None:
        missing("prometheus is not installed (apt-get install prometheus)")
    server = Prometheus(
        sim, tmp_path_factory.mktemp("prometheus"), **prometheus_options
    )
    try:
        server.start()
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def hydra_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A real OpenID provider (ORY Hydra, built by kubestack) with its login
    app, for the whole run: started once (its keys take seconds to make)."""
    from harness.hydra import Directory, Hydra
    from kubestack.build import BuildError, hydra_bin_dir
    from tests.requires import missing

    try:
        folder = hydra_bin_dir()
    except BuildError as error:
        missing(f"hydra is not built: {error}")
    server = Hydra(Directory(), tmp_path_factory.mktemp("hydra"), folder / "hydra")
    server.start()
    yield server
    server.stop()


@pytest.fixture
def hydra(hydra_server: Any) -> Any:
    """The provider, its company directory reset to three people in three
    groups (``tests.oidc_flow.IDP_PEOPLE``, password ``pw-<name>``)."""
    from harness.hydra import Person
    from tests.oidc_flow import IDP_GROUPS, IDP_PEOPLE

    hydra_server.directory.people = {
        name: Person(f"pw-{name}", [IDP_GROUPS[role]], f"{name}@example.com")
        for name, role in IDP_PEOPLE.items()
    }
    return hydra_server


@pytest.fixture
def alertmanager(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A real Alertmanager sending every alert at once to a webhook receiver
    of this test (``alertmanager.receiver``; see harness/alertmanager.py).
    Its log is added to a failed test's report."""
    from harness.alertmanager import Alertmanager, WebhookReceiver, binary
    from tests.requires import missing

    if binary() is None:
        missing(
            "Alertmanager is not installed (apt-get install prometheus-alertmanager)"
        )
    receiver = WebhookReceiver().start()
    server = Alertmanager(
        tmp_path_factory.mktemp("alertmanager"), webhook_url=receiver.url
    )
    server.receiver = receiver  # type: ignore[attr-defined]
    try:
        server.start()
        yield server
    finally:
        server.stop()
        receiver.stop()


def pytest_configure(config: pytest.Config) -> None:
    """Compile the translations (locale/*.po -> .mo, build output) when stale,
    so that a plain ``pytest`` run answers in Chinese as the built portal does;
    written atomically, so pytest-xdist's workers may all do it."""
    from apps.common.catalogs import compile_catalog, locale_files

    for folder, domain in (("locale", "django"), ("vnpucli/locale", "vnpu")):
        locale_dir = TESTS.parent / folder
        found = locale_dir.glob(f"*/LC_MESSAGES/{domain}.po")
        locales = sorted(p.parent.parent.name for p in found)
        for files in locale_files(locale_dir, locales, domain=domain):
            compile_catalog(files)
    # The commands speak the shell's language (apps.common.management.base):
    # the suite checks their English unless a test asks for another.
    os.environ["LANGUAGE"] = "en"
    # What the background build had made when the run started, decided once
    # here for every worker (they inherit the environment): each worker
    # orders the tests by it, and xdist refuses workers whose orders differ.
    if not hasattr(config, "workerinput") and os.environ.get("KUBESTACK_BUILD_DIR"):
        from kubestack.build import STAGES

        os.environ[STAGES_BUILT_ENV] = ",".join(
            stage for stage in STAGES if _stage_built_now(stage)
        )
    # A parallel run (scripts/test.sh) says where its minutes went.
    if config.getoption("numprocesses", None) and not hasattr(config, "workerinput"):
        from tests.timeline import TimelinePlugin

        timeline = TESTS.parent / "var" / "test-timeline.jsonl"
        config.pluginmanager.register(TimelinePlugin(timeline), "vnpu-timeline")


def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    """Mark each test with what it needs (the lanes choose by those marks),
    then order them for scripts/test.sh's workers.

    The browser tests first (one unit of work, one portal); the real-stack
    tests first too when the control plane is built, else after the rest, in
    the order the background build ends its stages (the sign-in tests, which
    need hydra, likewise; the modules with a kubectl test after those that
    need nothing built); the Helm tests last. A
    cold build thus overlaps every test that does not need it, and a warm run
    starts its longest units at once while the other workers share the
    rest."""
    _mark_needs(items)
    control_plane_built = _stage_built("control-plane")
    hydra_built = _stage_built("hydra")
    # A module is one unit of work: one with a test that runs kubectl waits
    # for kubectl's build (four minutes cold) as a whole, so it comes after
    # the modules that need nothing built.
    waits_for_kubectl = (
        set()
        if _stage_built("kubectl")
        else {item.path for item in items if item.get_closest_marker("tools")}
    )

    def stage(item: pytest.Item) -> int:
        if item.get_closest_marker("helm"):
            return 4
        if item.get_closest_marker("realstack"):
            # Built already (a warm run): the longest group starts first, so
            # the other workers share the rest beside it.
            return 0 if control_plane_built else 3
        # The browser tests share one portal on one worker: start it early.
        if "e2e" in item.path.relative_to(config.rootpath).parts[:2]:
            return 0
        # The sign-in tests wait for hydra's build (minutes cold): after the
        # rest, so that no worker sits idle meanwhile.
        if item.get_closest_marker("oidc") and not hydra_built:
            return 3
        return 2 if item.path in waits_for_kubectl else 1

    # Stable: the order within a stage is kept. scripts/test.sh's workers
    # take the units of tests/xdist_scopes.py in this order.
    items.sort(key=stage)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """Under ``--dist loadscope`` (scripts/test.sh), each worker takes whole
    modules, and the browser tests whole (tests/xdist_scopes.py)."""
    if config.getvalue("dist") != "loadscope":
        return None
    from tests.xdist_scopes import FixtureScopeScheduling

    return FixtureScopeScheduling(config, log)


def pytest_runtest_setup(item: pytest.Item) -> None:
    """A test that runs kubectl or helm waits here for the background build of
    that tool (a cold build: minutes), so that its own timeouts count only
    the tool's work, never the build's. The shims on PATH would wait too, but
    inside a subprocess the test gave 20 to 60 s."""
    from kubestack.build import wait_for_background_build

    if item.get_closest_marker("tools"):
        wait_for_background_build("kubectl")
    if item.get_closest_marker("helm"):
        wait_for_background_build("helm")
    if item.get_closest_marker("oidc"):
        wait_for_background_build("hydra")


def _stage_built(stage: str) -> bool:
    """Whether scripts/test.sh's background build had ended ``stage`` well
    when the run started (True without such a build: the binaries were built
    beforehand)."""
    if not os.environ.get("KUBESTACK_BUILD_DIR"):
        return True
    built = os.environ.get(STAGES_BUILT_ENV)
    if built is None:
        return _stage_built_now(stage)
    return stage in built.split(",")


def _stage_built_now(stage: str) -> bool:
    done = Path(os.environ["KUBESTACK_BUILD_DIR"]) / f"{stage}.rc"
    return done.is_file() and done.read_text().strip() == "0"


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """A failed test that ran a Prometheus or an Alertmanager shows the end
    of its log."""
    report = yield
    for name in ("prometheus", "alertmanager"):
        server = getattr(item, "funcargs", {}).get(name)
        if report.failed and server is not None and hasattr(server, "log"):
            report.sections.append((f"{name} log", server.log(4000)))
    return report
