"""``GET /api/v1/namespaces/{ns}/pods/{name}/log``, as kube-apiserver and the
node's kubelet answer it between them.

kube-apiserver (``pkg/registry/core/pod/rest/log.go`` and ``strategy.go``
``LogLocation``) decodes the query into ``PodLogOptions`` (a malformed value
is 400), validates it (422 ``PodLogOptions "p" is invalid``), finds the pod
(404) and the container (400 when none is named and the pod has several, or
the one named is not in it); a pod on no node yet answers 204 with no body.
It forwards ``sinceTime`` to the kubelet formatted as RFC 3339, so **to the
second**: a reader that resumes from a line's timestamp gets that second's
earlier lines again and must drop what it already has.

The kubelet (``validateContainerLogStatus`` and the CRI log reader) refuses a
container that has not started (400 ``container "c" in pod "p" is waiting to
start: ContainerCreating``) or has no previous instance; else it applies
``tailLines`` first, then ``sinceSeconds``/``sinceTime`` (lines at or after
it), prefixes ``timestamps`` and cuts at ``limitBytes``, even mid-line.
``follow`` streams until the container has terminated or the pod is gone.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from simcluster import errors, resources
from simcluster.podlogs import LogBook, LogLine, kubelet_timestamp
from simcluster.store import Obj, Store

TEXT = {"Content-Type": "text/plain"}
# kube-apiserver negotiates pods/log like any object (its serializers: JSON,
# YAML, protobuf) though it answers text: an Accept of text/plain alone is a
# 406 (the portal once asked so; the real API server refused it).
SERIALIZED = (
    "application/json",
    "application/yaml",
    "application/vnd.kubernetes.protobuf",
)


def acceptable(accept: str) -> bool:
    """Whether kube-apiserver would serve a log to this ``Accept`` header."""
    if not accept.strip():
        return True
    ranges = {part.split(";", 1)[0].strip().lower() for part in accept.split(",")}
    return bool(ranges & {"*/*", "application/*", *SERIALIZED})


def not_acceptable() -> errors.ApiError:
    return errors.ApiError(
        406,
        "NotAcceptable",
        "only the following media types are accepted: " + ", ".join(SERIALIZED),
    )


POLL_SECONDS = 0.25  # how soon a follower notices its pod went
_INT = re.compile(r"[+-]?[0-9]+")
_RFC3339 = re.compile(
    r"(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(\.\d+)?(Z|[+-]\d{2}:\d{2})"
)
_GO_RFC3339 = "2006-01-02T15:04:05Z07:00"


@dataclass(frozen=True)
class LogOptions:
    """``PodLogOptions`` as the kubelet gets them (``since_ns`` resolved)."""

    container: str = ""
    follow: bool = False
    previous: bool = False
    timestamps: bool = False
    tail_lines: int | None = None
    limit_bytes: int | None = None
    since_seconds: int | None = None
    since_time: int | None = None  # whole seconds since the epoch

    def since_ns(self, now_ns: int) -> int | None:
        """The earliest line time wanted (the later of the two), or None."""
        since = None
        if self.since_seconds is not None:
            since = now_ns - self.since_seconds * 1_000_000_000
        if self.since_time is not None:
            at = self.since_time * 1_000_000_000
            since = at if since is None else max(since, at)
        return since


def _bool(query: dict[str, str], key: str) -> bool:
    """Query booleans as the apiserver converts them: only absent, ``0`` and
    ``false`` (any case) are false; anything else, ``""`` included, is true."""
    if key not in query:
        return False
    value = query[key]
    return not (value == "0" or value.lower() == "false")


def _int(query: dict[str, str], key: str) -> int | None:
    text = query.get(key)
    if text is None:
        return None
    if not _INT.fullmatch(text) or not -(2**63) <= int(text) < 2**63:
        kind = "invalid syntax" if not _INT.fullmatch(text) else "value out of range"
        raise errors.bad_request(f'strconv.ParseInt: parsing "{text}": {kind}')
    return int(text)


def _since_time(text: str | None) -> int | None:
    """``sinceTime`` (RFC 3339, fraction allowed) as whole epoch seconds."""
    if text is None:
        return None
    match = _RFC3339.fullmatch(text)
    try:
        if match is None:
            raise ValueError(text)
        zone = "+00:00" if match.group(3) == "Z" else match.group(3)
        moment = datetime.fromisoformat(match.group(1) + zone)
    except ValueError:
        raise errors.bad_request(
            f'parsing time "{text}" as "{_GO_RFC3339}": cannot parse "{text}" '
            f'as "{_GO_RFC3339}"'
        ) from None
    return int(moment.timestamp())


def parse_options(query: dict[str, str]) -> LogOptions:
    """Decode the query (400 for a value that is not of its type)."""
    return LogOptions(
        container=query.get("container", ""),
        follow=_bool(query, "follow"),
        previous=_bool(query, "previous"),
        timestamps=_bool(query, "timestamps"),
        tail_lines=_int(query, "tailLines"),
        limit_bytes=_int(query, "limitBytes"),
        since_seconds=_int(query, "sinceSeconds"),
        since_time=_since_time(query.get("sinceTime")),
    )


def validate(options: LogOptions, name: str) -> None:
    """``ValidatePodLogOptions``: 422 Invalid with kube's field messages."""
    problems: list[tuple[str, str, str]] = []  # (field, reason, body)
    if options.tail_lines is not None and options.tail_lines < 0:
        body = (
            f"Invalid value: {options.tail_lines}: must be greater than or equal to 0"
        )
        problems.append(("tailLines", "FieldValueInvalid", body))
    if options.limit_bytes is not None and options.limit_bytes < 1:
        body = f"Invalid value: {options.limit_bytes}: must be greater than 0"
        problems.append(("limitBytes", "FieldValueInvalid", body))
    if options.since_seconds is not None and options.since_time is not None:
        body = (
            "Forbidden: at most one of `sinceTime` or `sinceSeconds` may be specified"
        )
        problems.append(("", "FieldValueForbidden", body))
    elif options.since_seconds is not None and options.since_seconds < 1:
        body = f"Invalid value: {options.since_seconds}: must be greater than 0"
        problems.append(("sinceSeconds", "FieldValueInvalid", body))
    if not problems:
        return
    texts = [f"{field}: {body}" for field, _, body in problems]
    text = texts[0] if len(texts) == 1 else "[" + ", ".join(texts) + "]"
    causes = [
        {"reason": reason, "message": body, "field": field}
        for field, reason, body in problems
    ]
    raise errors.ApiError(
        422,
        "Invalid",
        f'PodLogOptions "{name}" is invalid: {text}',
        {"name": name, "kind": "PodLogOptions", "causes": causes},
    )


