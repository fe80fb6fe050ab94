"""No secret in a log line: API tokens, bearer credentials and the portal's keys are scrubbed.

Two layers, because log records reach handlers the portal does not configure
(Celery's, uvicorn's access log):

- a LogRecord factory, installed by :func:`configure` (Django's
  ``LOGGING_CONFIG``), scrubs every record's message in every process the
  moment it is made, whoever handles it later;
- :class:`ScrubSecretsFilter` on the portal's handlers also scrubs the
  formatted traceback and stack, which only exist when a handler formats them.

What is a secret: ``vnp_<prefix>_<secret>`` (the public prefix is kept, so a
line still says which token it was), whatever follows ``Bearer``/``Token`` in
an Authorization header or its WSGI/ASGI spellings, ``password=`` style pairs,
and the literal values of ``SECRET_KEY``, ``FIELD_ENCRYPTION_KEY`` and
``METRICS_TOKEN``.
"""

from __future__ import annotations

import logging
import logging.config
import re
from collections.abc import Callable, Iterable
from typing import Any

REDACTED = "[redacted]"

_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    # Portal API tokens: keep "vnp_<prefix>_" (public), drop the secret.
    (re.compile(r"\b(vnp_[0-9a-f]{8}_)[A-Za-z0-9_\-]+"), r"\1" + REDACTED),
    # Authorization headers in any spelling: "Authorization: Bearer x",
    # 'HTTP_AUTHORIZATION': 'Bearer x', (b'authorization', b'Bearer x').
    (
        re.compile(
            r"(?i)(authorization['\"]?\s*[:=,]\s*(?:b?['\"])?)"
            r"(?:[A-Za-z]+\s+)?[^\s'\",)]+"
        ),
        r"\1" + REDACTED,
    ),
    # A bare "Bearer <credential>" anywhere else (a kubeconfig, an exception).
    (
        # (a portal token was already cut down to its public prefix above)
        re.compile(r"(?i)\b(bearer)\s+(?!vnp_[0-9a-f]{8}_)[A-Za-z0-9_\-.~+/=]{8,}"),
        r"\1 " + REDACTED,
    ),
    # password=..., "password": "...", secret_key: ... (not has_token: true).
    (
        re.compile(
            r"(?i)(['\"]?\b(?:password|passwd|secret|secret_key|api_key|token)['\"]?"
            r"\s*[:=]\s*['\"]?)[^\s'\",}&]+"
        ),
        r"\1" + REDACTED,
    ),
)


def _literal_secrets() -> list[str]:
    """Values of the settings that are secrets (long enough to be worth matching)."""
    try:
        from django.conf import settings

        if not settings.configured:
            return []
        names = ("SECRET_KEY", "FIELD_ENCRYPTION_KEY", "METRICS_TOKEN")
        values = [str(getattr(settings, name, "") or "") for name in names]
    except Exception:  # logging must never fail because settings are half-loaded
        return []
    return [value for value in values if len(value) >= 8]


def scrub(text: str, *, literals: Iterable[str] | None = None) -> str:
    """``text`` with every secret replaced by ``[redacted]``."""
    if not text:
        return text
    for pattern, replacement in _PATTERNS:
        text = pattern.sub(replacement, text)
    for value in _literal_secrets() if literals is None else literals:
        if value and value in text:
            text = text.replace(value, REDACTED)
    return text


def _scrub_record(record: logging.LogRecord) -> None:
    try:
        message = record.getMessage()
    except Exception:  # a bad format string: leave it for the handler to report
        return
    clean = scrub(message)
    if clean != message:
        record.msg, record.args = clean, ()


class ScrubSecretsFilter(logging.Filter):
    """A handler filter: scrubs the message, the formatted traceback and the stack."""

    def filter(self, record: logging.LogRecord) -> bool:
        _scrub_record(record)
        if record.exc_info and not record.exc_text:
            # Formatter.format uses exc_text when it is set: format it now, clean.
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = scrub(record.exc_text)
        if record.stack_info:
            record.stack_info = scrub(record.stack_info)
        return True


_installed: Callable[..., logging.LogRecord] | None = None


def install_record_factory() -> None:
    """Make every LogRecord of this process scrubbed at birth (idempotent)."""
    global _installed
    current = logging.getLogRecordFactory()
    if current is _installed:
        return

    def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = current(*args, **kwargs)
        _scrub_record(record)
        return record

    _installed = factory
    logging.setLogRecordFactory(factory)


def configure(config: dict[str, Any]) -> None:
    """Django's ``LOGGING_CONFIG``: ``dictConfig``, then the scrubbing record factory."""
    logging.config.dictConfig(config)
    install_record_factory()
