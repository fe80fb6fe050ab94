"""A watch's bytes into events: lines cut anywhere by the transport still
give every event once, whole and in order."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from kubernetes.client.rest import ApiException

from apps.inventory.sync.kubeapi import Gone, WatchStream


class _Body:
    """The part of urllib3's HTTPResponse a WatchStream reads: its chunks."""

    def __init__(self, chunks: list[bytes]) -> None:
        self.chunks = chunks
        self.released = False

    def stream(self, amt: int, decode_content: bool) -> Iterator[bytes]:
        yield from self.chunks

    def release_conn(self) -> None:
        self.released = True


def _events(n: int) -> list[dict]:
    return [
        {
            "type": "MODIFIED",
            "object": {"metadata": {"name": f"pod-{i}", "resourceVersion": str(i)}},
        }
        for i in range(n)
    ]


def _wire(events: list[dict]) -> bytes:
    # An empty line too: servers may send keep-alive newlines.
    return b"\n".join(json.dumps(e).encode() for e in events) + b"\n\n"


@pytest.mark.parametrize("size", [1, 7, 64, 1000, 1 << 16])
def test_events_cut_at_any_size_arrive_whole_and_in_order(size):
    events = _events(40)
    wire = _wire(events)
    body = _Body([wire[i : i + size] for i in range(0, len(wire), size)])
    assert list(WatchStream(body).events()) == events
    assert body.released


def test_a_line_without_its_end_is_not_an_event():
    events = _events(2)
    wire = _wire(events) + b'{"type": "MODIFIED", "obj'
    assert list(WatchStream(_Body([wire])).events()) == events


def test_an_expired_resource_version_is_gone_and_other_errors_raise():
    gone = {"type": "ERROR", "object": {"code": 410, "message": "too old"}}
    stream = WatchStream(_Body([_wire([*_events(1), gone])]))
    seen = []
    with pytest.raises(Gone):
        seen.extend(stream.events())
    assert seen == _events(1)
    failed = {"type": "ERROR", "object": {"code": 500, "message": "boom"}}
    with pytest.raises(ApiException):
        list(WatchStream(_Body([_wire([failed])])).events())
