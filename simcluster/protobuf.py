"""Decode Kubernetes protobuf request bodies (``application/vnd.kubernetes.protobuf``).

kubectl (client-go) sends built-in kinds as protobuf: the 4 magic bytes
``k8s\\x00`` and a ``runtime.Unknown`` message (1 typeMeta {1 apiVersion,
2 kind}, 2 raw, 3 contentEncoding, 4 contentType) whose ``raw`` is the object
encoded per k8s.io/api's ``generated.proto``. This module turns that into the
same dict a JSON body would give; the field tables are in ``protoschema``.

The answer to the client stays JSON: client-go's ``Accept`` is
``application/vnd.kubernetes.protobuf,application/json`` and it decodes
whichever the response's Content-Type names.
"""

from __future__ import annotations

import base64
import functools
import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from simcluster import errors, protoschema
from simcluster.protowire import (
    LENGTH,
    VARINT,
    Field,
    WireError,
    fields,
    is_zero,
    packed_varints,
    signed,
)

MEDIA_TYPE = "application/vnd.kubernetes.protobuf"
MAGIC = b"k8s\x00"
_SCALARS = frozenset({"str", "bool", "int", "bytes", "time", "qty", "ios", "fields"})


@dataclass(frozen=True, slots=True)
class FieldSpec:
    """How one field of a message maps to JSON."""

    name: str
    type: str  # a scalar code or a message name (see ``protoschema``)
    container: str = ""  # "", "list" or "map"
    keep_zero: bool = False
    inline: bool = False


class Unsupported(Exception):
    """The body uses a kind or a field that simcluster cannot decode."""


def _parse_field(token: str) -> tuple[int, FieldSpec]:
    number, name, type_ = token.split(":")
    keep, inline = "*" in type_, "^" in type_
    type_ = type_.rstrip("*^")
    container = ""
    if type_.startswith("["):
        container, type_ = "list", type_[1:-1]
    elif type_.startswith("{"):
        container, type_ = "map", type_[1:-1]
    return int(number), FieldSpec(name, type_, container, keep, inline)


@functools.cache
def message(name: str) -> dict[int, FieldSpec]:
    """The parsed field table of a message of ``protoschema.MESSAGES``."""
    return dict(_parse_field(tok) for tok in protoschema.MESSAGES[name].split())


def check_schema() -> None:
    """Fail loudly if a message refers to an unknown type (used by the tests)."""
    for name in protoschema.MESSAGES:
        for spec in message(name).values():
            if spec.type not in _SCALARS and spec.type not in protoschema.MESSAGES:
                raise ValueError(f"{name}.{spec.name}: unknown type {spec.type}")
    for kind in [*protoschema.KINDS.values(), *protoschema.ANY_VERSION_KINDS]:
        if kind not in protoschema.MESSAGES:
            raise ValueError(f"top-level kind {kind} has no message")


# -- the envelope ---------------------------------------------------------------
@dataclass(frozen=True)
class Envelope:
    """A decoded ``runtime.Unknown``."""

    api_version: str
    kind: str
    raw: bytes
    content_encoding: str
    content_type: str


def _text(value: int | bytes) -> str:
    if not isinstance(value, bytes):
        raise WireError("expected a length-delimited field")
    return value.decode()


def envelope(body: bytes) -> Envelope:
    """Split the magic prefix and the ``runtime.Unknown`` wrapper off a body."""
    if not body.startswith(MAGIC):
        raise WireError(
            "provided data does not appear to be a protobuf message, expected "
            "prefix [107 56 115 0]"
        )
    api_version = kind = encoding = content_type = ""
    raw = b""
    for f in fields(body[len(MAGIC) :]):
        if f.number == 1:
            for meta in fields(_bytes(f)):
                if meta.number == 1:
                    api_version = _text(meta.value)
                elif meta.number == 2:
                    kind = _text(meta.value)
        elif f.number == 2:
            raw = _bytes(f)
        elif f.number == 3:
            encoding = _text(f.value)
        elif f.number == 4:
            content_type = _text(f.value)
    return Envelope(api_version, kind, raw, encoding, content_type)


def _bytes(f: Field) -> bytes:
    if f.wire != LENGTH or not isinstance(f.value, bytes):
        raise WireError(f"field {f.number}: expected a length-delimited field")
    return f.value


def _int(f: Field) -> int:
    if f.wire != VARINT or not isinstance(f.value, int):
        raise WireError(f"field {f.number}: expected a varint")
    return signed(f.value)


