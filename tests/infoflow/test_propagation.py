"""Information-set updates on the worked examples (a)-(c) of chapter 06 (the framework's walk-through, reconstructed)."""

import pytest

from transformer_theory.infoflow import (Architecture, comparison_capacity, comparison_stats, max_retrieval,
                                         min_pairwise_dot, pairwise_max, propagate, specific_positions,
                                         triangle_center, kth_largest)


def test_a_pairwise_max_D2_with_2_2_heads():
    prop = propagate(pairwise_max(2), Architecture((2, 2), 32, 4), seq_len=6)
    assert prop.template(0) == {"t"} and prop.labels("CLS", 0) == set()
    assert prop.template(1) == {"t", "s1*(t)", "s2*(t)"}
    assert prop.labels(5, 1) == {"5", "s1*(5)", "s2*(5)"}
    assert prop.labels("CLS", 1) == set()
    cls2 = prop.labels("CLS", 2)
    assert cls2 == {"t1*", "s1*(t1*)", "s2*(t1*)", "t2*", "s1*(t2*)", "s2*(t2*)"}
    # both maxima: (s_i*(t_i*), t_i*) attains max_{s,t} x(s)^T A_i x(t)
    assert {"t1*", "s1*(t1*)", "t2*", "s2*(t2*)"} <= cls2
    assert prop.modes(3, 1) == ["retrieval", "retrieval"] and prop.modes("CLS", 1) == []
    assert prop.modes("CLS", 2) == ["retrieval", "retrieval"]
    assert [(s.layer, s.head, s.query) for s in prop.steps] == [(1, 1, "tokens"), (1, 2, "tokens"),
                                                                (2, 1, "CLS"), (2, 2, "CLS")]
    assert set(prop.sets) == {(t, l) for t in list(range(1, 7)) + ["CLS"] for l in range(3)}


def test_a_pairwise_max_D2_with_1_2_heads_aggregates():
    prop = propagate(pairwise_max(2), Architecture((1, 2), 32, 4), seq_len=6)
    assert prop.template(1) == {"t", "s1*(t)"}
    assert [s.mode for s in prop.steps] == ["retrieval", "retrieval", "aggregation"]
    assert prop.modes("CLS", 2) == ["retrieval", "aggregation"]
    assert {str(t) for t in range(1, 7)} <= prop.labels("CLS", 2)  # coupled information of every token
    (b,) = prop.bottlenecks
    assert b.label == "s2" and b.kind == "capacity"
    assert b.reason == ("'max over s (term 2)' must run at layer 1 with queries at every token, "
                        "but layer 1 has 1 head(s), taken by 'max over s (term 1)'")


def test_b_triangle_center_only_aggregation():
    prop = propagate(triangle_center(), Architecture((4, 4), 48, 2), seq_len=8)
    assert [s.mode for s in prop.steps] == ["aggregation"]
    assert prop.labels("CLS", 2) == {str(t) for t in range(1, 9)}
    assert prop.template(2) == {"t"}
    assert "compares 3 positions" in prop.bottlenecks[0].reason


def test_c_specific_positions_with_pe():
    prop = propagate(specific_positions((1, 2, 3)), Architecture((1,), 16, 2, positional=True), seq_len=10)
    assert prop.labels("CLS", 1) == {"1", "2", "3"} and len(prop.info_set("CLS", 1)) == 3
    assert prop.modes("CLS", 1) == ["specific"]


def test_information_accumulates():
    prop = propagate(max_retrieval(4), Architecture((2, 2), 32, 4), seq_len=5)
    for tok in list(range(1, 6)) + ["CLS"]:
        for layer in range(2):
            assert prop.info_set(tok, layer) <= prop.info_set(tok, layer + 1)
    assert prop.labels("CLS", 2) == {"t1*", "t2*", "t3*", "t4*"}
    assert [s.layer for s in prop.steps] == [1, 1, 2, 2]


def test_depth_separation_two_layers():
    prop = propagate(min_pairwise_dot(), Architecture((1, 1), 32, 4), seq_len=4)
    assert prop.template(1) == {"t", "s*(t)"} and prop.labels("CLS", 2) == {"t*", "s*(t*)"}


def test_bad_token_or_layer():
    prop = propagate(max_retrieval(1), Architecture((1,), 8, 4), seq_len=3)
    with pytest.raises(ValueError, match="token"):
        prop.info_set(4, 1)
    with pytest.raises(ValueError, match="layer"):
        prop.info_set(1, 2)


def test_comparison_stats():
    pm = comparison_stats(pairwise_max(3), 16)
    assert (pm.order, pm.dimension, pm.depth, pm.beta1) == (2, {1: 3, 2: 3}, 2, 3)
    assert pm.number == 3 * 16 ** 2 + 3 * 16 and pm.number_formula == "3 T^2 + 3 T"
    tc = comparison_stats(triangle_center(), 8)
    assert (tc.order, tc.depth, tc.number_at(64)) == (3, 3, 64 ** 3 + 64 ** 2 + 64)
    mr = comparison_stats(max_retrieval(5), 8)
    assert (mr.order, mr.dimension, mr.depth) == (1, {1: 5}, 1)
    assert comparison_stats(kth_largest(2), 8).order == 1
    sp = comparison_stats(specific_positions(), 8)
    assert (sp.order, sp.number, sp.depth) == (0, 0, 1)
    assert comparison_capacity(Architecture((2, 2), 8, 4), 7) == 4 * 64
