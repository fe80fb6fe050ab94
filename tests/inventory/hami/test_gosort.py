"""The port of Go's ``sort.Slice`` agrees with Go on every recorded case."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from apps.inventory.hami.gosort import GO_INSERTION_SORT_MAX, go_sort_slice_order

RECORDED = Path(__file__).resolve().parents[2] / "fixtures" / "gosort"


def test_orders_recorded_from_go_are_reproduced() -> None:
    cases = json.loads((RECORDED / "sort-slice-orders.json").read_text())["cases"]
    unstable = 0
    for case in cases:
        assert go_sort_slice_order(case["keys"]) == case["order"], case["keys"]
        stable = sorted(range(len(case["keys"])), key=lambda i: case["keys"][i])
        unstable += case["order"] != stable
    # The recording includes cases where Go does not keep input order.
    assert unstable > 10


@given(st.lists(st.integers(0, 5), max_size=GO_INSERTION_SORT_MAX))
def test_up_to_twelve_keys_keep_input_order_for_ties(keys: list[int]) -> None:
    assert go_sort_slice_order(keys) == sorted(range(len(keys)), key=lambda i: keys[i])


@given(st.lists(st.integers(0, 5), max_size=80))
def test_any_length_sorts_and_permutes(keys: list[int]) -> None:
    order = go_sort_slice_order(keys)
    assert sorted(order) == list(range(len(keys)))
    assert [keys[i] for i in order] == sorted(keys)
