"""Shared fixtures: the simulator, users of each role, API clients, the fixture files."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

TESTS = Path(__file__).resolve().parent
FIXTURES = TESTS / "fixtures"

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
    "redis_layer": "redis",
    "kubectl": "tools",
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


def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    """Run the tests in the order scripts/test.sh's background build ends its
    stages: those that need only kubectl first, then the real-stack tests
    (the control plane), then the Helm tests (helm). A cold build then
    overlaps every other test instead of holding the first real-stack test
    and all that came after it. Each test is marked with what it needs first
    (the lanes choose by those marks)."""
    _mark_needs(items)

    def stage(item: pytest.Item) -> int:
        if item.get_closest_marker("helm"):
            return 2
        return 1 if item.get_closest_marker("realstack") else 0

    items.sort(key=stage)  # stable: the order within a stage is kept
    # Under pytest-xdist (--dist loadgroup), the tests that share a costly
    # session fixture run on one worker: one control plane, one portal.
    for item in items:
        if item.get_closest_marker("realstack"):
            item.add_marker(pytest.mark.xdist_group("realstack"))
        elif "e2e" in item.path.relative_to(config.rootpath).parts[:2]:
            item.add_marker(pytest.mark.xdist_group("e2e"))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """A failed test that ran a Prometheus shows the end of its log."""
    report = yield
    server = getattr(item, "funcargs", {}).get("prometheus")
    if report.failed and server is not None and hasattr(server, "log"):
        report.sections.append(("prometheus log", server.log(4000)))
    return report
