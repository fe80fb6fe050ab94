"""The inventory app's Chinese catalog, compiled for the tests that read it."""

from __future__ import annotations

import io
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

#: The inventory app's own catalog (Django finds an installed app's locale/).
LOCALE = Path(__file__).resolve().parents[2] / "apps" / "inventory" / "locale"
CATALOG = LOCALE / "zh_Hans" / "LC_MESSAGES" / "django.po"


def compile_inventory_catalog() -> Path:
    """Write ``django.mo`` beside the inventory app's ``django.po`` (build output,
    ignored by git) with Babel, as ``msgfmt`` would, and make Django read it again.

    Written through a temporary file: test workers compiling at once never
    read half a catalog.
    """
    from babel.messages.mofile import write_mo
    from babel.messages.pofile import read_po
    from django.utils.translation import trans_real

    with CATALOG.open("rb") as handle:
        catalog = read_po(handle, locale="zh_Hans", domain="django")
    buffer = io.BytesIO()
    write_mo(buffer, catalog, use_fuzzy=False)
    mo = CATALOG.with_suffix(".mo")
    if not mo.exists() or mo.read_bytes() != buffer.getvalue():
        fd, tmp = tempfile.mkstemp(dir=mo.parent, prefix=f".{mo.name}.")
        with os.fdopen(fd, "wb") as out:
            out.write(buffer.getvalue())
        os.replace(tmp, mo)
    # Django keeps each language's merged catalogs once loaded: a language
    # activated before the .mo existed would go on without it. (Django's own
    # test signals do the same when LOCALE_PATHS or LANGUAGES change.)
    trans_real._translations = {}
    trans_real._default = None
    return mo


@pytest.fixture(scope="session")
def inventory_catalog() -> Path:
    """The compiled catalog, once per session; request it before ``override("zh-hans")``."""
    return compile_inventory_catalog()


@pytest.fixture(autouse=True)
def _default_language() -> Iterator[None]:
    """Each test starts in the portal's default language, as a request without
    Accept-Language does: Django leaves the language of a request the test
    client made active in the thread (LocaleMiddleware activates it, nothing
    deactivates it), and these modules' texts would then come out in it."""
    from django.apps import apps
    from django.conf import settings

    if not (settings.configured and apps.ready):
        yield  # the pure packages' tests, run without Django
        return
    from django.utils.translation import override

    with override(settings.LANGUAGE_CODE):
        yield
