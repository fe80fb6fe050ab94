"""WhiteNoise's static files, as a middleware that can run on the event loop.

WhiteNoise's own middleware is sync-only, and under ASGI one sync-only
middleware makes Django leave the event loop for a thread and come back for
the rest of the chain on every request, static or not: two thread hops more
per API call. This one looks the path up on the loop (a dict lookup) and
goes to a thread only to open a file it serves.
"""

from __future__ import annotations

from typing import Any

from asgiref.sync import iscoroutinefunction, markcoroutinefunction, sync_to_async
from django.http import HttpRequest
from whitenoise.middleware import WhiteNoiseMiddleware


class StaticFilesMiddleware(WhiteNoiseMiddleware):
    """``whitenoise.middleware.WhiteNoiseMiddleware``, sync- and async-capable."""

    sync_capable = True
    async_capable = True

    def __init__(self, get_response: Any) -> None:
        super().__init__(get_response)
        self.is_async = iscoroutinefunction(get_response)
        if self.is_async:
            markcoroutinefunction(self)

    def __call__(self, request: HttpRequest) -> Any:
        if self.is_async:
            return self._acall(request)
        return super().__call__(request)

    async def _acall(self, request: HttpRequest) -> Any:
        if self.autorefresh:
            # DEBUG: WhiteNoise looks on disk for each path.
            static_file = await sync_to_async(self.find_file)(request.path_info)
        else:
            static_file = self.files.get(request.path_info)
        if static_file is None:
            return await self.get_response(request)
        return await sync_to_async(self.serve)(static_file, request)
