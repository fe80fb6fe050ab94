"""The language of an answer made where Django's ``LocaleMiddleware`` does not
run: the ASGI body limit (``apps.common.body_limit``) and the WebSocket's log
follows (``apps.live.logfollow``). Picked from ``Accept-Language`` as the
middleware picks it (docs/languages.md)."""

from __future__ import annotations

from collections.abc import Iterable

from django.conf import settings
from django.utils import translation
from django.utils.translation.trans_real import parse_accept_lang_header


def language_from_headers(headers: Iterable[tuple[bytes, bytes]] | None) -> str:
    """The portal language (``"en"``, ``"zh-hans"``) ASGI ``headers`` ask for."""
    said = next(
        (v for k, v in headers or () if k.lower() == b"accept-language"), b""
    ).decode("latin-1")
    for code, _quality in parse_accept_lang_header(said):
        if code == "*":
            break
        try:
            return translation.get_supported_language_variant(code)
        except LookupError:
            continue
    return str(settings.LANGUAGE_CODE)
