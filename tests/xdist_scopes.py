"""How scripts/test.sh's xdist workers share the suite: by fixture scope.

A worker keeps a session or package fixture only while its tests follow each
other: pytest tears a package fixture down when the next test is outside the
package, and a module fixture at the end of its module's run. Spread test by
test (``--dist load``), the browser tests started their portal and Chromium
again each time a worker came back to them, and HAMi's scheduler (a module
fixture) six times in one run. So each module goes to one worker whole, and
the browser package too (its portal and Chromium are package fixtures).

pytest-xdist's own ``--dist loadgroup`` would send marked groups to one worker,
but version 3.8.0 marks a group by rewriting ``item._nodeid``, which pytest 9.2
no longer reads (a node's id lives in ``_id``): its groups were silently
ignored. This scheduler groups by path instead, which needs no mark.
"""

from __future__ import annotations

from xdist.scheduler import LoadScopeScheduling

# Folders whose tests share package fixtures: one unit of work each.
WHOLE_FOLDERS = ("tests/e2e/",)


def unit_of(nodeid: str) -> str:
    """The unit of work a test belongs to: its package for the folders above,
    else its module (a test class's methods stay with their module)."""
    for folder in WHOLE_FOLDERS:
        if nodeid.startswith(folder):
            return folder
    return nodeid.split("::", 1)[0]


class FixtureScopeScheduling(LoadScopeScheduling):
    """``--dist loadscope`` with the units above; the units are sent in the
    order tests/conftest.py sorts the tests (the long groups first), as
    ``--no-loadscope-reorder`` asks."""

    def _split_scope(self, nodeid: str) -> str:
        return unit_of(nodeid)
