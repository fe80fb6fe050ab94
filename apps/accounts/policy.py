"""Who may call what: the least role for every API view and action, in one table.

Roles are ranked (viewer < ci < operator < admin, ``apps.accounts.choices``),
so a cell names the least role that may use it. ``READ`` is every safe method
(GET, HEAD, OPTIONS), ``WRITE`` every other one; a ViewSet action named in a
row (``create``, ``publish``...) overrides both. A view missing from the table
gets ``DEFAULT``: viewers read, operators write, so a new endpoint is never
open to CI tokens by accident. ``tests/security/test_role_matrix.py`` checks
every endpoint against every role.

Rules that depend on the object rather than the endpoint stay in the services
that own them (only the submitter or an admin cancels a request; ``force`` on
publish is for admins).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from apps.accounts.choices import Role

READ: Final = "read"
WRITE: Final = "write"

_V, _CI, _OP, _A = Role.VIEWER, Role.CI, Role.OPERATOR, Role.ADMIN

DEFAULT: Mapping[str, Role] = {READ: _V, WRITE: _OP}

POLICY: Mapping[str, Mapping[str, Role]] = {
    # accounts (the login view is public and does not use this table)
    "MeView": {READ: _V},
    "LogoutView": {READ: _V, WRITE: _V},  # anyone signed in may sign out
    "ApiTokenViewSet": {READ: _A, WRITE: _A},
    # the schema and its docs page
    "SpectacularAPIView": {READ: _V},
    "DocsView": {READ: _V},
    # audit (scoped to the caller's queues by the selector)
    "AuditEventViewSet": {READ: _V},
    # inventory
    "ClusterViewSet": {READ: _V, WRITE: _A},
    "ChipTypeViewSet": {READ: _V, WRITE: _OP},
    "TemplateViewSet": {READ: _V, WRITE: _OP},
    "ChipActionViewSet": {READ: _V, WRITE: _OP},
    "ChipSuggestionViewSet": {READ: _V},
    "ClusterPublishingViewSet": {
        READ: _V,
        WRITE: _OP,
        "publish": _OP,
        "rollback": _OP,
        "restart": _OP,
        "adopt": _A,
    },
    # the node config's checks: the what-if is a POST that writes nothing
    "NodeConfigChecksViewSet": {READ: _V, WRITE: _OP, "node_config_what_if": _V},
    # the device plugin's node config: as the device config's publishing
    # (checking a draft is an editor's step: operators, as publish)
    "ClusterNodeConfigViewSet": {
        READ: _V,
        WRITE: _OP,
        "node_config_publish": _OP,
        "node_config_rollback": _OP,
        "node_config_adopt": _A,
        "node_config_restart": _OP,
    },
    # scheduling: CI submits and cancels (its own) requests and nothing else
    "RequestViewSet": {READ: _V, WRITE: _OP, "create": _CI, "destroy": _CI},
    "QueueViewSet": {READ: _V, WRITE: _A},
    "PreemptionProposalViewSet": {READ: _V, WRITE: _A},
    # drains: operators drain and uncordon; admins decide foreign pods' eviction
    "ChipDrainView": {READ: _V, WRITE: _OP},
    "NodeDrainView": {READ: _V, WRITE: _OP},
    "ChipUncordonView": {WRITE: _OP},
    "NodeUncordonView": {WRITE: _OP},
    "DrainViewSet": {READ: _V, WRITE: _A},
    # usage and cost: everyone reads; prices are an admin's
    "ChipUsageView": {READ: _V},
    "SliceUsageView": {READ: _V},
    "ChipHistoryView": {READ: _V},
    "SliceHistoryView": {READ: _V},
    "UsageReportView": {READ: _V},
    "ChipPriceListView": {READ: _V},
    "ChipPriceView": {READ: _V, WRITE: _A},
    # alerts: everyone reads them; silencing is an admin's
    "AlertListView": {READ: _V},
    "SilenceCreateView": {WRITE: _A},
}


#: The views whose writes act on one queue's objects (the selectors scope them
#: to a token's queues): the only writes a token limited to queues may make.
#: Every other write acts on the whole cluster (templates, publishing,
#: restarts, queues, tokens), beyond any queue, so it needs a session or an
#: unlimited (admin) token.
QUEUE_SCOPED_WRITES: frozenset[str] = frozenset(
    {"RequestViewSet", "PreemptionProposalViewSet", "LogoutView"}
)


#: Actions that take a POST only to carry their input and write nothing (a
#: draft's what-if): reads, so a token limited to queues may call them as it
#: may call any read.
READ_ONLY_ACTIONS: frozenset[tuple[str, str]] = frozenset(
    {("NodeConfigChecksViewSet", "node_config_what_if")}
)


def least_role(view_name: str, *, action: str | None, safe: bool) -> Role:
    """The least role that may call ``view_name`` (its ``action``, or a read/write)."""
    row = POLICY.get(view_name, DEFAULT)
    if action and action in row:
        return row[action]
    return row.get(READ if safe else WRITE, DEFAULT[READ if safe else WRITE])
