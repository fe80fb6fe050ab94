"""Volcano's conf read as Volcano reads it (apps.inventory.hami.goconf).

From volcano-sh/volcano v1.15.1 ``pkg/scheduler/framework/arguments.go``
(``GetBool``, ``GetInt``), Go's ``strconv.ParseBool`` and gopkg.in/yaml.v2's
YAML 1.1 scalars.
"""

from __future__ import annotations

import pytest

from apps.inventory.hami.goconf import (
    YamlSyntaxError,
    get_bool,
    get_int,
    load_go_yaml,
    parse_bool,
)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        *((t, True) for t in ("1", "t", "T", "TRUE", "true", "True")),
        *((f, False) for f in ("0", "f", "F", "FALSE", "false", "False")),
        *((x, None) for x in ("yes", "y", "on", "tRUE", " true", "2", "")),
    ],
)
def test_parse_bool_is_gos(text, value):
    assert parse_bool(text) is value


def test_yaml_v2_scalars():
    conf = load_go_yaml("a: y\nb: n\nc: on\nd: '10'\ne: 10\nf: 10.0\ng: yes\n")
    assert conf == {
        "a": True,
        "b": False,
        "c": True,
        "d": "10",
        "e": 10,
        "f": 10.0,
        "g": True,
    }
    with pytest.raises(YamlSyntaxError):
        load_go_yaml("a: [")


def test_get_bool_and_get_int_keep_the_default_where_volcano_does():
    args = load_go_yaml(
        'b: y\nq: "t"\nbad: "yes"\nw: 10\nqw: "10"\nfw: 10.0\nbw: true\n'
    )
    assert get_bool(args, "b") is True
    assert get_bool(args, "q") is True
    assert get_bool(args, "q", strings=False) is None  # v1.14: only a Go bool
    assert get_bool(args, "bad") is None
    assert get_bool(args, "missing") is None
    assert get_int(args, "w") == 10
    assert get_int(args, "qw") is None
    assert get_int(args, "fw") is None
    assert get_int(args, "bw") is None  # a bool is no Go int
