"""The site's Prometheus over its HTTP API: instant and range queries.

Every failure (not configured, refused, slow, an error answer) becomes one
``MetricsUnavailable`` with a reason an admin can act on; callers show booked
figures and that reason, so a missing Prometheus never fails a page.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import requests
from django.conf import settings
from django.utils import timezone

Labels = Mapping[str, str]


class MetricsUnavailable(Exception):
    """Prometheus is not configured, did not answer in time, or refused."""

    def __init__(self, reason: str, *, configured: bool = True) -> None:
        super().__init__(reason)
        self.reason = reason
        self.configured = configured


@dataclass(frozen=True)
class Sample:
    """One series of an instant vector: its labels and value."""

    labels: Labels
    value: float


@dataclass(frozen=True)
class Series:
    """One series of a range query: its labels and (epoch seconds, value) points."""

    labels: Labels
    points: list[tuple[float, float]]


@dataclass
class MetricsStatus:
    """What a usage answer says about its ``used`` figures."""

    configured: bool
    available: bool
    reason: str = ""
    queried_at: datetime = field(default_factory=timezone.now)

    @classmethod
    def ok(cls) -> MetricsStatus:
        return cls(configured=True, available=True)

    @classmethod
    def failed(cls, error: MetricsUnavailable) -> MetricsStatus:
        return cls(configured=error.configured, available=False, reason=error.reason)


class Prometheus:
    """A client for one Prometheus (``PROMETHEUS_URL``), one HTTP session."""

    def __init__(self, url: str, *, token: str = "", timeout: float = 5.0) -> None:
        if not url:
            raise MetricsUnavailable(
                "Prometheus is not configured: set PROMETHEUS_URL to see what the "
                "slices use.",
                configured=False,
            )
        self.url = url.rstrip("/")
        self.timeout = timeout
        self.token = token
        self._local = threading.local()
        self._pool_lock = threading.Lock()
        self._pool: ThreadPoolExecutor | None = None

    @property
    def session(self) -> requests.Session:
        """This thread's session: its kept-alive connection is reused by the
        next query (a Session is not meant to be shared between threads)."""
        session = getattr(self._local, "session", None)
        if session is None:
            session = self._local.session = requests.Session()
            if self.token:
                session.headers["Authorization"] = f"Bearer {self.token}"
        return session

    def query_many(
        self, queries: Mapping[str, str], *, at: datetime | None = None
    ) -> dict[str, list[Sample]]:
        """Several instant queries at once (Prometheus evaluates them in
        parallel), all within one PROMETHEUS_TIMEOUT_SECONDS."""
        return self.gather(
            {
                name: functools.partial(self.query, q, at=at)
                for name, q in queries.items()
            }
        )

    def gather(self, calls: Mapping[str, Callable[[], Any]]) -> dict[str, Any]:
        """Run ``calls`` at once on the kept threads; their answers by name.

        The whole batch has one deadline, the timeout (plus a second for the
        answers' parsing): a slow Prometheus costs a page that long, not that
        long per query. The first failure is raised.
        """
        pool = self._threads()
        futures = {name: pool.submit(call) for name, call in calls.items()}
        done, pending = wait(
            futures.values(), timeout=self.timeout + 1, return_when=FIRST_EXCEPTION
        )
        for future in done:
            if future.exception() is not None:
                for other in pending:
                    other.cancel()
                raise future.exception()  # type: ignore[misc]
        if pending:
            for future in pending:
                future.cancel()
            raise MetricsUnavailable(
                f"Prometheus at {self.url} did not answer within "
                f"{self.timeout:g} s (PROMETHEUS_TIMEOUT_SECONDS)."
            )
        return {name: future.result() for name, future in futures.items()}

    def _threads(self) -> ThreadPoolExecutor:
        with self._pool_lock:
            if self._pool is None:
                # Kept with the client, so its threads' sessions (connections) are too.
                self._pool = ThreadPoolExecutor(
                    max_workers=8, thread_name_prefix="prometheus"
                )
            return self._pool

    def query(self, promql: str, *, at: datetime | None = None) -> list[Sample]:
        """An instant query; the vector's samples."""
        params = {"query": promql}
        if at is not None:
            params["time"] = f"{at.timestamp():.3f}"
        data = self._call("query", params)
        if data.get("resultType") == "scalar":
            return [Sample({}, _number(data["result"][1]))]
        return [
            Sample(row.get("metric", {}), _number(row["value"][1]))
            for row in data.get("result", [])
        ]

    def query_range(
        self, promql: str, *, start: datetime, end: datetime, step: int
    ) -> list[Series]:
        """A range query; every series with its points."""
        data = self._call(
            "query_range",
            {
                "query": promql,
                "start": f"{start.timestamp():.3f}",
                "end": f"{end.timestamp():.3f}",
                "step": str(step),
            },
        )
        return [
            Series(
                row.get("metric", {}),
                [(float(t), _number(v)) for t, v in row.get("values", [])],
            )
            for row in data.get("result", [])
        ]

    def _call(self, endpoint: str, params: dict[str, str]) -> dict[str, Any]:
        # POST: queries naming many pods are longer than a URL may be.
        try:
            answer = self.session.post(
                f"{self.url}/api/v1/{endpoint}", data=params, timeout=self.timeout
            )
        except requests.Timeout:
            raise MetricsUnavailable(
                f"Prometheus at {self.url} did not answer within "
                f"{self.timeout:g} s (PROMETHEUS_TIMEOUT_SECONDS)."
            ) from None
        except requests.RequestException as error:
            raise MetricsUnavailable(
                f"Prometheus at {self.url} could not be reached: "
                f"{type(error).__name__}."
            ) from None
        try:
            body = answer.json()
        except ValueError:
            body = {}
        if answer.status_code != 200 or body.get("status") != "success":
            detail = body.get("error") or answer.reason or "no reason given"
            raise MetricsUnavailable(
                f"Prometheus at {self.url} answered {answer.status_code}: {detail}"
            )
        return body.get("data", {})


def _number(text: str) -> float:
    # Prometheus writes NaN and ±Inf as strings; float() reads all three.
    return float(text)


_clients: dict[tuple[str, str, float], Prometheus] = {}
_clients_lock = threading.Lock()


def prometheus() -> Prometheus:
    """The configured Prometheus (raises MetricsUnavailable when there is none).

    One client per configuration, kept: its threads' connections stay open
    between page loads instead of a new TCP (and TLS) handshake per query.
    """
    key = (
        settings.PROMETHEUS_URL,
        settings.PROMETHEUS_TOKEN,
        settings.PROMETHEUS_TIMEOUT_SECONDS,
    )
    with _clients_lock:
        client = _clients.get(key)
        if client is None:
            client = _clients[key] = Prometheus(key[0], token=key[1], timeout=key[2])
        return client
