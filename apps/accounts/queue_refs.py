"""How a token's queues are named: resolved and labelled by the app that owns queues.

Queues are scheduling's, a floor above accounts, so scheduling registers the
two functions in its ``AppConfig.ready`` and accounts never names it. Without
a registration (accounts alone), a token cannot be limited to queues.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from apps.common.exceptions import ValidationFailed

Resolve = Callable[[Sequence[str]], list[int]]
Label = Callable[[Sequence[int]], list[str]]

_registered: dict[str, Callable] = {}


def queue_refs_register(*, resolve: Resolve, label: Label) -> None:
    """Say how ``cluster/queue`` references become queue ids and back."""
    _registered["resolve"] = resolve
    _registered["label"] = label


def queue_ids_of(refs: Sequence[str]) -> list[int]:
    """Queue ids of ``cluster/queue`` references.

    Raises:
        ValidationFailed: A reference names no queue, or is ambiguous.
    """
    if not refs:
        return []
    if "resolve" not in _registered:
        raise ValidationFailed(
            "queues: no queues here", detail={"queues": ["this portal has no queues"]}
        )
    return _registered["resolve"](refs)


def queue_labels_of(ids: Sequence[int]) -> list[str]:
    """``cluster/queue`` of each id (what a token's queue limit shows)."""
    if not ids:
        return []
    label = _registered.get("label")
    return label(ids) if label else [str(pk) for pk in ids]