def _names(spec: Obj, *keys: str) -> list[str]:
    return [str(c.get("name", "")) for key in keys for c in spec.get(key) or []]


def choose_container(pod: Obj, wanted: str) -> str:
    """kube-apiserver's ``validateContainer``: the container to read (400 else)."""
    spec = pod.get("spec") or {}
    name = pod["metadata"]["name"]
    everything = _names(spec, "initContainers", "containers", "ephemeralContainers")
    if wanted:
        if wanted not in everything:
            raise errors.bad_request(f"container {wanted} is not valid for pod {name}")
        return wanted
    containers = _names(spec, "containers")
    if len(containers) == 1:
        return containers[0]
    if not containers:
        raise errors.bad_request(f"a container name must be specified for pod {name}")
    raise errors.bad_request(
        f"a container name must be specified for pod {name}, "
        f"choose one of: [{' '.join(everything)}]"
    )


def _status_of(pod: Obj, container: str) -> dict[str, Any] | None:
    status = pod.get("status") or {}
    for key in (
        "containerStatuses",
        "initContainerStatuses",
        "ephemeralContainerStatuses",
    ):
        for entry in status.get(key) or []:
            if entry.get("name") == container:
                return dict(entry)
    return None


def _waiting_message(reason: str) -> str:
    if reason == "ErrImagePull":
        return "image can't be pulled"
    if reason == "ImagePullBackOff":
        return "trying and failing to pull image"
    return reason


def log_container_id(pod: Obj, container: str, previous: bool) -> str:
    """The kubelet's ``validateContainerLogStatus``: whose log to read (400 else)."""
    name = pod["metadata"]["name"]
    where = f'container "{container}" in pod "{name}"'
    entry = _status_of(pod, container)
    if entry is None:
        if (pod.get("status") or {}).get("phase", "Pending") != "Pending":
            raise errors.bad_request(f"{where} is not available")
        # Bound but not started yet: the kubelet reports ContainerCreating.
        entry = {"state": {"waiting": {"reason": "ContainerCreating"}}}
    state = entry.get("state") or {}
    last = (entry.get("lastState") or {}).get("terminated")
    if previous:
        if not last or not last.get("containerID"):
            raise errors.bad_request(f"previous terminated {where} not found")
        return str(last["containerID"])
    if state.get("running") is not None:
        return str(entry.get("containerID") or "")
    if state.get("terminated") is not None:
        found = state["terminated"].get("containerID") or (last or {}).get(
            "containerID"
        )
        if not found:
            raise errors.bad_request(f"{where} is terminated")
        return str(found)
    if last is not None:
        if not last.get("containerID"):
            raise errors.bad_request(f"{where} is terminated")
        return str(last["containerID"])
    if state.get("waiting") is not None:
        reason = _waiting_message(str(state["waiting"].get("reason") or ""))
        raise errors.bad_request(f"{where} is waiting to start: {reason}")
    raise errors.bad_request(f"{where} is waiting to start - no logs yet")