# -- messages -------------------------------------------------------------------
def _time(data: bytes) -> str | None:
    seconds = nanos = 0
    for f in fields(data):
        if f.number == 1:
            seconds = _int(f)
        elif f.number == 2:
            nanos = _int(f)
    if seconds == 0 and nanos == 0:
        return None  # metav1.Time's zero value is JSON null
    try:  # metav1.Time marshals with second precision in UTC
        return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    except (OverflowError, OSError, ValueError):
        raise WireError(f"timestamp out of range: {seconds}") from None


def _quantity(data: bytes) -> str:
    return next((_text(f.value) for f in fields(data) if f.number == 1), "")


def _int_or_string(data: bytes) -> int | str:
    kind, number, text = 0, 0, ""
    for f in fields(data):
        if f.number == 1:
            kind = _int(f)
        elif f.number == 2:
            number = _int(f)
        elif f.number == 3:
            text = _text(f.value)
    return text if kind == 1 else number


def _scalar(spec: FieldSpec, f: Field, path: str) -> Any:
    """One value of a scalar field, or of a nested message."""
    kind = spec.type
    if kind == "int":
        return _int(f)
    if kind == "bool":
        return _int(f) != 0
    payload = _bytes(f)
    if kind == "str":
        return payload.decode()
    if kind == "bytes":
        return base64.b64encode(payload).decode()
    if kind == "time":
        return _time(payload)
    if kind == "qty":
        return _quantity(payload)
    if kind == "ios":
        return _int_or_string(payload)
    if kind == "fields":
        raw = next((_bytes(i) for i in fields(payload) if i.number == 1), b"{}")
        return json.loads(raw)
    return decode_message(kind, payload, path)


def _is_empty(value: Any) -> bool:
    return value is None or value in ("", 0, False) or value == {}


def _map_entry(spec: FieldSpec, data: bytes, path: str) -> tuple[str, Any]:
    key: str = ""
    value: Any = ""  # maps hold strings, bytes or quantities; all default to ""
    for f in fields(data):
        if f.number == 1:
            key = _text(f.value)
        elif f.number == 2:
            value = _scalar(spec, f, path)
    return key, value


def decode_message(name: str, data: bytes, path: str = "") -> dict[str, Any]:
    """Decode one message of ``protoschema.MESSAGES`` into its JSON form."""
    table = message(name)
    out: dict[str, Any] = {}
    for f in fields(data):
        spec = table.get(f.number)
        if spec is None:
            if is_zero(f):
                continue  # an unset field that Go writes anyway
            where = f" (at {path})" if path else ""
            raise Unsupported(f"field {f.number} of {name}{where}")
        here = f"{path}.{spec.name}" if path else spec.name
        if spec.container == "map":
            key, value = _map_entry(spec, _bytes(f), here)
            out.setdefault(spec.name, {})[key] = value
        elif spec.container == "list":
            items = out.setdefault(spec.name, [])
            if spec.type == "int" and f.wire == LENGTH:
                items.extend(signed(v) for v in packed_varints(_bytes(f)))
            else:
                items.append(_scalar(spec, f, f"{here}[{len(items)}]"))
        else:
            value = _scalar(spec, f, here)
            if spec.inline:
                out.update(value)
            elif spec.keep_zero or not _is_empty(value):
                out[spec.name] = value
            else:
                out.pop(spec.name, None)  # a repeated occurrence resets it
    return out


def decode(body: bytes, expected_kind: str) -> dict[str, Any]:
    """Decode a protobuf request body into the dict a JSON body would give.

    Raises ``ApiError`` 400 for malformed bytes and 415 for kinds or fields that
    simcluster does not decode (named in the message), never anything else.
    """
    try:
        env = envelope(body)
        if env.content_encoding:
            raise Unsupported(f"content encoding {env.content_encoding!r}")
        name = protoschema.KINDS.get((env.api_version, env.kind))
        if name is None and env.kind in protoschema.ANY_VERSION_KINDS:
            name = env.kind
        if name is None:
            raise Unsupported(
                f"kind {env.kind or expected_kind} ({env.api_version or '?'})"
            )
        obj = decode_message(name, env.raw)
    except Unsupported as exc:
        raise errors.ApiError(
            415,
            "UnsupportedMediaType",
            f"simcluster cannot decode {exc} from {MEDIA_TYPE}; "
            "send it as application/json",
        ) from None
    except (WireError, UnicodeDecodeError, ValueError) as exc:
        raise errors.bad_request(
            f"the body of the request was in an unknown format: {exc}"
        ) from None
    head: dict[str, Any] = {}
    if env.kind:
        head = {"kind": env.kind, "apiVersion": env.api_version}
    return head | obj
