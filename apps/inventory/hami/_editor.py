"""Merge wanted list items into a loaded YAML list, touching as little as possible.

Items are matched by an identity key (``commonWord`` for chip types, ``name``
for templates). A matched item keeps its place (templates: see
``ListSchema.wanted_order``), its comments and its other keys; only the managed
keys that changed are rewritten. This keeps the
portal's diff of the ConfigMap as small as the user's edit.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.scalarstring import ScalarString

from ._comments import attach_item_comments, delete_key, detach_item_comments
from ._yaml import strict_equal, to_node, to_plain

__all__ = ["ListSchema", "sync_items"]


@dataclass(frozen=True)
class ListSchema:
    """How the items of one YAML list are matched and which keys are managed.

    Attributes:
        identity: The key that identifies an item.
        managed: The managed keys in their canonical order. A managed key
            missing from a wanted item is deleted from the YAML item; any
            other key of the wanted item is set (deleted when its value is
            None: the editor's way to remove an ``extra`` key, which Go's
            decoder reads as absent anyway), and other keys already in the
            YAML item are kept.
        children: Managed keys whose value is itself a list of items.
        wanted_order: Put the items in the wanted order (each with its
            comments) instead of keeping matched items where they are.
    """

    identity: str
    managed: tuple[str, ...]
    children: Mapping[str, ListSchema] = field(default_factory=dict)
    wanted_order: bool = False


def sync_items(
    parent: CommentedMap,
    key: str,
    wanted: Sequence[Mapping[str, Any]],
    schema: ListSchema,
) -> None:
    """Make the list ``parent[key]`` hold exactly the ``wanted`` items.

    Args:
        parent: The mapping holding the list; ``parent[key]`` is created if
            it is missing or null.
        key: The key of the list.
        wanted: Plain items; their identities must be unique.
        schema: How items are matched and updated.
    """
    if not isinstance(parent.get(key), CommentedSeq):
        _set_key(parent, key, CommentedSeq(), None)
    seq = parent[key]
    was_empty = not seq
    comments = detach_item_comments(parent, key)
    by_identity = {item[schema.identity]: item for item in wanted}
    rank = {identity: index for index, identity in enumerate(by_identity)}
    old_ca_items = dict(seq.ca.items)
    first = seq[0] if seq else None
    kept: list[tuple[Any, str, Any]] = []  # (node, comment before it, ca item)
    for index, node in enumerate(seq):
        identity = (
            to_plain(node.get(schema.identity)) if isinstance(node, Mapping) else None
        )
        if isinstance(identity, str) and identity in by_identity:
            _update_item(node, by_identity.pop(identity), schema)
            kept.append((node, comments.leads[index], old_ca_items.get(index)))
    # Whatever is left is new, appended in the order given.
    kept.extend(
        (to_node(_without_removed(item, schema)), "", None)
        for item in by_identity.values()
    )
    if schema.wanted_order:
        kept.sort(key=lambda k: rank[to_plain(k[0].get(schema.identity))])
    list.clear(seq)
    seq.ca.items.clear()
    for index, (node, _, ca_item) in enumerate(kept):
        seq.append(node)
        if ca_item is not None:
            seq.ca.items[index] = ca_item
    if was_empty and seq:
        seq.fa.set_block_style()  # `[]` was the only way to write it empty
    attach_item_comments(
        parent,
        key,
        [lead for _, lead, _ in kept],
        comments.after,
        first_unchanged=bool(kept) and kept[0][0] is first,
    )


def _update_item(
    node: CommentedMap, wanted: Mapping[str, Any], schema: ListSchema
) -> None:
    for key in schema.managed:
        child = schema.children.get(key)
        if child is not None:
            _update_child_list(node, key, wanted.get(key) or [], child, schema.managed)
        elif key in wanted and wanted[key] is not None:
            _set_key(node, key, wanted[key], schema.managed)
        elif key in node:
            delete_key(node, key)
    for key, value in wanted.items():
        if key in schema.managed:
            continue
        if value is None:
            # An extra key removed in the editor (null): gone from the file too.
            if key in node:
                delete_key(node, key)
        else:
            _set_key(node, key, value, None)


def _without_removed(item: Mapping[str, Any], schema: ListSchema) -> dict[str, Any]:
    """A new item without its removed (None) unmanaged keys, children included."""
    plain: dict[str, Any] = {}
    for key, value in item.items():
        child = schema.children.get(key)
        if child is not None and isinstance(value, list | tuple):
            plain[key] = [
                _without_removed(v, child) if isinstance(v, Mapping) else v
                for v in value
            ]
        elif value is not None or key in schema.managed:
            plain[key] = value
    return plain


def _update_child_list(
    node: CommentedMap,
    key: str,
    wanted: Sequence[Mapping[str, Any]],
    schema: ListSchema,
    order: tuple[str, ...],
) -> None:
    if wanted:
        if not isinstance(node.get(key), CommentedSeq):
            _set_key(node, key, CommentedSeq(), order)
        sync_items(node, key, wanted, schema)
    elif key in node and to_plain(node[key]) not in (None, []):
        delete_key(node, key)


def _set_key(
    node: CommentedMap, key: str, value: Any, order: tuple[str, ...] | None
) -> None:
    """Set ``node[key]`` unless it already holds an equal value.

    A new managed key goes to its canonical place (after the managed keys
    that precede it); any other new key goes to the end.
    """
    if key in node:
        old = node[key]
        if isinstance(value, CommentedSeq) or not strict_equal(
            to_plain(old), to_plain(value)
        ):
            node[key] = _styled_like(old, value)
        return
    position = len(node)
    if order is not None and key in order:
        before = set(order[: order.index(key)])
        position = 0
        for index, existing in enumerate(node):
            if existing in before:
                position = index + 1
    node.insert(position, key, to_node(value))


def _styled_like(old: Any, value: Any) -> Any:
    """Keep the quoting style of a replaced string (``'a'`` stays quoted)."""
    if isinstance(old, ScalarString) and isinstance(value, str):
        return type(old)(value)
    return to_node(value)
