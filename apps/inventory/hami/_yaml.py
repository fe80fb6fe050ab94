"""ruamel.yaml plumbing for the device-config reader and writer.

Round-trip mode keeps comments, key order, quoting and the indentation style,
which is what lets the portal rewrite a ConfigMap that people also edit by hand.
Plain scalars are typed the way HAMi's yaml.v2 types them (YAML 1.1, see
``_yamlv2``), on reading and on writing.
"""

from __future__ import annotations

import datetime as dt
import io
import math
from collections.abc import Mapping
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq, TaggedScalar
from ruamel.yaml.composer import Composer, MaxDepthExceededError
from ruamel.yaml.constructor import RoundTripConstructor
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
from ruamel.yaml.representer import RoundTripRepresenter
from ruamel.yaml.resolver import VersionedResolver
from ruamel.yaml.scalarbool import ScalarBoolean
from ruamel.yaml.scalarfloat import ScalarFloat
from ruamel.yaml.scalarint import ScalarInt
from ruamel.yaml.tag import Tag

from ._yamlv2 import Kind, resolve_plain
from .messages import N_

__all__ = [
    "MAX_BYTES",
    "MAX_DEPTH",
    "MAX_NODES",
    "YamlLimitError",
    "YamlSyntaxError",
    "dump",
    "is_block_container",
    "line_of",
    "load",
    "new_yaml",
    "strict_equal",
    "to_node",
    "to_plain",
]

# Long strings must never be folded: a folded resource name is still valid
# YAML, but it makes diffs of the ConfigMap unreadable.
_NO_WRAP_WIDTH = 4096

# Limits on what the reader accepts. Device configs come from ConfigMaps that
# anyone with edit rights in the namespace can change, and the portal reads
# them in the sync watcher: a hand edit nested 5,000 levels deep used to end
# in a RecursionError that killed the watcher. A real device config is a few
# KiB, about six levels deep and uses no aliases.
#: Largest text read, in UTF-8 bytes (a whole ConfigMap is at most 1 MiB).
MAX_BYTES = 1024 * 1024
#: Deepest nesting of nodes (the root is level 1, its values level 2...).
MAX_DEPTH = 64
#: Most nodes once every alias is expanded ("billion laughs" stays small).
MAX_NODES = 100_000


class YamlSyntaxError(ValueError):
    """The text is not valid YAML.

    Attributes:
        line: 1-based line of the problem, when ruamel reports one.
    """

    def __init__(self, message: str, line: int | None) -> None:
        super().__init__(message)
        #: The message (a ``Message`` where this module made it: translated where shown).
        self.message = message
        self.line = line


class YamlLimitError(YamlSyntaxError):
    """The text exceeds what the reader accepts (size, nesting, aliases)."""


class _Composer(Composer):
    """ruamel's composer, refusing documents whose aliases expand too far.

    An alias is the same node object as its anchor, so composing is cheap,
    but every consumer that walks the tree (to_plain, the validator) expands
    it: ten anchors of ten aliases each are ten billion nodes. An alias
    inside its own anchor makes a cycle, which no walk ever finishes.
    """

    def compose_document(self: Any) -> Any:
        node = super().compose_document()
        if node is not None:
            _check_expansion(node)
        return node


def _children(node: Node) -> list[Node]:
    if isinstance(node, MappingNode):
        return [part for pair in node.value for part in pair]
    if isinstance(node, SequenceNode):
        return list(node.value)
    return []


