"""The units scripts/test.sh's workers take (tests/xdist_scopes.py)."""

from __future__ import annotations

import pytest

from tests.xdist_scopes import FixtureScopeScheduling, unit_of


def test_a_browser_test_goes_with_the_whole_browser_package() -> None:
    assert unit_of("tests/e2e/test_portal.py::test_overview") == "tests/e2e/"
    assert unit_of("tests/e2e/test_admin_walk.py::test_walk[x]") == "tests/e2e/"


@pytest.mark.parametrize(
    ("nodeid", "unit"),
    [
        (
            "tests/realstack/test_hami_scheduler.py::test_a[310P-3]",
            "tests/realstack/test_hami_scheduler.py",
        ),
        (
            "tests/scheduling/test_api.py::TestSubmit::test_one",
            "tests/scheduling/test_api.py",
        ),
        ("tests/test_locks.py::test_x[a::b]", "tests/test_locks.py"),
    ],
)
def test_any_other_test_goes_with_its_module(nodeid: str, unit: str) -> None:
    assert unit_of(nodeid) == unit


def test_the_scheduler_splits_by_those_units() -> None:
    scheduler = FixtureScopeScheduling.__new__(FixtureScopeScheduling)
    assert scheduler._split_scope("tests/e2e/test_portal.py::test_x") == "tests/e2e/"
    assert (
        scheduler._split_scope("tests/faults/test_fuzz.py::test_fuzz[ci]")
        == "tests/faults/test_fuzz.py"
    )


def test_the_suite_uses_it_under_loadscope_only(
    pytestconfig: pytest.Config, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.conftest import pytest_xdist_make_scheduler

    # What -n 2 --dist loadscope sets (two local workers).
    monkeypatch.setattr(pytestconfig.option, "tx", ["2*popen"], raising=False)
    monkeypatch.setattr(pytestconfig.option, "dist", "loadscope", raising=False)
    scheduler = pytest_xdist_make_scheduler(pytestconfig, log=None)
    assert isinstance(scheduler, FixtureScopeScheduling)
    monkeypatch.setattr(pytestconfig.option, "dist", "load")
    assert pytest_xdist_make_scheduler(pytestconfig, log=None) is None
