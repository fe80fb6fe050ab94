"""The PromQL the portal sends, with a site's label names."""

from __future__ import annotations

import pytest

from apps.metering.queries import Vocabulary, chip_key, slice_key


def test_default_names_and_the_cluster_placeholder():
    v = Vocabulary.for_site({}, 'job="npu-exporter",cluster="{cluster}"', "bj-1")
    assert v.select("vnpu_pod_aicore_utilization", node="n1") == (
        'vnpu_pod_aicore_utilization{job="npu-exporter",cluster="bj-1",node="n1"}'
    )
    assert v.period_sums(v.used_fraction(), 3600, 60) == (
        "sum by (node, id, namespace, pod_name) (sum_over_time(("
        'vnpu_pod_aicore_utilization{job="npu-exporter",cluster="bj-1"} / 100)[3600s:60s]))'
    )


def test_a_relabelled_site_is_read_with_its_own_names():
    v = Vocabulary.for_site(
        {"namespace": "exported_namespace", "node": "kubernetes_node"}, "", "c"
    )
    assert 'exported_namespace="ns"' in v.select("x", namespace="ns")
    labels = {
        "kubernetes_node": "n1",
        "id": "3",
        "exported_namespace": "ns",
        "pod_name": "p",
    }
    assert slice_key(v, labels) == ("n1", 3, "ns", "p")
    assert v.by("node", "namespace") == "kubernetes_node, exported_namespace"


def test_label_values_are_quoted_so_a_name_cannot_break_the_query():
    v = Vocabulary.for_site({}, "", "c")
    assert v.select("x", pod_name='a"b\\c') == 'x{pod_name="a\\"b\\\\c"}'


def test_a_series_without_a_chip_index_is_not_a_chip():
    v = Vocabulary.for_site({}, "", "c")
    assert chip_key(v, {"node": "n1", "id": "x"}) is None
    assert chip_key(v, {"node": "n1", "id": "7"}) == ("n1", 7)


def test_an_unknown_label_in_the_map_is_refused():
    with pytest.raises(ValueError, match="unknown labels"):
        Vocabulary.for_site({"pod": "p"}, "", "c")


def test_idle_means_quiet_for_the_whole_window_and_seen_a_window_ago():
    v = Vocabulary.for_site({}, "", "c")
    assert v.idle_slices(1, 3600) == (
        "(max_over_time(vnpu_pod_aicore_utilization{}[3600s]) <= 1) "
        "and (vnpu_pod_aicore_utilization{} offset 3600s) and vnpu_pod_aicore_utilization{}"
    )
    # The chips page asks per chip, so its answers name only chips with some.
    assert v.chips_now(1, 3600)["idle_slices"].startswith(
        "count by (node, id, vdie_id) ("
    )
