"""Files the stack's processes read while the stack may be rewriting them."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def write_atomic(path: Path, text: str, mode: int = 0o644) -> None:
    """Replace ``path`` with ``text`` in one step, so a reader sees the old or
    the new file, never an empty or half-written one.

    Two components of one user (vc-scheduler and vc-controller-manager) are
    started together, each writing its kubeconfig: written in place, one
    truncated the file while the other read it, and that process exited with
    "no configuration has been provided".
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "w") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
