"""Usernames: what the portal accepts for a new user, and how sign-ins are counted.

Django's login forms (the admin's ``AuthenticationForm``) normalise the
username with Unicode NFKC before looking the user up, so ``admin`` spelt in
full-width letters (U+FF41...) or mathematical bold ones (U+1D41A...) signs
in as ``admin``. The
sign-in throttle must count them as one name too (:func:`login_key`), or each
spelling gets its own budget of guesses.

The portal creates users itself (service accounts: ``POST /api/tokens/``,
``manage.py createtoken``) with ``get_or_create``, which runs no validator, so
:func:`username_problem` holds the rule: Django's own username characters
(letters, digits and ``@ . + - _``), already in NFKC form. That refuses
direction overrides (U+202E shows ``ci\u202egpj.exe`` as ``ciexe.jpg``),
zero-width characters (two accounts that look alike in every list and audit
event), emoji and look-alike spellings of an existing name.
"""

from __future__ import annotations

import unicodedata

from django.contrib.auth.validators import UnicodeUsernameValidator
from django.core.exceptions import ValidationError

MAX_LENGTH = 150

# Characters that change how the text around them is shown without showing
# themselves: direction marks, embeddings, overrides and isolates, and the
# zero-width ones. Named in the message, since the caller cannot see them.
INVISIBLE = frozenset(
    "\u061c\u200b\u200c\u200d\u200e\u200f"
    "\u202a\u202b\u202c\u202d\u202e"
    "\u2060\u2066\u2067\u2068\u2069\ufeff"
)

_DJANGO_RULE = UnicodeUsernameValidator()


def login_key(username: str) -> str:
    """The name a sign-in attempt is counted under: as the login form reads it.

    NFKC as Django's ``UsernameField`` applies it, then stripped and
    case-folded so that ``Admin`` and `` admin `` count with ``admin`` too (the
    throttle may merge more spellings than the login does; never fewer).
    Only the first ``MAX_LENGTH`` characters are read: a longer name cannot
    sign in, and the cost stays bounded whatever was sent.
    """
    return unicodedata.normalize("NFKC", username[:MAX_LENGTH]).strip().casefold()


def username_problem(username: str) -> str | None:
    """Why ``username`` cannot be given to a new user (None: it can).

    Args:
        username: The name as sent.

    Returns:
        A message for the caller, or None.
    """
    if not username or len(username) > MAX_LENGTH:
        return f"1 to {MAX_LENGTH} characters"
    hidden = sorted({c for c in username if c in INVISIBLE})
    if hidden:
        codes = ", ".join(f"U+{ord(c):04X}" for c in hidden)
        return f"contains invisible or direction-changing characters ({codes})"
    normal = unicodedata.normalize("NFKC", username)
    if normal != username:
        # Refused, not silently normalised: the normal form may be an
        # existing account, whose role the caller would then be changing.
        return (
            f"not in Unicode normal form (NFKC): it signs in as {normal!r}; "
            "use that spelling"
        )
    try:
        _DJANGO_RULE(username)
    except ValidationError:
        return "only letters, digits and @ . + - _ (no spaces, symbols or emoji)"
    return None
