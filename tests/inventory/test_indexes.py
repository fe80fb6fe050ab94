"""Every lookup by a column whose own index was dropped is still served by an
index: a constraint or index that starts with that column."""

from __future__ import annotations

from django.apps import apps
from django.db import models


def _leading_columns(model: type[models.Model]) -> set[str]:
    """The first field of each index and unique constraint of the model."""
    leading = set()
    for index in model._meta.indexes:
        leading.add(index.fields[0].lstrip("-"))
    for constraint in model._meta.constraints:
        if isinstance(constraint, models.UniqueConstraint) and constraint.fields:
            leading.add(constraint.fields[0])
    for fields in model._meta.unique_together:
        leading.add(fields[0])
    return leading


def _unindexed_relations(model: type[models.Model]) -> list[str]:
    return [
        field.name
        for field in model._meta.get_fields()
        if isinstance(field, models.ForeignKey)
        and not field.db_index
        and not field.primary_key
    ]


def test_relations_without_their_own_index_lead_another():
    checked = []
    for model in apps.get_app_config("inventory").get_models():
        leading = _leading_columns(model)
        for name in _unindexed_relations(model):
            assert name in leading, (
                f"{model.__name__}.{name} has no index of its own, and no "
                "constraint or index starts with it"
            )
            checked.append(f"{model.__name__}.{name}")
    # the hot tables whose single-column cluster index was dropped
    assert {"Chip.cluster", "Slice.cluster", "Node.cluster"} <= set(checked)


def test_chips_by_commonword_are_served_by_the_cluster_index():
    from apps.inventory.models import Chip

    assert not Chip._meta.get_field("common_word").db_index
    assert any(
        index.fields[:2] == ["cluster", "common_word"] for index in Chip._meta.indexes
    )
