"""Symmetric encryption for secrets kept in the database (cluster tokens)."""

from __future__ import annotations

import base64
import hashlib

from cryptography.fernet import Fernet, InvalidToken
from django.conf import settings


def _fernet() -> Fernet:
    # FIELD_ENCRYPTION_KEY wins; otherwise derive a key from SECRET_KEY so the
    # embedded default needs no extra configuration.
    material = settings.FIELD_ENCRYPTION_KEY or settings.SECRET_KEY
    key = base64.urlsafe_b64encode(hashlib.sha256(material.encode()).digest())
    return Fernet(key)


def encrypt(plaintext: str) -> str:
    """Encrypt ``plaintext``; an empty string stays empty."""
    if not plaintext:
        return ""
    return _fernet().encrypt(plaintext.encode()).decode()


def decrypt(ciphertext: str) -> str:
    """Decrypt what :func:`encrypt` produced; raises ValueError if the key changed."""
    if not ciphertext:
        return ""
    try:
        return _fernet().decrypt(ciphertext.encode()).decode()
    except InvalidToken as exc:
        raise ValueError(
            "stored secret cannot be decrypted with the current key"
        ) from exc
