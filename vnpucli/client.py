"""HTTP calls to the portal, and its refusals as :class:`PortalError`.

Every answer that is not a success becomes a :class:`PortalError` carrying the
exit code ``vnpu`` ends with (``exitcodes``) and one line saying what the
portal said, naming the field of a 400. Calls that only read (GET) are retried
while the portal is unavailable (a restart, a 503, a dropped connection) for
up to ``retry_seconds``; a POST is never retried, since the portal may have
acted on it.
"""

from __future__ import annotations

import http.client
import json
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar, cast

from vnpucli import exitcodes
from vnpucli.i18n import _, shell_languages

T = TypeVar("T")
USER_AGENT = "vnpu-cli/1"
DEFAULT_TIMEOUT = 30.0
#: Statuses worth calling again: the portal or its cluster is briefly away.
TRANSIENT_STATUSES = frozenset({429, 502, 503, 504})
#: Errors of a connection that broke or never opened.
CONNECTION_ERRORS: tuple[type[BaseException], ...] = (
    urllib.error.URLError,
    http.client.HTTPException,
    ConnectionError,
    socket.timeout,
    TimeoutError,
)


def accept_language(environ: Mapping[str, str] | None = None) -> str | None:
    """The shell's language as an ``Accept-Language`` value, so that the
    portal's refusals come in it (docs/languages.md): ``zh_CN.UTF-8`` ->
    ``zh-CN`` (``vnpucli.i18n.shell_languages``). None for ``C``/``POSIX`` or
    nothing set (the portal answers in English)."""
    codes = [code.replace("_", "-") for code in shell_languages(environ)]
    if not codes:
        return None
    weighted = [codes[0]] + [
        f"{code};q={max(0.1, 0.9 - 0.1 * n):.1f}" for n, code in enumerate(codes[1:])
    ]
    return ", ".join(weighted)


