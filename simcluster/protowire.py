"""The protobuf wire format: varints and tagged fields (decoding only).

Just enough of https://protobuf.dev/programming-guides/encoding/ to read the
messages client-go writes: wire types 0 (varint), 1 (64-bit), 2 (length-delimited)
and 5 (32-bit). Groups (3, 4) are deprecated and never produced by Kubernetes.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

VARINT, FIXED64, LENGTH, FIXED32 = 0, 1, 2, 5


class WireError(ValueError):
    """The bytes are not a well-formed protobuf message."""


@dataclass(frozen=True, slots=True)
class Field:
    """One field occurrence: number, wire type and raw value."""

    number: int
    wire: int
    value: int | bytes  # an int for varint/fixed, the payload bytes for LENGTH


def read_varint(data: bytes, pos: int) -> tuple[int, int]:
    """Decode a base-128 varint at ``pos``; returns (value, next position)."""
    result = shift = 0
    while True:
        if pos >= len(data):
            raise WireError("truncated varint")
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7
        if shift >= 64:
            raise WireError("varint longer than 10 bytes")


def signed(value: int) -> int:
    """A varint as Go's int32/int64 (negative numbers are 64-bit two's complement)."""
    return value - (1 << 64) if value >= 1 << 63 else value


def fields(data: bytes) -> Iterator[Field]:
    """The fields of one message, in wire order."""
    pos = 0
    while pos < len(data):
        key, pos = read_varint(data, pos)
        number, wire = key >> 3, key & 7
        if number == 0:
            raise WireError("field number 0")
        if wire == VARINT:
            value, pos = read_varint(data, pos)
            yield Field(number, wire, value)
        elif wire == LENGTH:
            size, pos = read_varint(data, pos)
            if pos + size > len(data):
                raise WireError("truncated length-delimited field")
            yield Field(number, wire, data[pos : pos + size])
            pos += size
        elif wire in (FIXED64, FIXED32):
            width = 8 if wire == FIXED64 else 4
            if pos + width > len(data):
                raise WireError("truncated fixed-width field")
            yield Field(number, wire, int.from_bytes(data[pos : pos + width], "little"))
            pos += width
        else:
            raise WireError(f"unsupported wire type {wire}")


def packed_varints(data: bytes) -> list[int]:
    """The values of a packed repeated varint field."""
    out: list[int] = []
    pos = 0
    while pos < len(data):
        value, pos = read_varint(data, pos)
        out.append(value)
    return out


def is_zero(field: Field) -> bool:
    """Whether a field carries only zero values (what Go emits for unset fields).

    gogo-protobuf writes every non-pointer field, set or not: ``""``, ``0``,
    ``false`` and empty structs appear on the wire. An empty length-delimited
    field, or one that parses as a message of zero fields, says nothing.
    """
    if field.wire != LENGTH:
        return field.value == 0
    payload = field.value
    if not isinstance(payload, bytes) or not payload:
        return True
    try:
        return all(is_zero(inner) for inner in fields(payload))
    except WireError:
        return False  # a non-empty string or bytes value
