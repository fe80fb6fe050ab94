"""``field__in_array=values``: membership in a big set as one parameter.

``field__in=[...]`` sends one placeholder per value. With 20,000 chip UUIDs
(the first list of a reference-scale cluster) Django resolves each value and
psycopg splits the query at each placeholder, which cost more than the
statements themselves. On PostgreSQL this lookup sends ``field = ANY(%s)`` with
the values as one array; other databases get the ordinary ``IN`` list.
"""

from __future__ import annotations

from typing import Any

from django.db.models import Field, ForeignObject, Lookup


class InArray(Lookup):
    """``WHERE field = ANY(array)`` on PostgreSQL, ``IN (...)`` elsewhere."""

    lookup_name = "in_array"
    prepare_rhs = False

    def get_prep_lookup(self) -> list[Any]:
        # Values are given as the column stores them (strings, ints); a set or a
        # generator is fine. Each one still goes through the field's own
        # preparation, once, in a loop cheaper than Django's per-parameter path.
        prep = self.lhs.output_field.get_prep_value
        return [prep(value) for value in self.rhs]

    def as_sql(self, compiler: Any, connection: Any) -> tuple[str, list[Any]]:
        lhs, lhs_params = self.process_lhs(compiler, connection)
        field = self.lhs.output_field
        values = [
            field.get_db_prep_value(value, connection, prepared=True)
            for value in self.rhs
        ]
        if not values:
            return "1 = 0", list(lhs_params)
        if connection.vendor == "postgresql":
            cast = field.cast_db_type(connection) or field.db_type(connection)
            return f"{lhs} = ANY(%s::{cast}[])", [*lhs_params, values]
        marks = ", ".join(["%s"] * len(values))
        return f"{lhs} IN ({marks})", [*lhs_params, *values]


Field.register_lookup(InArray)
# Relations keep their own lookup table: ``node_id__in_array=[...]``.
ForeignObject.register_lookup(InArray)
