"""Role bindings, and the default NAME / CREATED AT table (ClusterRoles, Roles)."""

from __future__ import annotations

from datetime import UTC, datetime

from simcluster.columndocs import DOCS
from simcluster.printers.base import (
    AGE,
    NAME,
    Cells,
    Column,
    Obj,
    Printer,
    age_of,
    meta_of,
    parse_time,
)


def _binding_cells(binding: Obj, now: datetime) -> Cells:
    ref = binding.get("roleRef") or {}
    users, groups, accounts = [], [], []
    for subject in binding.get("subjects") or []:
        kind, name = subject.get("kind"), subject.get("name", "")
        if kind == "ServiceAccount":
            accounts.append(f"{subject.get('namespace', '')}/{name}")
        elif kind == "User":
            users.append(name)
        elif kind == "Group":
            groups.append(name)
    return [
        meta_of(binding).get("name", ""),
        f"{ref.get('kind', '')}/{ref.get('name', '')}",
        age_of(binding, now),
        ", ".join(users),
        ", ".join(groups),
        ", ".join(accounts),
    ]


def binding_printer(kind: str) -> Printer:
    word = kind[0].lower() + kind[1:]
    return Printer(
        (
            NAME,
            Column("Role", DOCS[f"{kind}.roleRef"]),
            AGE,
            Column("Users", f"Users in the {word}", priority=1),
            Column("Groups", f"Groups in the {word}", priority=1),
            Column("ServiceAccounts", f"ServiceAccounts in the {word}", priority=1),
        ),
        _binding_cells,
    )


def _created_at(obj: Obj, now: datetime) -> Cells:
    at = parse_time(meta_of(obj).get("creationTimestamp"))
    stamp = (at or datetime(1, 1, 1, tzinfo=UTC)).astimezone(UTC)
    return [meta_of(obj).get("name", ""), stamp.strftime("%Y-%m-%dT%H:%M:%SZ")]


# rest.NewDefaultTableConvertor: kinds without a printer of their own.
DEFAULT = Printer(
    (NAME, Column("Created At", DOCS["meta.creationTimestamp"], type="date")),
    _created_at,
)
