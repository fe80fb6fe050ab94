"""Renderers beside DRF's JSON: plain text, for the endpoints that answer text."""

from __future__ import annotations

import json
from typing import Any

from rest_framework.renderers import BaseRenderer


class PlainTextRenderer(BaseRenderer):
    """``text/plain``: a client asking for text (``curl -H 'Accept: text/plain'``
    on a log) is served, not refused with 406; an error body is its JSON."""

    media_type = "text/plain"
    format = "txt"
    charset = "utf-8"

    def render(
        self,
        data: Any,
        accepted_media_type: str | None = None,
        renderer_context: dict[str, Any] | None = None,
    ) -> bytes:
        if isinstance(data, str):
            return data.encode()
        return json.dumps(data).encode()
