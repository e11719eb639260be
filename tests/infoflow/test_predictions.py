"""Every row of the calibration table (chapter 06): the prediction matches what the papers observed."""

import pytest

from transformer_theory.infoflow import (Architecture, kth_largest, max_retrieval, min_pairwise_dot, pairwise_max,
                                         predict, specific_positions, triangle_center)


@pytest.mark.parametrize("D", [3, 4])
@pytest.mark.parametrize("h", [1, 2, 3, 4, 5])
def test_single_layer_efficient_iff_h_at_least_D(D, h):
    """P1: transition at h = 4 for D = 4 and at h = 3 for D = 3 (Tables 2-4)."""
    pred = predict(max_retrieval(D), Architecture((h,), embed_dim=8 * h, input_dim=4), seq_len=64)
    assert pred.efficient == (h >= D)
    if h < D:
        assert pred.bottleneck.kind == "capacity" and "layer 1 has" in pred.reason
        # P1's single-layer bound is reported when it says something (k > 0), else named as vacuous
        k = (64 / 4 - h - D + 1) / ((8 + 1) * h + 1) - 1
        assert "P1 single-layer bound" in pred.reference
        assert pred.reference_exponent == (pytest.approx(k) if k > 0 else None)


def test_single_layer_exponent_grows_with_T_only_when_inefficient():
    small = Architecture((2,), embed_dim=16, input_dim=4)
    big = Architecture((4,), embed_dim=32, input_dim=4)
    ks = [predict(max_retrieval(4), small, T).exponent for T in (16, 64, 256)]
    assert ks[0] < ks[1] < ks[2]
    assert {predict(max_retrieval(4), big, T).exponent for T in (16, 64, 256)} == {1.0}


@pytest.mark.parametrize("L", [1, 2, 3])
@pytest.mark.parametrize("h", [1, 2, 3, 4, 5])
def test_multi_layer_max_retrieval_efficient_iff_L_times_h_at_least_D(L, h):
    """P1 Table 5 (L = 2, D = 4): h = 1 ~2e-4, h >= 2 ~3e-6: transition at L h = 4."""
    pred = predict(max_retrieval(4), Architecture((h,) * L, embed_dim=32, input_dim=4), seq_len=64)
    assert pred.efficient == (L * h >= 4)


@pytest.mark.parametrize("D", [2, 3, 4, 5, 6])
def test_pairwise_max_needs_D_heads_in_both_layers(D):
    """InfoFlow §4.1: (D, D) ~1e-5..1e-3, (D-1, D) and (D, D-1) 1-3 orders worse."""
    for h1 in range(1, D + 2):
        for h2 in range(1, D + 2):
            pred = predict(pairwise_max(D), Architecture((h1, h2), embed_dim=16 * max(h1, h2), input_dim=4), 64)
            assert pred.efficient == (h1 >= D and h2 >= D), (h1, h2)
    assert predict(pairwise_max(D), Architecture((D, D), 16 * D, 4), 64).exponent == 1.0
    miss1 = predict(pairwise_max(D), Architecture((D - 1, D), 16 * D, 4), 64).bottleneck
    miss2 = predict(pairwise_max(D), Architecture((D, D - 1), 16 * D, 4), 64).bottleneck
    assert miss1.description.startswith("max over s") and "layer 1" in miss1.reason
    assert miss2.description.startswith("max over t") and "layer 2" in miss2.reason


def test_pairwise_max_one_layer_is_never_enough():
    pred = predict(pairwise_max(2), Architecture((8,), 64, 4), 32)
    assert not pred.efficient and pred.bottleneck.kind == "depth"


