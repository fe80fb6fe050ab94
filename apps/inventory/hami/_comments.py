"""Keep full-line comments with the list item they describe while editing.

ruamel attaches a comment line to the *end of the previous node*: in

    - chipName: 910B4
      ...
        aiCPU: 3
    # Ascend 310P3
    - chipName: 310P3

"# Ascend 310P3" belongs to the ``aiCPU: 3`` scalar deep inside the 910B4
entry, and the comment before the first item belongs to the key that holds
the list. Removing or adding items would then drop or misplace comments. So
before an edit the comments are detached into "the lines before item i" plus
"the lines after the list", and re-attached in the new order afterwards.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import CommentMark
from ruamel.yaml.tokens import CommentToken

from ._yaml import is_block_container

__all__ = [
    "ItemComments",
    "add_trailing_lines",
    "attach_item_comments",
    "delete_key",
    "detach_item_comments",
    "take_trailing_lines",
]

# Position of the comment after a value in CommentedMap.ca.items[key], and of
# the comment after an item in CommentedSeq.ca.items[index].
_MAP_POST = 2
_SEQ_POST = 0
# Position of the comments before the first item of a list, kept on the key
# of the parent mapping that holds the list.
_KEY_PRE = 3


@dataclass
class ItemComments:
    """Full-line comments of a list of mappings, detached from the tree.

    Attributes:
        leads: Text before each item, by original index ("" if none).
        after: Text after the last item.
    """

    leads: list[str]
    after: str


def _tail_slot(node: Any) -> tuple[dict[Any, Any], Any, int] | None:
    """Locate the comment slot after the last line of a block container."""
    if not is_block_container(node):
        return None
    if isinstance(node, CommentedMap):
        key = next(reversed(node))
        position = _MAP_POST
    else:
        key = len(node) - 1
        position = _SEQ_POST
    value = node[key]
    if is_block_container(value):
        return _tail_slot(value)
    items: dict[Any, Any] = node.ca.items
    return items, key, position


def _slot_token(slot: tuple[dict[Any, Any], Any, int]) -> CommentToken | None:
    items, key, position = slot
    entry = items.get(key)
    if not entry or len(entry) <= position:
        return None
    token = entry[position]
    return token if isinstance(token, CommentToken) else None


def take_trailing_lines(node: Any) -> str:
    """Detach the full-line comments that follow a block container.

    The end-of-line comment on the last line stays where it is.

    Args:
        node: A ``CommentedMap``/``CommentedSeq``.

    Returns:
        The detached text (each line with its own indentation), or "".
    """
    slot = _tail_slot(node)
    token = _slot_token(slot) if slot is not None else None
    if token is None:
        return ""
    value = token.value
    newline = value.find("\n")
    if newline == -1:
        return ""
    # The token object may be shared (flow collections keep a second
    # reference), so it is changed in place rather than replaced.
    token.value = value[: newline + 1]
    return value[newline + 1 :]


def add_trailing_lines(node: Any, lines: str) -> bool:
    """Append full-line comments after the last line of a block container.

    Args:
        node: A ``CommentedMap``/``CommentedSeq``.
        lines: Text from :func:`take_trailing_lines`.

    Returns:
        False if the node has no place for comments (empty or flow style).
    """
    if not lines:
        return True
    slot = _tail_slot(node)
    if slot is None:
        return False
    token = _slot_token(slot)
    if token is None:
        items, key, position = slot
        entry = items.setdefault(key, [None, None, None, None])
        while len(entry) <= position:
            entry.append(None)
        entry[position] = CommentToken("\n" + lines, CommentMark(0))
        return True
    value = token.value
    token.value = (value if value.endswith("\n") else value + "\n") + lines
    return True


def _tokens_to_text(tokens: Sequence[Any]) -> str:
    parts = []
    for token in tokens:
        if isinstance(token, CommentToken):
            value = token.value
            # A token that is only blank lines has no column of its own.
            indent = "" if value.startswith("\n") else " " * token.column
            parts.append(indent + value)
    return "".join(parts)


def _text_to_tokens(text: str) -> list[CommentToken]:
    tokens: list[CommentToken] = []
    for line in text.splitlines():
        stripped = line.lstrip(" ")
        if stripped:
            column = len(line) - len(stripped)
            tokens.append(CommentToken(stripped + "\n", CommentMark(column)))
        elif tokens:
            tokens[-1].value = tokens[-1].value + "\n"
        else:
            tokens.append(CommentToken("\n", CommentMark(0)))
    return tokens


def _key_pre_comments(parent: CommentedMap, key: Any) -> list[Any] | None:
    entry = parent.ca.items.get(key)
    if not entry or len(entry) <= _KEY_PRE:
        return None
    pre = entry[_KEY_PRE]
    return pre if isinstance(pre, list) else None


def detach_item_comments(parent: CommentedMap, key: Any) -> ItemComments:
    """Detach the full-line comments around the items of ``parent[key]``.

    Args:
        parent: The mapping holding the list.
        key: The key of the list (e.g. ``"vnpus"`` or ``"templates"``).

    Returns:
        The comments by original item index; the tree keeps only end-of-line
        comments until :func:`attach_item_comments` puts them back.
    """
    seq = parent.get(key)
    if not isinstance(seq, CommentedSeq) or not seq:
        return ItemComments(leads=[], after="")
    pre = _key_pre_comments(parent, key)
    leads = [_tokens_to_text(pre) if pre else ""]
    tails = [take_trailing_lines(item) for item in seq]
    leads.extend(tails[:-1])
    return ItemComments(leads=leads, after=tails[-1])


def attach_item_comments(
    parent: CommentedMap,
    key: Any,
    leads: Sequence[str],
    after: str,
    *,
    first_unchanged: bool,
) -> None:
    """Re-attach comments after ``parent[key]`` was rebuilt.

    Args:
        parent: The mapping holding the list.
        key: The key of the list.
        leads: Text before each item, in the new order.
        after: Text after the last item.
        first_unchanged: The first item is the same as before the edit, so
            the comments before it are still in place (and left byte-exact).
    """
    seq = parent.get(key)
    if not isinstance(seq, CommentedSeq) or not seq:
        # No item left to carry the comments: keep them after the key.
        _set_pre_comments(parent, key, [])
        text = "".join(leads) + after
        if text:
            _append_key_post(parent, key, text)
        return
    if not first_unchanged:
        _set_pre_comments(parent, key, _text_to_tokens(leads[0]))
    for index in range(1, len(seq)):
        add_trailing_lines(seq[index - 1], leads[index])
    add_trailing_lines(seq[-1], after)


def _set_pre_comments(
    parent: CommentedMap, key: Any, tokens: list[CommentToken]
) -> None:
    """Set the comments between ``key:`` and the first item of its list.

    ruamel keeps them twice, on the key and on the list; an empty list (as
    opposed to None) there makes the emitter write ``key: -``.
    """
    value = tokens or None
    entry = parent.ca.items.get(key)
    if entry is not None or value is not None:
        entry = parent.ca.items.setdefault(key, [None, None, None, None])
        entry[_KEY_PRE] = value
    seq = parent.get(key)
    if isinstance(seq, CommentedSeq):
        seq.ca.comment = [None, value] if value is not None else None


def _append_key_post(parent: CommentedMap, key: Any, text: str) -> None:
    entry = parent.ca.items.setdefault(key, [None, None, None, None])
    token = entry[_MAP_POST]
    if isinstance(token, CommentToken):
        value = token.value
        token.value = (value if value.endswith("\n") else value + "\n") + text
    else:
        entry[_MAP_POST] = CommentToken("\n" + text, CommentMark(0))


def delete_key(node: CommentedMap, key: Any) -> None:
    """Delete a key, moving the full-line comments that follow it up.

    Args:
        node: The mapping.
        key: The key to delete (must be present).
    """
    keys = list(node)
    position = keys.index(key)
    value = node[key]
    lines = take_trailing_lines(value) if is_block_container(value) else ""
    entry = node.ca.items.get(key)
    token = entry[_MAP_POST] if entry and len(entry) > _MAP_POST else None
    if isinstance(token, CommentToken):
        text = token.value
        newline = text.find("\n")
        lines += text[newline + 1 :] if newline != -1 else ""
    del node[key]
    node.ca.items.pop(key, None)
    if not lines or position == 0:
        return
    previous_key = keys[position - 1]
    previous = node[previous_key]
    if is_block_container(previous):
        add_trailing_lines(previous, lines)
    else:
        _append_key_post(node, previous_key, lines)
