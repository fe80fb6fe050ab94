"""The alert definitions checked against samples of ``/metrics`` directly, and
their text (summary, portal page) rendered from an alert's labels.

This is how the portal shows its alerts when no Alertmanager is configured:
the same metric, matchers, comparison and threshold as the Prometheus rule,
applied to the samples of one scrape. Two things a rule has cannot be had
from one scrape, and the caller says so rather than pretending:

- ``for``: a condition true now is shown as such, not as one that held;
- ``increase(...[window])`` of a counter needs the counter's history, so
  those alerts are not evaluated here (:func:`needs_history`).

Only the template forms the definitions use are rendered: ``$labels.<name>``,
``$value`` and its ``humanize``, ``humanizeDuration`` and
``humanizePercentage`` filters, with Prometheus's output for them.
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from apps.common.alerting.definitions import Alert

Labels = Mapping[str, str]

_OPS: dict[str, Callable[[float, float], bool]] = {
    ">": operator.gt,
    ">=": operator.ge,
    "<": operator.lt,
    "<=": operator.le,
    "==": operator.eq,
    "!=": operator.ne,
}
_MATCHER = re.compile(
    r'\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*"((?:[^"\\]|\\.)*)"\s*'
)
_TEMPLATE = re.compile(
    r"\{\{\s*\$(?:labels\.([a-zA-Z_][a-zA-Z0-9_]*)|(value))\s*(?:\|\s*(\w+)\s*)?\}\}"
)


@dataclass(frozen=True)
class Sample:
    """One sample of a scrape: the series' name, its labels and value."""

    name: str
    labels: Labels
    value: float


@dataclass(frozen=True)
class Firing:
    """An alert whose condition holds now for one series."""

    alert: Alert
    labels: dict[str, str]
    value: float


def needs_history(alert: Alert) -> bool:
    """True for an alert on a counter's increase: one scrape cannot tell it."""
    return bool(alert.increase_over)


def matchers(text: str) -> list[tuple[str, str, str]]:
    """``state=~"stale|error",x="y"`` as ``[(label, op, value), ...]``."""
    found: list[tuple[str, str, str]] = []
    rest = text.strip()
    while rest:
        match = _MATCHER.match(rest)
        if match is None:
            raise ValueError(f"unreadable matchers: {text!r}")
        found.append((match[1], match[2], match[3].replace('\\"', '"')))
        rest = rest[match.end() :].removeprefix(",").strip()
    return found


def _matches(labels: Labels, wanted: list[tuple[str, str, str]]) -> bool:
    for name, op, value in wanted:
        have = labels.get(name, "")
        # Prometheus anchors a regex matcher at both ends.
        if op == "=" and have != value:
            return False
        if op == "!=" and have == value:
            return False
        if op == "=~" and not re.fullmatch(value, have):
            return False
        if op == "!~" and re.fullmatch(value, have):
            return False
    return True


def evaluate(alerts: Iterable[Alert], samples: Iterable[Sample]) -> list[Firing]:
    """Every (alert, series) whose condition holds in ``samples``, in the
    order of ``alerts``; alerts that :func:`needs_history` are skipped."""
    by_name: dict[str, list[Sample]] = {}
    for sample in samples:
        by_name.setdefault(sample.name, []).append(sample)
    firing: list[Firing] = []
    for alert in alerts:
        if needs_history(alert):
            continue
        wanted = matchers(alert.matchers)
        holds = _OPS[alert.op]
        for sample in by_name.get(alert.metric, []):
            if math.isnan(sample.value) or not _matches(sample.labels, wanted):
                continue
            if holds(sample.value, alert.threshold):
                firing.append(Firing(alert, dict(sample.labels), sample.value))
    return firing


def render(template: str, labels: Labels, value: float | None = None) -> str:
    """A definition's summary or page with ``labels`` (and ``value``) filled
    in; a missing label is empty, as in Prometheus."""

    def one(match: re.Match[str]) -> str:
        label, is_value, function = match[1], match[2], match[3]
        if label:
            return labels.get(label, "")
        if is_value and value is None:
            return "?"
        return _FILTERS.get(function or "", _plain)(float(value or 0.0))

    return _TEMPLATE.sub(one, template)


def _plain(value: float) -> str:
    return f"{value:g}"


def humanize_duration(seconds: float) -> str:
    """Prometheus's ``humanizeDuration``: ``1h 2m 3s``, ``45s``."""
    if math.isnan(seconds) or math.isinf(seconds):
        return f"{seconds:.4g}"
    if seconds == 0:
        return "0s"
    if abs(seconds) < 1:
        return f"{_small(seconds)}s"  # 500ms
    sign = "-" if seconds < 0 else ""
    seconds = abs(seconds)
    whole = int(seconds)
    days, rest = divmod(whole, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{sign}{days}d {hours}h {minutes}m {secs}s"
    if hours:
        return f"{sign}{hours}h {minutes}m {secs}s"
    if minutes:
        return f"{sign}{minutes}m {secs}s"
    return f"{sign}{seconds:.4g}s"


def humanize(value: float) -> str:
    """Prometheus's ``humanize``: ``1.5k`` for 1500, ``3`` for 3."""
    if value == 0 or math.isnan(value) or math.isinf(value):
        return f"{value:.4g}"
    if abs(value) < 1:
        return _small(value)  # 500m
    for prefix in ("", "k", "M", "G", "T", "P", "E"):
        if abs(value) < 1000:
            return f"{value:.4g}{prefix}"
        value /= 1000
    return f"{value:.4g}Z"


def _small(value: float) -> str:
    """A magnitude below 1 with Prometheus's SI prefix: ``0.5`` -> ``500m``."""
    prefix = ""
    for step in ("m", "u", "n", "p", "f", "a", "z", "y"):
        if abs(value) >= 1:
            break
        prefix, value = step, value * 1000
    return f"{value:.4g}{prefix}"


_FILTERS: dict[str, Callable[[float], str]] = {
    "humanizeDuration": humanize_duration,
    "humanizePercentage": lambda v: f"{v * 100:.4g}%",
    "humanize": humanize,
}
