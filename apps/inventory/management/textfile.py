"""Reading the file a command is given, with a message instead of a traceback."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import CommandError


def read_text_file(path: str) -> str:
    """The UTF-8 text of ``path``.

    Raises:
        CommandError: The file cannot be read, or is not UTF-8 (ConfigMap
            data values are UTF-8 strings: any other encoding could never be
            published, so the message says where the first bad byte is).
    """
    try:
        return Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise CommandError(f"cannot read {path}: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise CommandError(
            f"cannot read {path}: not UTF-8 (byte 0x{exc.object[exc.start]:02x} "
            f"at offset {exc.start})"
        ) from exc
