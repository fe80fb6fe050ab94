"""Every list endpoint answers in the shape its schema documents.

A list operation (GET without a path id) documented with a paginated
component (``count``, ``next``, ``previous``, ``results``) must answer that
object; one documented as an array must answer an array; and every item has
each field its component requires (the frontend's generated types rely on
it). The operations are taken from the generated schema, so a new list
endpoint is checked at once.
"""

from __future__ import annotations

import re

import pytest
from drf_spectacular.generators import SchemaGenerator
from rest_framework.test import APIClient

pytestmark = pytest.mark.django_db


def _resolve(document: dict, schema: dict) -> dict:
    while "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        schema = document["components"]["schemas"][name]
    return schema


DOCUMENT = SchemaGenerator().get_schema(request=None, public=True)


def _body(path: str) -> dict | None:
    """The documented body of a GET's 200, resolved (None: not JSON)."""
    get = DOCUMENT["paths"][path].get("get") or {}
    content = get.get("responses", {}).get("200", {}).get("content", {})
    body = content.get("application/json", {}).get("schema")
    return None if body is None else _resolve(DOCUMENT, body)


def _list_operations() -> list[tuple[str, str]]:
    """(path, documented shape) of every GET whose 200 is a list or a page."""
    found = []
    for path in DOCUMENT["paths"]:
        body = _body(path)
        if body is None:
            continue
        if body.get("type") == "array":
            found.append((path, "array"))
        elif {"count", "results"} <= set(body.get("properties", {})):
            found.append((path, "page"))
    return sorted(found)


def _item_required(path: str, shape: str) -> set[str]:
    """The fields the component of a list's items requires."""
    body = _body(path) or {}
    items = (
        body["items"] if shape == "array" else body["properties"]["results"]["items"]
    )
    return set(_resolve(DOCUMENT, items).get("required", []))


LIST_OPERATIONS = _list_operations()


def test_the_schema_has_list_operations():
    paths = dict(LIST_OPERATIONS)
    # given the schema, then the well-known lists are found with a shape
    assert paths["/api/clusters/"] in ("array", "page")
    assert paths["/api/chips/"] == "page"
    assert "/api/clusters/{id}/sync-status/" in paths  # lists hanging from an object
    assert len(paths) > 10


@pytest.fixture
def objects(guide_cluster) -> dict[str, int]:
    """An existing row for each ``/api/<collection>/{id}/`` a list hangs from."""
    from apps.inventory.models import Chip, Node

    node = Node.objects.create(cluster=guide_cluster, name="n1")
    chip = Chip.objects.create(
        cluster=guide_cluster, node=node, common_word="Ascend310P", uuid="u-1"
    )
    return {"clusters": guide_cluster.pk, "chips": chip.pk, "nodes": node.pk}


@pytest.mark.parametrize(("path", "shape"), LIST_OPERATIONS)
def test_list_answers_in_the_documented_shape(path, shape, objects, admin_user):
    client = APIClient()
    client.force_authenticate(admin_user)
    collection = path.split("/")[2]
    url = re.sub(r"\{[^}]+\}", str(objects.get(collection, 0)), path)
    response = client.get(url)
    assert response.status_code == 200, (url, response.content[:300])
    body = response.json()
    if shape == "array":
        assert isinstance(body, list), (
            f"{path}: documented as an array, got {type(body).__name__}"
        )
    else:
        assert isinstance(body, dict), (
            f"{path}: documented as a page, got {type(body).__name__}"
        )
        assert {"count", "next", "previous", "results"} <= set(body), path
    required = _item_required(path, shape)
    for item in body if shape == "array" else body["results"]:
        assert required <= set(item), (path, sorted(required - set(item)))
