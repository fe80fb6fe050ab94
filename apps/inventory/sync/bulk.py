"""Fast bulk writes for sync's big moments (the first list of 30,000 pods).

Django's ``bulk_create`` sends parameterised INSERTs and ``bulk_update`` builds
one CASE expression per row and column; at the reference scale those cost
tens of seconds. On PostgreSQL new rows go in with COPY, which is an order of
magnitude faster; other databases fall back to ``bulk_create``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from django.db import connection, models


def insert_rows(
    model: type[models.Model],
    rows: Sequence[Mapping[str, Any]],
    *,
    batch_size: int = 2000,
) -> None:
    """Insert new rows given as ``{attname: value}`` (primary keys are not read back).

    Plain dicts, not model instances: building 20,000 instances costs more
    than the COPY itself.
    """
    if not rows:
        return
    if connection.vendor != "postgresql":
        model.objects.bulk_create([model(**row) for row in rows], batch_size=batch_size)
        return
    fields = [f for f in model._meta.concrete_fields if not f.primary_key]
    json_fields = {f.attname for f in fields if isinstance(f, models.JSONField)}
    defaults = {f.attname: f.get_default() for f in fields}
    columns = ", ".join(connection.ops.quote_name(f.column) for f in fields)
    table = connection.ops.quote_name(model._meta.db_table)
    names = [f.attname for f in fields]
    connection.ensure_connection()
    with connection.cursor() as cursor:
        raw = cursor.cursor  # the psycopg cursor under Django's wrapper
        with raw.copy(f"COPY {table} ({columns}) FROM STDIN") as copy:
            for row in rows:
                values = []
                for name in names:
                    value = row[name] if name in row else defaults[name]
                    if name in json_fields and value is not None:
                        value = json.dumps(value)
                    values.append(value)
                copy.write_row(values)
        if len(rows) >= 1000:
            # Fresh statistics, so the next statements (usage recounts) are
            # planned for the table's real size and for how its rows divide
            # between clusters. Only the foreign keys, the cluster above all,
            # which every one of them filters on: sampling every text column
            # of 20,000 slices took 150 ms of a 1.8 s first sync (25 ms for
            # the keys). The recount also groups and joins on the chips'
            # uuids, whose statistics wait for autovacuum; it measured no
            # slower without them (at 10x, 1.5 s against 2.0 s before).
            keys = ", ".join(
                connection.ops.quote_name(f.column)
                for f in fields
                if isinstance(f, models.ForeignKey)
            )
            cursor.execute(f"ANALYZE {table} ({keys})" if keys else f"ANALYZE {table}")