@pytest.mark.parametrize("h", [1, 2, 4])
def test_depth_separation_min_pairwise_dot(h):
    """Theorem 1: one layer eps^{-k(T)}, k linear in T; two layers with one head each O(eps^{-1})."""
    one = [predict(min_pairwise_dot(), Architecture((h,), 32, 4), T) for T in (16, 64, 256)]
    assert not any(p.efficient for p in one)
    assert one[0].exponent < one[1].exponent < one[2].exponent
    assert one[0].bottleneck.kind == "depth" and "L = 1" in one[0].reason
    two = [predict(min_pairwise_dot(), Architecture((1, 1), 32, 4), T) for T in (16, 64, 256)]
    assert all(p.efficient and p.exponent == 1.0 for p in two)


@pytest.mark.parametrize("heads,E", [((2, 2), 24), ((4, 4), 24), ((4, 4), 48), ((8,), 64), ((8, 8, 8, 8), 128)])
def test_triangle_center_inefficient_for_every_fixed_architecture(heads, E):
    """InfoFlow §4.2: NMSE -> 1 as T grows, whatever the heads or E."""
    preds = [predict(triangle_center(), Architecture(heads, E, 2), T) for T in (8, 16, 32, 64, 128, 512)]
    assert not any(p.efficient for p in preds)
    assert all(p.bottleneck.kind == "order" for p in preds)
    ks = [p.exponent for p in preds]
    assert all(a <= b for a, b in zip(ks, ks[1:])) and ks[-1] > ks[0]


def test_top1_is_cheap_kth_is_not():
    """Theorem 2: top-1 retrieval O(eps^{-1}); k >= 2 costs Omega(eps^{-(T-k-1)/(n+1)})."""
    arch = Architecture((1,), 8, 4)
    assert predict(kth_largest(1), arch, 64).efficient
    k2 = [predict(kth_largest(2), arch, T) for T in (16, 64, 256)]
    assert not any(p.efficient for p in k2) and k2[0].bottleneck.kind == "rank"
    # Theorem 2's exponent, floored at the memorisation cost 1 + gamma like every failed term
    assert [p.exponent for p in k2] == [pytest.approx(max(2.0, (T - 3) / 9)) for T in (16, 64, 256)]
    assert {p.regime for p in k2} == {"theorem 2"}


def test_specific_positions_need_pe():
    pred = predict(specific_positions((1, 2, 3)), Architecture((1,), 16, 2, positional=True), 10)
    assert pred.efficient and pred.regime == "specific"
    assert predict(specific_positions(), Architecture((1,), 16, 2, positional=True), 100).exponent == pred.exponent
    with pytest.raises(ValueError, match="specific_positions needs positional=True"):
        predict(specific_positions(), Architecture((1,), 16, 2), 10)


def test_memorisation_regime_is_cheap_but_not_T_independent():
    """T d <= E: coupled tokens fit the state (P1 Theorem 2(3)), cost eps^{-(1+gamma)}."""
    arch = Architecture((1,), 64, 4)
    small = predict(max_retrieval(4), arch, 8)
    assert not small.efficient and small.regime == "memorisation" and small.exponent == 2.0
    assert predict(max_retrieval(4), arch, 256).exponent == 256 * 4 / 64 - 1


def test_gamma_and_cost():
    pred = predict(pairwise_max(2), Architecture((2, 2), 32, 4), 64, gamma=2.0)
    assert pred.exponent == 2.0 and pred.cost(1e-2) == pytest.approx(1e4)
    with pytest.raises(ValueError, match="gamma"):
        predict(pairwise_max(2), Architecture((2, 2), 32, 4), 64, gamma=0)


def test_prediction_table_agrees_with_every_paper_observation():
    from transformer_theory.infoflow.reference import prediction_table
    from transformer_theory.tables import markdown_table

    rows = prediction_table(eps=1e-3)
    judged = [r for r in rows if r["agrees"] is not None]
    assert len(judged) == len(rows) - 1 and all(r["agrees"] for r in judged)
    (nope,) = [r for r in rows if r["agrees"] is None]
    assert nope["predicted"] == "not representable" and "positional=True" in nope["bottleneck"]
    assert markdown_table(rows).count("\n") == len(rows) + 1
