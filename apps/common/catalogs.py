"""The message catalogs in ``locale/``: extracted, checked and compiled in Python.

Django reads compiled catalogs (``.mo``); GNU gettext's ``makemessages`` and
``compilemessages`` need ``xgettext`` and ``msgfmt``, which a machine with
only Python and Node does not have. Babel does both jobs here instead
(``manage.py compile_locale``): it extracts every ``gettext``,
``gettext_lazy``, ``ngettext``, ``pgettext``... call from the portal's code,
merges them into each language's ``django.po``, and writes the ``.mo`` that
Django loads. The ``.mo`` files are build output (``.gitignore``).

The catalogs are complete when every message the code uses has a
translation that is neither empty nor fuzzy, every translation keeps the
message's placeholders, no entry is left over from removed code, and the
``.mo`` is the compile of the ``.po`` (:func:`catalog_problems`).
"""

from __future__ import annotations

import io
import os
import re
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from babel.messages.catalog import Catalog, Message
from babel.messages.extract import extract_from_file
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po, write_po

DOMAIN = "django"
#: The folders whose Python code is searched for messages (migrations aside).
SOURCE_DIRS = ("apps", "vnpuportal")
#: The ``vnpu`` command's own catalog (``vnpucli/i18n.py``: no Django there).
VNPU_DOMAIN = "vnpu"
VNPU_SOURCE_DIRS = ("vnpucli",)
VNPU_LOCALE_DIR = "vnpucli/locale"
#: The translation functions, with where their message (and context) sit:
#: Django's names, lazy ones included, and ``_`` (imported as an alias).
KEYWORDS: dict[str, object] = {
    "_": None,
    "gettext": None,
    "gettext_lazy": None,
    "gettext_noop": None,
    "N_": None,
    "ngettext": (1, 2),
    "ngettext_lazy": (1, 2),
    "pgettext": ((1, "c"), 2),
    "pgettext_lazy": ((1, "c"), 2),
    "npgettext": ((1, "c"), 2, 3),
    "npgettext_lazy": ((1, "c"), 2, 3),
}


#: A named %-placeholder, as Python's ``%`` operator reads it.
PLACEHOLDER = re.compile(
    r"%\((\w+)\)[#0\- +]*(?:\d+|\*)?(?:\.(?:\d+|\*))?[hlL]?[diouxXeEfFgGcrs]"
)


def _placeholders(text: str) -> set[str]:
    return set(PLACEHOLDER.findall(text))


def _placeholder_problem(message: Message) -> str | None:
    """A translation must keep the message's named placeholders, no fewer (the
    value would be lost) and no more (``%`` would fail with KeyError). Babel's
    own check lets a translation without any placeholder through."""
    ids = message.id if isinstance(message.id, tuple | list) else (message.id,)
    strings = (
        message.string
        if isinstance(message.string, tuple | list)
        else (message.string,)
    )
    wanted = set().union(*(_placeholders(str(i)) for i in ids))
    for string in strings:
        found = _placeholders(str(string))
        if found != wanted:
            return (
                f"placeholders {sorted(found)} in the translation, "
                f"{sorted(wanted)} in the message"
            )
    return None


@dataclass(frozen=True)
class LocaleFiles:
    """One language's catalog: its ``.po`` (kept) and ``.mo`` (built)."""

    locale: str  # "zh_Hans"
    po: Path
    mo: Path
    domain: str = DOMAIN
    sources: tuple[str, ...] = SOURCE_DIRS


def locale_files(
    locale_dir: Path,
    locales: list[str],
    *,
    domain: str = DOMAIN,
    sources: tuple[str, ...] = SOURCE_DIRS,
) -> list[LocaleFiles]:
    """The catalog of ``domain`` for each locale, whose messages come from ``sources``."""
    return [
        LocaleFiles(
            locale,
            locale_dir / locale / "LC_MESSAGES" / f"{domain}.po",
            locale_dir / locale / "LC_MESSAGES" / f"{domain}.mo",
            domain,
            sources,
        )
        for locale in locales
    ]


def _key(message: Message) -> tuple[str, str | None]:
    msgid = message.id[0] if isinstance(message.id, tuple | list) else message.id
    return str(msgid), message.context


def _sources(root: Path, folders: tuple[str, ...]) -> Iterator[Path]:
    for folder in folders:
        for path in sorted((root / folder).rglob("*.py")):
            if "migrations" not in path.parts:
                yield path