class PortalError(Exception):
    """A call that failed: the message to print and the exit code to end with."""

    def __init__(
        self,
        message: str,
        exit_code: int,
        *,
        status: int | None = None,
        body: Any = None,
        transient: bool = False,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.exit_code = exit_code
        self.status = status
        self.body = body
        self.transient = transient


@dataclass
class Answer:
    """A successful answer: its status, headers and JSON body."""

    status: int
    headers: http.client.HTTPMessage
    body: Any


def _one_line(text: str, limit: int = 400) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def _flatten(errors: Any, prefix: str = "") -> list[tuple[str, str]]:
    """DRF's nested ``{"field": ["message"]}`` as ``(a.b, message)`` pairs."""
    if isinstance(errors, dict):
        pairs: list[tuple[str, str]] = []
        for key, value in errors.items():
            pairs += _flatten(value, f"{prefix}.{key}" if prefix else str(key))
        return pairs
    if isinstance(errors, list):
        if all(not isinstance(item, dict | list) for item in errors):
            return [(prefix, " ".join(str(item) for item in errors))]
        pairs = []
        for index, value in enumerate(errors):
            pairs += _flatten(value, f"{prefix}[{index}]")
        return pairs
    return [(prefix, str(errors))]


def refusal_text(body: Any) -> str:
    """What the portal said, on one line; each field of a 400 named.

    The portal answers ``{"code", "message", "errors": {"a.b": [...]}}``; a
    bare DRF ``{"field": ["message"]}`` or ``{"detail": ...}`` and plain text
    are read too.
    """
    if isinstance(body, dict):
        errors = body.get("errors")
        if not (isinstance(errors, dict) and errors) and not (
            {"code", "message", "detail"} & body.keys()
        ):
            errors = body  # DRF's own shape
        if isinstance(errors, dict) and errors:
            parts = [
                message if field in ("", "non_field_errors") else f"{field}: {message}"
                for field, message in _flatten(errors)
            ]
            return _one_line("; ".join(parts))
        for key in ("message", "detail"):
            if body.get(key):
                return _one_line(str(body[key]))
        return _one_line(json.dumps(body))
    return _one_line(str(body or _("no answer")))


def error_for(status: int, body: Any, what: str) -> PortalError:
    """The :class:`PortalError` of an answer with status ``status``; ``what`` is
    the thing asked for ("request 42", "the new request", "the log of ...")."""
    said = refusal_text(body)
    words = {"what": what, "status": status, "said": said}
    if status in (400, 409, 413, 415, 422):
        code = exitcodes.REFUSED
        text = _("the portal refused %(what)s (%(status)s): %(said)s") % words
    elif status == 401:
        code = exitcodes.AUTH
        text = _("the portal refused the token (401): %(said)s") % words
    elif status == 403:
        code, text = exitcodes.AUTH, _("not allowed: %(what)s (403): %(said)s") % words
    elif status == 404:
        code, text = (
            exitcodes.NOT_FOUND,
            _("%(what)s not found (404): %(said)s") % words,
        )
    else:
        code = exitcodes.UNAVAILABLE
        text = _("the portal failed on %(what)s (%(status)s): %(said)s") % words
    return PortalError(
        text, code, status=status, body=body, transient=status in TRANSIENT_STATUSES
    )


def _decode(raw: bytes) -> Any:
    try:
        return json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return raw.decode("utf-8", "replace")


class Client:
    """Calls to one portal with one token (``Authorization: Bearer``)."""

    def __init__(
        self,
        url: str,
        token: str,
        *,
        retry_seconds: float = 60.0,
        note: Callable[[str], None] = lambda _: None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.base = url.rstrip("/")
        self.token = token
        self.retry_seconds = retry_seconds
        self.note = note
        self.sleep = sleep

    def url(self, path: str, query: Mapping[str, Any] | None = None) -> str:
        """The absolute URL of ``path`` (an absolute URL is kept, e.g. a ``next`` link)."""
        full = path if "://" in path else self.base + path
        if query:
            items = {k: v for k, v in query.items() if v is not None}
            full += ("&" if "?" in full else "?") + urllib.parse.urlencode(
                items, doseq=True
            )
        return full

    def _request(
        self, method: str, url: str, body: Any = None, accept: str = "application/json"
    ) -> urllib.request.Request:
        if not self.token:
            raise PortalError(
                _("no token: set VNPU_TOKEN or pass --token"), exitcodes.AUTH
            )
        data = json.dumps(body).encode() if body is not None else None
        headers = {
            "Authorization": f"Bearer {self.token}",
            "Accept": accept,
            "User-Agent": USER_AGENT,
        }
        language = accept_language()
        if language:
            headers["Accept-Language"] = language
        if data is not None:
            headers["Content-Type"] = "application/json"
        if not url.startswith(("http://", "https://")):
            raise PortalError(
                _(
                    "the portal's URL must start with http:// or https://: %(url)r "
                    "(set VNPU_URL or pass --url)"
                )
                % {"url": url},
                exitcodes.USAGE,
            )
        return urllib.request.Request(  # noqa: S310 - http(s) only, checked above
            url, data=data, method=method, headers=headers
        )

    def open(
        self,
        method: str,
        path: str,
        *,
        what: str,
        query: Mapping[str, Any] | None = None,
        body: Any = None,
        timeout: float = DEFAULT_TIMEOUT,
        accept: str = "application/json",
    ) -> http.client.HTTPResponse:
        """Send one call and return the open response (a stream is read by the caller)."""
        request = self._request(method, self.url(path, query), body, accept)
        try:
            response = urllib.request.urlopen(request, timeout=timeout)  # noqa: S310 - http(s) only (_request)
            return cast(http.client.HTTPResponse, response)
        except urllib.error.HTTPError as exc:
            with exc:
                raise error_for(exc.code, _decode(exc.read()), what) from None
        except CONNECTION_ERRORS as exc:
            reason = getattr(exc, "reason", None) or exc
            raise PortalError(
                _("cannot reach the portal at %(url)s: %(reason)s")
                % {"url": self.base, "reason": reason},
                exitcodes.UNAVAILABLE,
                transient=True,
            ) from None

    def call(
        self,
        method: str,
        path: str,
        *,
        what: str,
        query: Mapping[str, Any] | None = None,
        body: Any = None,
        timeout: float = DEFAULT_TIMEOUT,
    ) -> Answer:
        """One JSON call; a GET is retried while the portal is unavailable."""

        def once() -> Answer:
            try:
                with self.open(
                    method, path, what=what, query=query, body=body, timeout=timeout
                ) as response:
                    raw = response.read()
                    return Answer(response.status, response.headers, _decode(raw))
            except CONNECTION_ERRORS as exc:  # cut while reading the body
                raise PortalError(
                    _("the connection to %(url)s broke: %(error)s")
                    % {"url": self.base, "error": exc},
                    exitcodes.UNAVAILABLE,
                    transient=True,
                ) from None

        return self.retrying(once) if method == "GET" else once()

    def retrying(self, attempt: Callable[[], T]) -> T:
        """``attempt()``, again after a transient failure, for up to ``retry_seconds``."""
        deadline = time.monotonic() + self.retry_seconds
        delay = 0.5
        told = False
        while True:
            try:
                return attempt()
            except PortalError as exc:
                if not exc.transient or time.monotonic() + delay > deadline:
                    raise
                if not told:
                    self.note(
                        _("%(problem)s; trying again for %(seconds)g s")
                        % {"problem": exc.message, "seconds": self.retry_seconds}
                    )
                    told = True
                self.sleep(delay)
                delay = min(delay * 2, 5.0)

    # -- the calls of the request API

    def request(self, rid: int) -> dict[str, Any]:
        """``GET /api/requests/{id}/``."""
        answer = self.call(
            "GET", f"/api/requests/{rid}/", what=_("request %(id)s") % {"id": rid}
        )
        return cast(dict[str, Any], answer.body)

    def wait(
        self, rid: int, target: str, timeout: int
    ) -> tuple[dict[str, Any], bool | None]:
        """The long poll ``?wait=target&timeout=S``: the request and whether the
        portal says the state was reached (None: the portal does not long-poll)."""
        answer = self.call(
            "GET",
            f"/api/requests/{rid}/",
            what=_("request %(id)s") % {"id": rid},
            query={"wait": target, "timeout": timeout},
            timeout=timeout + DEFAULT_TIMEOUT,
        )
        said = answer.headers.get("X-Wait")
        return answer.body, (said == "reached") if said else None
