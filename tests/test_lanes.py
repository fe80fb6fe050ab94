"""The lanes (docs/testing.md): tests/conftest.py marks each test with what it
needs, and scripts/test.sh --fast runs those that need none of it."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.conftest import TESTS, _marks_of

ROOT = TESTS.parent


def _item(path: Path, fixtures: tuple[str, ...] = (), function=None):
    return SimpleNamespace(path=path, fixturenames=fixtures, function=function)


def test_a_folder_marks_its_tests():
    assert _marks_of(_item(TESTS / "e2e" / "test_x.py")) == {"browser"}
    assert _marks_of(_item(TESTS / "realstack" / "sub" / "t.py")) == {"realstack"}
    assert _marks_of(_item(TESTS / "faults" / "test_y.py")) == {"faults"}
    assert _marks_of(_item(TESTS / "scheduling" / "test_api.py")) == set()


def test_a_fixture_marks_the_tests_that_use_it():
    here = TESTS / "inventory" / "test_x.py"
    assert _marks_of(_item(here, ("db", "kubectl"))) == {"tools"}
    assert _marks_of(_item(here, ("prometheus",))) == {"prometheus"}
    assert _marks_of(_item(here, ("redis_layer",))) == {"redis"}
    assert _marks_of(_item(here, ("page",))) == {"browser"}


def _needs_postgres():
    from django.db import connection

    if connection.vendor != "postgresql":
        raise AssertionError("only on PostgreSQL")


def test_a_test_that_checks_for_postgresql_is_marked_postgres():
    here = TESTS / "inventory" / "test_x.py"
    assert _marks_of(_item(here, function=_needs_postgres)) == {"postgres"}
    assert _marks_of(_item(here, function=test_a_folder_marks_its_tests)) == set()


def _fast_lane() -> str:
    script = (ROOT / "scripts" / "test.sh").read_text()
    found = re.search(r'^FAST_LANE="([^"]+)"$', script, re.MULTILINE)
    assert found, "scripts/test.sh defines FAST_LANE"
    return found.group(1)


def test_the_fast_lane_leaves_out_every_marker_of_a_need():
    # every marker declared for a need (all but websockets, which needs only
    # the in-memory layer) is left out of the fast lane
    import tomllib

    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"][
        "ini_options"
    ]["markers"]
    needs = {line.split(":")[0] for line in declared} - {"websockets"}
    assert set(re.findall(r"not (\w+)", _fast_lane())) == needs


def _fast_lane_of(items: list[pytest.Item]) -> list[str]:
    """The ids of ``items`` the fast lane's marker expression selects."""
    from _pytest.mark.expression import Expression

    expression = Expression.compile(_fast_lane())

    def selected(item: pytest.Item) -> bool:
        return expression.evaluate(
            lambda name: item.get_closest_marker(name) is not None
        )

    return [item.nodeid for item in items if selected(item)]


def _ids(marker: str) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-m", marker],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode in (0, 5), done.stdout[-3000:] + done.stderr[-3000:]
    return [line for line in done.stdout.splitlines() if "::" in line]


def _collected_fast_lane() -> list[str]:
    return _ids(_fast_lane())


@pytest.mark.slow
def test_the_fast_lane_has_at_least_700_tests_and_none_of_the_slow_folders(request):
    # The whole suite's run has every test collected and marked already (each
    # xdist worker collects them all): read the lane from it rather than
    # collecting the suite again (a minute on a busy CI machine). Run alone,
    # collect.
    items = request.session.items
    whole = any(i.nodeid.startswith("tests/realstack/") for i in items) and any(
        i.nodeid.startswith("tests/e2e/") for i in items
    )
    tests = _fast_lane_of(items) if whole else _collected_fast_lane()
    assert len(tests) >= 700, len(tests)
    assert not [
        t
        for t in tests
        if t.startswith(("tests/e2e/", "tests/realstack/", "tests/faults/"))
    ]


@pytest.mark.slow
def test_no_module_mixes_helm_tests_with_others(request):
    """A module is one unit of work for the workers (tests/xdist_scopes.py),
    and Helm tests are ordered last, after the background build made helm:
    a module that mixed them with others ran early and held its worker
    waiting for helm (987 s in the cold fresh-clone run f16)."""
    items = request.session.items
    if any(i.get_closest_marker("helm") for i in items):
        helm = [i.nodeid for i in items if i.get_closest_marker("helm")]
        others = [i.nodeid for i in items if not i.get_closest_marker("helm")]
    else:
        helm, others = _ids("helm"), _ids("not helm")
    assert helm, "no Helm test collected"
    helm_modules = {nodeid.split("::")[0] for nodeid in helm}
    mixed = sorted(helm_modules & {nodeid.split("::")[0] for nodeid in others})
    assert mixed == []


def _collected_order(build_dir: Path, **env: str) -> list[str]:
    """The modules in the order the suite would run these two (the first
    has a test that runs kubectl), during a background build in ``build_dir``."""
    import os

    first, second = "tests/inventory/publishing/test_breaking.py", "tests/test_sizes.py"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", first, second],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env={**os.environ, "KUBESTACK_BUILD_DIR": str(build_dir), **env},
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    modules = [line.split("::")[0] for line in done.stdout.splitlines() if "::" in line]
    return list(dict.fromkeys(modules))


def test_a_module_that_runs_kubectl_waits_behind_the_others_while_kubectl_builds(
    tmp_path, monkeypatch
):
    """A module is one unit of work: one with a kubectl test held its worker
    for kubectl's cold build (157 s in fresh-clone run f16) while modules
    that need nothing built waited behind it."""
    monkeypatch.delenv("VNPU_TEST_STAGES_BUILT", raising=False)
    building = _collected_order(tmp_path)
    assert building == [
        "tests/test_sizes.py",
        "tests/inventory/publishing/test_breaking.py",
    ]
    (tmp_path / "kubectl.rc").write_text("0\n")
    built = _collected_order(tmp_path)
    assert built == [
        "tests/inventory/publishing/test_breaking.py",
        "tests/test_sizes.py",
    ]
    # A worker goes by what the controller saw when the run started, not by a
    # stage that ended since: xdist refuses workers whose orders differ.
    from tests.conftest import STAGES_BUILT_ENV, _stage_built

    monkeypatch.setenv("KUBESTACK_BUILD_DIR", str(tmp_path))
    monkeypatch.setenv(STAGES_BUILT_ENV, "")
    assert not _stage_built("kubectl")
    monkeypatch.setenv(STAGES_BUILT_ENV, "hydra,kubectl")
    assert _stage_built("kubectl")