def extract(
    root: Path, sources: tuple[str, ...] = SOURCE_DIRS, domain: str = DOMAIN
) -> Catalog:
    """Every message the code in ``root``'s ``sources`` marks for translation, with where."""
    template = Catalog(domain=domain, charset="utf-8")
    for path in _sources(root, sources):
        found = extract_from_file(
            "python",
            str(path),
            keywords=KEYWORDS,  # type: ignore[arg-type]
            comment_tags=("Translators:",),
            strip_comment_tags=True,
        )
        relative = path.relative_to(root).as_posix()
        for lineno, message, comments, context in found:
            template.add(
                message,
                locations=[(relative, lineno)],
                auto_comments=comments,
                context=context,
            )
    return template


def read_catalog(path: Path, locale: str, domain: str = DOMAIN) -> Catalog:
    with path.open("rb") as handle:
        return read_po(handle, locale=locale, domain=domain)


def _po_text(catalog: Catalog) -> bytes:
    buffer = io.BytesIO()
    write_po(buffer, catalog, width=88, include_previous=False)
    return buffer.getvalue()


def mo_bytes(catalog: Catalog) -> bytes:
    """The compiled catalog (fuzzy and untranslated entries left out)."""
    buffer = io.BytesIO()
    write_mo(buffer, catalog, use_fuzzy=False)
    return buffer.getvalue()


def _write_atomic(path: Path, data: bytes) -> None:
    """Write through a temporary file: concurrent builds (test workers) never
    see half a catalog."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
    os.replace(tmp, path)


def update(root: Path, files: LocaleFiles) -> tuple[int, int]:
    """Merge the code's messages into ``files.po`` (created when missing):
    new ones come untranslated, removed ones are dropped. Returns (added, removed)."""
    template = extract(root, files.sources, files.domain)
    if files.po.exists():
        catalog = read_catalog(files.po, files.locale, files.domain)
    else:
        catalog = Catalog(
            locale=files.locale,
            domain=files.domain,
            charset="utf-8",
            project="vNPU Portal",
            header_comment=f"# {files.locale} translation of the vNPU Portal's API and commands.\n"
            "# The words: docs/glossary.md; how to add one: docs/languages.md.",
            fuzzy=False,
        )
    # Who answers for the catalog: the project, not a person's address.
    catalog.msgid_bugs_address = "docs/languages.md"
    catalog.last_translator = catalog.language_team = "vNPU Portal (docs/glossary.md)"
    before = {_key(m) for m in catalog if m.id}
    catalog.update(
        template,
        no_fuzzy_matching=True,
        update_header_comment=False,
        update_creation_date=False,
    )
    catalog.obsolete.clear()
    after = {_key(m) for m in catalog if m.id}
    _write_atomic(files.po, _po_text(catalog))
    return len(after - before), len(before - after)


def compile_catalog(files: LocaleFiles) -> bool:
    """Write ``files.mo`` from ``files.po``; True when it changed."""
    data = mo_bytes(read_catalog(files.po, files.locale, files.domain))
    if files.mo.exists() and files.mo.read_bytes() == data:
        return False
    _write_atomic(files.mo, data)
    return True


def catalog_problems(root: Path, files: LocaleFiles, *, check_mo: bool) -> list[str]:
    """Why ``files`` is not complete and current, one line each (none: it is)."""
    if not files.po.exists():
        return [f"{files.po}: missing (python manage.py compile_locale --update)"]
    catalog = read_catalog(files.po, files.locale, files.domain)
    po = files.po.relative_to(root) if files.po.is_relative_to(root) else files.po
    problems: list[str] = []
    used = {_key(m): m for m in extract(root, files.sources, files.domain) if m.id}
    kept = {_key(m): m for m in catalog if m.id}
    for key, message in used.items():
        if key not in kept:
            where = ", ".join(f"{f}:{n}" for f, n in message.locations)
            problems.append(f"{po}: missing msgid {key[0]!r} (used at {where})")
    for key in kept.keys() - used.keys():
        problems.append(f"{po}: msgid {key[0]!r} is no longer used in the code")
    for key, message in kept.items():
        strings = (
            message.string if isinstance(message.string, tuple) else (message.string,)
        )
        if not all(strings):
            problems.append(f"{po}:{message.lineno}: untranslated {key[0]!r}")
        elif message.fuzzy:
            problems.append(f"{po}:{message.lineno}: fuzzy {key[0]!r}")
        elif problem := _placeholder_problem(message):
            problems.append(f"{po}:{message.lineno}: {key[0]!r}: {problem}")
    for message, errors in catalog.check():
        for error in errors:
            problems.append(f"{po}:{message.lineno}: {message.id!r}: {error}")
    if check_mo and (
        not files.mo.exists() or files.mo.read_bytes() != mo_bytes(catalog)
    ):
        problems.append(
            f"{files.mo}: missing or older than {po.name} (python manage.py compile_locale)"
        )
    return problems
