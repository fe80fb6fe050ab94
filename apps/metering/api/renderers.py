"""The report as CSV, chosen by ``?format=csv`` (DRF's format override)."""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from typing import Any

from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.renderers import BaseRenderer, JSONRenderer

from apps.common.exceptions import ValidationFailed

REPORT_COLUMNS = [
    "group",
    "slices",
    "slice_hours",
    "card_hours",
    "measured_slice_hours",
    "used_slice_hours",
    "idle_slice_hours",
    "cost",
]


class ReportCsvRenderer(BaseRenderer):
    """One row per group, then the totals; the currency on every row."""

    media_type = "text/csv"
    format = "csv"
    charset = "utf-8"

    def render(
        self,
        data: Any,
        accepted_media_type: str | None = None,
        renderer_context: Any = None,
    ) -> bytes:
        out = io.StringIO()
        writer = csv.writer(out)
        writer.writerow([*REPORT_COLUMNS, "currency"])
        for row in [*data["rows"], data["totals"]]:
            writer.writerow(
                [_cell(row[c]) for c in REPORT_COLUMNS] + [data["currency"]]
            )
        return out.getvalue().encode(self.charset)


def _cell(value: Any) -> Any:
    # Spreadsheets run cells starting with = + - @ as formulas (CSV injection);
    # a group is a namespace or queue name, which a user may choose.
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@"):
        return "'" + value
    return "" if value is None else value


class FormatNamedNegotiation(DefaultContentNegotiation):
    """An unknown ``?format=`` is a 400 naming the field, not DRF's bare 404."""

    def filter_renderers(
        self, renderers: Sequence[BaseRenderer], format: str
    ) -> list[BaseRenderer]:
        kept = [r for r in renderers if r.format == format]
        if not kept:
            known = ", ".join(r.format for r in renderers)
            raise ValidationFailed(
                f"format must be one of {known}", detail={"format": [f"one of {known}"]}
            )
        return kept


REPORT_RENDERERS = [JSONRenderer, ReportCsvRenderer]
