"""The API's JSON parser: a body is refused with a 400 naming the field before any
view sees it when it could only end in a 500, or cost far more than its size.

Python's ``json`` has no depth limit of its own: a body nested about 990 levels
deep (on any endpoint, the anonymous login included) exhausts the interpreter's
recursion limit while parsing or, later, while a serializer walks it. PostgreSQL
refuses NUL (``\\u0000``) in ``text`` and ``jsonb``, and a lone surrogate
(``\\ud800``) cannot be encoded as UTF-8, neither by the database driver nor
by the JSON renderer that echoes a bad choice back in its message. None of
these has a meaning in any field of this API, so they are refused here, once,
for every endpoint, with the path of the offending value
(``workload.env.TOKEN``, ``pod_template.spec.containers[0].name``).
"""

from __future__ import annotations

import codecs
import re
from typing import Any

from django.conf import settings
from django.utils.translation import gettext as _
from rest_framework.exceptions import ParseError, ValidationError
from rest_framework.parsers import JSONParser
from rest_framework.utils import json

# The deepest legitimate body (a PodTemplateSpec with probes and affinity) is
# about a dozen levels; 64 leaves room and stays far below Python's recursion
# limit of 1000, which the parser and the serializers share with the request's
# own stack frames.
MAX_JSON_DEPTH = 64
# Values in one body (every array item and object member, at any depth). The
# per-value checks below walk the parsed body in Python: a 2.4 MB login body
# holding a 1.2-million-item array cost ~2 s of CPU, anonymously. The largest
# legitimate body (a pod template of POD_TEMPLATE_MAX_BYTES) holds a few
# hundred; over the limit the body is refused after a count that only looks
# at containers' lengths.
MAX_JSON_ELEMENTS = 20_000

NUL = "\x00"


def _has_lone_surrogate(text: str) -> bool:
    # json.loads turns an unpaired "\ud800" escape into a lone surrogate, which
    # no UTF-8 encoder accepts; paired escapes become one proper code point.
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _string_problem(text: str) -> str | None:
    if NUL in text:
        return _("contains a NUL character (\\u0000), which is not allowed")
    if _has_lone_surrogate(text):
        return _("contains a lone UTF-16 surrogate, which is not valid Unicode")
    return None


def _child_path(parent: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{parent}[{key}]"
    return f"{parent}.{key}" if parent else key


def _field(path: str) -> str:
    """The top-level field of ``path`` (``body`` for a value at the root)."""
    head = path.split(".", 1)[0].split("[", 1)[0]
    return head or "body"


def _count_exceeds(value: Any, limit: int) -> bool:
    """Whether ``value`` holds more than ``limit`` values (stops once it does)."""
    count = 0
    stack = [value]
    while stack:
        item = stack.pop()
        members = item.values() if isinstance(item, dict) else item
        count += len(members)
        if count > limit:
            return True
        stack.extend(m for m in members if isinstance(m, dict | list))
    return False


def check_size(data: Any, *, max_elements: int = MAX_JSON_ELEMENTS) -> None:
    """Refuse a body of more than ``max_elements`` values, naming the largest field.

    Raises:
        ValidationError: naming the top-level field that holds the most
            values (``body`` for a body that is not an object).
    """
    if not isinstance(data, dict | list) or not _count_exceeds(data, max_elements):
        return
    field = "body"
    if isinstance(data, dict):
        for key, value in data.items():
            if isinstance(value, dict | list) and _count_exceeds(
                value, max_elements // 2
            ):
                field = key if not _string_problem(key) else "body"
                break
    raise ValidationError(
        {field: [_("holds more than %(count)d values") % {"count": max_elements}]}
    )


def check_parsed(data: Any, *, max_depth: int = MAX_JSON_DEPTH) -> None:
    """Refuse parsed JSON that nests deeper than ``max_depth`` or holds NUL or lone
    surrogates in a key or value.

    The walk is iterative, so a deep document cannot exhaust the stack here.

    Raises:
        ValidationError: naming the path of the first offending value (the
            top-level field for depth, where the full path would be the problem).
    """
    stack: list[tuple[Any, str, int]] = [(data, "", 1)]
    while stack:
        value, path, depth = stack.pop()
        if isinstance(value, str):
            problem = _string_problem(value)
            if problem:
                raise ValidationError({path or "body": [problem]})
            continue
        if not isinstance(value, dict | list):
            continue
        if depth > max_depth:
            raise ValidationError(
                {
                    _field(path): [
                        _("nested deeper than %(count)d levels") % {"count": max_depth}
                    ]
                }
            )
        if isinstance(value, dict):
            for key, item in value.items():
                problem = _string_problem(key)
                if problem:
                    # The key itself cannot go into the path: it may not encode.
                    raise ValidationError(
                        {
                            path or "body": [
                                _("a key %(problem)s") % {"problem": problem}
                            ]
                        }
                    )
                stack.append((item, _child_path(path, key), depth + 1))
        else:
            for index, item in enumerate(value):
                stack.append((item, _child_path(path, index), depth + 1))


_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}:]')


def _deep_field(text: str, max_depth: int) -> str:
    """The top-level field holding the first value nested deeper than ``max_depth``.

    Only for a body too deep for ``json`` itself (hundreds of levels): a scan
    of its strings and brackets, which stops at the first level too deep.
    """
    depth, key, pending = 0, "", ""
    for match in _TOKENS.finditer(text):
        lexeme = match.group()
        if lexeme in "[{":
            depth += 1
            if depth > max_depth:
                return key or "body"
        elif lexeme in "]}":
            depth -= 1
        elif lexeme == ":":
            if depth == 1:
                key = pending
        elif depth == 1:
            pending = lexeme[1:-1]
    return "body"


class PortalJSONParser(JSONParser):
    """DRF's JSON parser with depth and size limits and no NUL or lone surrogates."""

    def parse(
        self,
        stream: Any,
        media_type: str | None = None,
        parser_context: dict[str, Any] | None = None,
    ) -> Any:
        encoding = (parser_context or {}).get("encoding", settings.DEFAULT_CHARSET)
        try:
            text = codecs.getreader(encoding)(stream).read()
            parse_constant = json.strict_constant if self.strict else None
            data = json.loads(text, parse_constant=parse_constant)
        except ValueError as exc:  # also a body that is not valid in ``encoding``
            raise ParseError(
                _("JSON parse error - %(error)s") % {"error": exc}
            ) from None
        except RecursionError:
            field = _deep_field(text, MAX_JSON_DEPTH)
            if _string_problem(field):
                field = "body"
            raise ValidationError(
                {
                    field: [
                        _("nested deeper than %(count)d levels")
                        % {"count": MAX_JSON_DEPTH}
                    ]
                }
            ) from None
        check_size(data)  # first: the checks below cost per value
        check_parsed(data)
        return data
