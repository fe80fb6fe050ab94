"""Pagination for every list endpoint: page numbers, with a caller-chosen size."""

from typing import Any

from rest_framework.pagination import PageNumberPagination


class PortalPagination(PageNumberPagination):
    page_size = 100
    page_size_query_param = "page_size"
    max_page_size = 1000

    def get_paginated_response_schema(self, schema: dict[str, Any]) -> dict[str, Any]:
        """DRF's schema of a page, with ``next`` and ``previous`` required.

        ``get_paginated_response`` writes both on every page (null at either end).
        """
        paginated = super().get_paginated_response_schema(schema)
        paginated["required"] = ["count", "next", "previous", "results"]
        return paginated