def _check_expansion(root: Node) -> None:
    """Raise YamlLimitError if ``root`` expands past MAX_NODES or MAX_DEPTH.

    Iterative (no recursion to exhaust); each shared node is measured once.
    """
    # id(node) -> (nodes, depth) of its expansion
    sizes: dict[int, tuple[int, int]] = {}
    on_path: set[int] = set()
    stack: list[tuple[Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        key = id(node)
        if children_done:
            kids = [sizes[id(child)] for child in _children(node)]
            nodes = 1 + sum(n for n, _ in kids)
            depth = 1 + max((d for _, d in kids), default=0)
            on_path.discard(key)
            if nodes > MAX_NODES:
                raise YamlLimitError(
                    N_(
                        "invalid YAML: aliases expand to more than %(most)d nodes",
                        most=MAX_NODES,
                    ),
                    _line(node),
                )
            if depth > MAX_DEPTH:
                raise YamlLimitError(
                    N_(
                        "invalid YAML: aliases nest deeper than %(most)d levels",
                        most=MAX_DEPTH,
                    ),
                    _line(node),
                )
            sizes[key] = (nodes, depth)
            continue
        if key in sizes:
            continue
        if key in on_path:
            raise YamlLimitError(
                N_("invalid YAML: an alias refers to a node that contains it"),
                _line(node),
            )
        on_path.add(key)
        stack.append((node, True))
        stack.extend((child, False) for child in _children(node))


def _line(node: Node) -> int | None:
    mark = getattr(node, "start_mark", None)
    return mark.line + 1 if mark is not None else None


def _guess_indent(text: str) -> tuple[int, int, int]:
    """Guess (mapping indent, sequence indent, dash offset) from the text.

    The emitter re-indents everything with one setting, so copying the
    file's own style is what keeps an unedited file byte-identical.
    """
    mapping, sequence, offset = 2, 2, 0
    found_map = found_seq = False
    parent_indent: int | None = None  # indent of the last line ending in ':'
    for line in text.splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        indent = len(line) - len(line.lstrip(" "))
        if parent_indent is not None:
            if stripped.startswith("- ") and not found_seq:
                offset = indent - parent_indent
                rest = stripped[2:]
                sequence = offset + 2 + len(rest) - len(rest.lstrip(" "))
                found_seq = True
            elif (
                not stripped.startswith("-")
                and indent > parent_indent
                and not found_map
            ):
                mapping = indent - parent_indent
                found_map = True
        if found_map and found_seq:
            break
        parent_indent = (
            indent if stripped.endswith(":") and not stripped.startswith("-") else None
        )
    # ruamel needs the sequence indent to leave room for the dash.
    sequence = max(sequence, offset + 2)
    return mapping, sequence, offset


# Attribute set on loaded floats: the text they were written with.
_FLOAT_SOURCE = "_hami_source_text"
_TAGS = {
    Kind.STR: "tag:yaml.org,2002:str",
    Kind.BOOL: "tag:yaml.org,2002:bool",
    Kind.INT: "tag:yaml.org,2002:int",
    Kind.FLOAT: "tag:yaml.org,2002:float",
    Kind.NULL: "tag:yaml.org,2002:null",
}


class _GoYamlV2Resolver(VersionedResolver):
    """Types plain scalars as yaml.v2 does (YAML 1.1, see ``_yamlv2``).

    The same resolver serves the loader (``hamiVnpuCore: yes`` is true) and
    the dumper, whose emitter writes a string plain only if this resolver
    reads it back as a string: ``on``, ``no``, ``0x1F``, ``1e3`` get quotes.
    """

    def resolve(self, kind: Any, value: Any, implicit: Any) -> Any:
        if kind is ScalarNode and implicit[0] and value != "<<":
            return Tag(suffix=_TAGS[resolve_plain(value)[0]])
        return super().resolve(kind, value, implicit)


class _SourcedInt(int):
    """An int loaded from a plain scalar, with the text it was written as (0x1F, 1_000)."""

    source: str


class _SourcedBool(ScalarBoolean):
    """A bool loaded from a plain scalar, with the text it was written as (yes, On)."""

    source: str


def _plain_value(node: ScalarNode, kind: Kind) -> tuple[bool, Any]:
    """yaml.v2's value of a plain, untagged scalar node (False when it is not one)."""
    if node.style is not None or not isinstance(node.value, str) or not node.value:
        return False, None
    found, value = resolve_plain(node.value)
    return found is kind, value


class _Constructor(RoundTripConstructor):
    """ruamel's round-trip constructor with yaml.v2's values, remembering the source text.

    Keeping how a number or boolean was written (``0755``, ``yes``) means an
    unedited file is written back byte for byte.
    """

    def construct_source_float(self, node: ScalarNode) -> Any:
        plain, v2 = _plain_value(node, Kind.FLOAT)
        if plain and node.anchor is None and not math.isnan(v2):
            value: Any = ScalarFloat(v2)
        else:
            value = self.construct_yaml_float(node)
        if isinstance(value, ScalarFloat):
            setattr(value, _FLOAT_SOURCE, str(node.value))
        return value

    def construct_v2_int(self, node: ScalarNode) -> Any:
        plain, v2 = _plain_value(node, Kind.INT)
        if not plain:
            return self.construct_yaml_int(node)
        if node.anchor is not None:
            return ScalarInt(v2, anchor=node.anchor)
        value = _SourcedInt(v2)
        value.source = node.value
        return value

    def construct_v2_bool(self, node: ScalarNode) -> Any:
        plain, v2 = _plain_value(node, Kind.BOOL)
        if not plain:
            return self.construct_yaml_bool(node)
        value = _SourcedBool(v2, anchor=node.anchor)
        value.source = node.value
        return value


class _Representer(RoundTripRepresenter):
    """ruamel's round-trip representer, fixed where it changes values.

    ruamel re-formats a loaded float from its remembered width and precision,
    which changes long ones (4.520183278643109e-205 comes out as ...108e-205);
    an unchanged float is written with its original text instead. And ruamel
    writes U+0085 (NEL) raw inside single quotes, where a reader takes it for
    a line break; double quotes escape it. A lone ``=`` is quoted (YAML 1.1
    reads it as the value tag).
    """

    def represent_source_float(self, data: ScalarFloat) -> ScalarNode:
        source = getattr(data, _FLOAT_SOURCE, None)
        if isinstance(source, str):
            node: ScalarNode = self.represent_scalar(
                "tag:yaml.org,2002:float", source, anchor=data.yaml_anchor(any=True)
            )
            return node
        formatted: ScalarNode = self.represent_scalar_float(data)
        return formatted

    def represent_sourced_int(self, data: _SourcedInt) -> ScalarNode:
        if resolve_plain(data.source) == (Kind.INT, int(data)):
            node: ScalarNode = self.represent_scalar(
                "tag:yaml.org,2002:int", data.source
            )
            return node
        formatted: ScalarNode = self.represent_int(int(data))
        return formatted

    def represent_sourced_bool(self, data: _SourcedBool) -> ScalarNode:
        node: ScalarNode = self.represent_scalar(
            "tag:yaml.org,2002:bool",
            data.source,
            anchor=data.yaml_anchor(any=True),
        )
        return node

    def represent_line_safe_str(self, data: str) -> ScalarNode:
        if data == "=":
            # YAML 1.1's value indicator: PyYAML (and so kubectl-adjacent
            # Python tools) refuses it plain; quoted it is a string everywhere.
            quoted: ScalarNode = self.represent_scalar(
                "tag:yaml.org,2002:str", data, style="'"
            )
            return quoted
        if "\x85" in data:
            node: ScalarNode = self.represent_scalar(
                "tag:yaml.org,2002:str", data, style='"'
            )
            return node
        plain: ScalarNode = self.represent_str(data)
        return plain


# add_constructor()/add_representer() on a subclass copy the table: ruamel's
# own classes, which other code in the process may use, are left alone.
_Constructor.add_constructor(
    "tag:yaml.org,2002:float", _Constructor.construct_source_float
)
_Constructor.add_constructor("tag:yaml.org,2002:int", _Constructor.construct_v2_int)
_Constructor.add_constructor("tag:yaml.org,2002:bool", _Constructor.construct_v2_bool)
_Representer.add_representer(ScalarFloat, _Representer.represent_source_float)
_Representer.add_representer(_SourcedInt, _Representer.represent_sourced_int)
_Representer.add_representer(_SourcedBool, _Representer.represent_sourced_bool)
_Representer.add_representer(str, _Representer.represent_line_safe_str)


def new_yaml(text: str = "") -> YAML:
    """Return a round-trip YAML instance styled like ``text``.

    Args:
        text: The document that will be loaded and dumped; its indentation
            style is copied.

    Returns:
        A configured ``ruamel.yaml.YAML`` in round-trip mode.
    """
    yaml = YAML(typ="rt")
    yaml.Composer = _Composer
    yaml.max_depth = MAX_DEPTH
    yaml.Resolver = _GoYamlV2Resolver
    yaml.Constructor = _Constructor
    yaml.Representer = _Representer
    yaml.preserve_quotes = True
    yaml.width = _NO_WRAP_WIDTH
    mapping, sequence, offset = _guess_indent(text)
    yaml.indent(mapping=mapping, sequence=sequence, offset=offset)
    return yaml


def load(yaml: YAML, text: str) -> Any:
    """Load one YAML document.

    Args:
        yaml: The instance from :func:`new_yaml`.
        text: The YAML text.

    Returns:
        The round-trip tree (``CommentedMap`` etc.), or None for an empty text.

    Raises:
        YamlLimitError: The text is larger than MAX_BYTES, nests deeper than
            MAX_DEPTH, its aliases expand past MAX_NODES (or into a cycle), or
            it makes the parser fail otherwise (``RecursionError``, ``ValueError``).
        YamlSyntaxError: The text is not one valid YAML document.
    """
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > MAX_BYTES:
        raise YamlLimitError(
            N_(
                "invalid YAML: the text is %(size)d bytes; at most %(most)d are read",
                size=size,
                most=MAX_BYTES,
            ),
            None,
        )
    try:
        return yaml.load(text)
    except MaxDepthExceededError as exc:
        mark = exc.problem_mark
        line = mark.line + 1 if mark is not None else None
        raise YamlLimitError(
            N_("invalid YAML: nested deeper than %(most)d levels", most=MAX_DEPTH)
            if line is None
            else N_(
                "invalid YAML at line %(line)d: nested deeper than %(most)d levels",
                line=line,
                most=MAX_DEPTH,
            ),
            line,
        ) from exc
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        # The problem is ruamel's own words, in English.
        problem = exc.problem or exc.context or "invalid YAML"
        raise YamlSyntaxError(
            N_("invalid YAML: %(problem)s", problem=problem)
            if line is None
            else N_(
                "invalid YAML at line %(line)d: %(problem)s", line=line, problem=problem
            ),
            line,
        ) from exc
    except YAMLError as exc:
        raise YamlSyntaxError(
            N_("invalid YAML: %(problem)s", problem=str(exc)), None
        ) from exc
    except YamlSyntaxError:
        raise
    except (RecursionError, ValueError) as exc:
        # Whatever else a hostile text makes the parser or a scalar's
        # conversion raise (a stack exhausted, a number Python will not
        # convert) is a text the reader refuses, never a 500 of a health check.
        raise YamlLimitError(
            N_(
                "invalid YAML: the text cannot be read (%(error)s)",
                error=type(exc).__name__,
            ),
            None,
        ) from exc


def dump(yaml: YAML, data: Any) -> str:
    """Serialise a round-trip tree back to text.

    Args:
        yaml: The instance the tree was loaded with.
        data: The tree.

    Returns:
        The YAML text.
    """
    stream = io.StringIO()
    yaml.dump(data, stream)
    return stream.getvalue()


def line_of(node: Any) -> int | None:
    """Return the 1-based line where a loaded container starts, if known."""
    lc = getattr(node, "lc", None)
    line = getattr(lc, "line", None) if lc is not None else None
    return line + 1 if isinstance(line, int) else None


def is_block_container(value: Any) -> bool:
    """Tell whether ``value`` is a non-empty block-style map or list.

    Comments after such a value live inside it; comments after a scalar or a
    flow collection live on the key that holds it.
    """
    if not isinstance(value, CommentedMap | CommentedSeq) or not value:
        return False
    return not value.fa.flow_style()


def to_plain(value: Any) -> Any:
    """Convert a round-trip tree to plain JSON-able Python values.

    ruamel's scalar subclasses (quoted strings, hex ints, anchored bools)
    become the builtin types, without any other coercion: a quoted "3072"
    stays a string so that the validator can reject it.

    Args:
        value: Any node of a loaded tree.

    Returns:
        dicts, lists, str, int, float, bool and None only.
    """
    if isinstance(value, Mapping):
        return {to_plain(k): to_plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_plain(v) for v in value]
    if isinstance(value, bool | ScalarBoolean):
        return bool(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, str):
        return str(value)
    if isinstance(value, dt.date):  # includes datetime; not JSON-able as is
        return value.isoformat()
    if isinstance(value, TaggedScalar):
        return to_plain(value.value)
    if value is None:
        return None
    return str(value)


def to_node(value: Any) -> Any:
    """Convert plain Python values to round-trip containers (block style).

    Args:
        value: dicts, lists and scalars.

    Returns:
        The same data as ``CommentedMap``/``CommentedSeq`` so that comment
        handling works on it like on loaded data. Values that already are
        round-trip containers are returned as they are.
    """
    if isinstance(value, CommentedMap | CommentedSeq):
        return value
    if isinstance(value, Mapping):
        node = CommentedMap()
        for key, item in value.items():
            node[key] = to_node(item)
        return node
    if isinstance(value, list | tuple):
        seq = CommentedSeq()
        for item in value:
            seq.append(to_node(item))
        return seq
    return value


def strict_equal(left: Any, right: Any) -> bool:
    """Compare plain values without Python's ``True == 1 == 1.0`` leniency.

    Args:
        left: A value from :func:`to_plain`.
        right: Another one.

    Returns:
        True if both have the same structure, types and values; mapping key
        order is ignored.
    """
    if isinstance(left, dict) and isinstance(right, dict):
        return left.keys() == right.keys() and all(
            strict_equal(left[key], right[key]) for key in left
        )
    if isinstance(left, list) and isinstance(right, list):
        return len(left) == len(right) and all(
            strict_equal(a, b) for a, b in zip(left, right, strict=True)
        )
    return type(left) is type(right) and bool(left == right)
