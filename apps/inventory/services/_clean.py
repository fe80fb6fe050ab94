"""Model validation as the portal's 400 (field -> messages)."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.utils.translation import gettext as _

from apps.common.exceptions import ValidationFailed


def full_clean(instance: Any) -> None:
    """``instance.full_clean()``, its errors as ValidationFailed naming each field."""
    try:
        instance.full_clean(validate_unique=False)
    except ValidationError as exc:
        raise ValidationFailed(
            _("invalid input"),
            detail={
                field: [str(m) for m in messages]
                for field, messages in exc.message_dict.items()
            },
        ) from exc