class _Writer:
    """Renders lines as the kubelet writes them: since filter, timestamps and
    the byte limit, which holds across a whole (followed) stream."""

    def __init__(self, options: LogOptions, since_ns: int | None) -> None:
        self.options = options
        self.since_ns = since_ns
        self.remain = options.limit_bytes

    @property
    def full(self) -> bool:
        """The byte limit is reached: the stream ends."""
        return self.remain is not None and self.remain <= 0

    def render(self, lines: list[LogLine]) -> bytes:
        out = bytearray()
        for line in lines:
            if self.full:
                break
            if self.since_ns is not None and line.at_ns < self.since_ns:
                continue
            text = line.text
            if self.options.timestamps:
                text = kubelet_timestamp(line.at_ns).encode() + b" " + text
            if self.remain is not None:
                text = text[: self.remain]
                self.remain -= len(text)
            out += text
        return bytes(out)


def _tail(lines: list[LogLine], count: int | None) -> list[LogLine]:
    if count is None:
        return lines
    return lines[len(lines) - count :] if count else []


@dataclass
class _Follow:
    """What a follower needs to know whether its container still runs."""

    store: Store
    book: LogBook
    namespace: str
    name: str
    uid: str
    container: str
    stopping: threading.Event

    def ended(self) -> bool:
        found = self.store.get(resources.POD, self.namespace, self.name)
        if found is None or found.obj["metadata"].get("uid") != self.uid:
            return True  # deleted (and maybe made again): that container is gone
        entry = _status_of(found.obj, self.container) or {}
        return (entry.get("state") or {}).get("terminated") is not None

    def timeout(self, container_id: str) -> float:
        due = self.book.next_due(container_id)
        if due is None:
            return POLL_SECONDS
        return min(POLL_SECONDS, max(0.0, (due - time.time_ns()) / 1e9))


def _stream(
    follow: _Follow, container_id: str, options: LogOptions, writer: _Writer
) -> Iterator[bytes]:
    """The followed log: what is there (tailed), then lines as they are printed,
    until the container ends (its last lines included) or the pod goes.

    Yields ``b""`` while nothing happens: the transport then checks that the
    client is still there (a chunked body has no keep-alive of its own).
    """
    lines, cursor = follow.book.read(container_id)
    chunk = writer.render(_tail(lines, options.tail_lines))
    while True:
        yield chunk
        if writer.full or follow.stopping.is_set():
            return
        follow.book.wait(follow.timeout(container_id))
        # The kubelet prints a container's last lines before it writes its
        # end: read after looking, and the end comes with every line.
        ended = follow.ended()
        lines, cursor = follow.book.read(container_id, cursor)
        chunk = writer.render(lines)
        if ended:
            if chunk:
                yield chunk
            return


def serve(
    store: Store,
    book: LogBook,
    namespace: str,
    name: str,
    query: dict[str, str],
    stopping: threading.Event,
) -> tuple[int, bytes, Iterator[bytes] | None]:
    """Answer a pod log request: (status, body, stream or None)."""
    options = parse_options(query)
    validate(options, name)
    pod = store.require(resources.POD, namespace, name).obj
    container = choose_container(pod, options.container)
    if not (pod.get("spec") or {}).get("nodeName"):
        return 204, b"", None  # on no node: no kubelet to ask, an empty answer
    container_id = log_container_id(pod, container, options.previous)
    writer = _Writer(options, options.since_ns(time.time_ns()))
    running = _status_of(pod, container) or {}
    if (
        options.follow
        and not options.previous
        and (running.get("state") or {}).get("running") is not None
    ):
        uid = pod["metadata"].get("uid", "")
        follow = _Follow(store, book, namespace, name, uid, container, stopping)
        return 200, b"", _stream(follow, container_id, options, writer)
    lines, _ = book.read(container_id)
    return 200, writer.render(_tail(lines, options.tail_lines)), None
