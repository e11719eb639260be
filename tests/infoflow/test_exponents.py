"""No negative or meaningless exponents; every Prediction field documented; a search that gives up says so."""

import dataclasses
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rewrites import build, specs

import transformer_theory.infoflow.schedule as schedule_module
from transformer_theory.infoflow import (Architecture, Positions, Prediction, Tree, kth_largest, max_retrieval,
                                         pairwise_max, predict)
from transformer_theory.infoflow.prediction import p1_single_layer_exponent, theorem2_exponent

NEGATIVE = re.compile(r"(=|\(|, )\s*-\d")  # a negative number written as a result or an argument


@pytest.mark.parametrize("T", [3, 5, 16, 64])
def test_kth_largest_for_k_equal_T_is_the_argmin(T):
    pred = predict(kth_largest(T), Architecture((1,), 8, 4), T)
    assert pred.efficient and pred.exponent == 1.0 and pred.regime == "retrieval"
    assert any("1st smallest" in n for n in pred.notes)


@pytest.mark.parametrize("k,T", [(2, 3), (3, 5), (2, 4), (9, 16)])
def test_theorem_2_exponent_is_floored_and_never_negative(k, T):
    pred = predict(kth_largest(k), Architecture((1,), 8, 4), T)
    assert not pred.efficient and pred.regime == "theorem 2" and pred.exponent >= 2.0
    assert not NEGATIVE.search(pred.formula), pred.formula
    assert theorem2_exponent(T, k, 8.0) is None or theorem2_exponent(T, k, 8.0) > 0


@pytest.mark.parametrize("T", [4, 8, 16, 32, 64, 256])
@pytest.mark.parametrize("h", [1, 2, 3])
def test_p1_reference_exponent_is_positive_or_absent(T, h):
    pred = predict(max_retrieval(4), Architecture((h,), 8 * h, 4), T)
    assert "P1 single-layer bound" in pred.reference
    k = (T / 4 - h - 4 + 1) / ((8 + 1) * h + 1) - 1
    if k > 0:
        assert pred.reference_exponent == pytest.approx(k)
    else:  # e.g. T = 8, h = 1: k = -1.2, the bound says nothing
        assert pred.reference_exponent is None and "vacuous" in pred.reference
    assert p1_single_layer_exponent(T, h, 4, 8.0) == pred.reference_exponent


def test_theorem_2_is_a_single_layer_statement():
    """With two layers the 2nd and 3rd largest are pointer chases the schedule places; the 4th needs three."""
    one = predict(kth_largest(2), Architecture((1,), 8, 4), 64)
    assert one.regime == "theorem 2" and one.reference.startswith("InfoFlow Theorem 2")
    for k in (2, 3):
        two = predict(kth_largest(k), Architecture((1, 1), 8, 4), 64)
        assert two.efficient and two.exponent == 1.0 and two.reference == ""
    four = predict(kth_largest(4), Architecture((1, 1), 8, 4), 64)
    assert not four.efficient and four.bottleneck.kind == "depth" and four.regime == "aggregation"
    assert four.exponent == 64 * 4 / 8 - 1 and "theorem 2" not in four.formula.lower()
    assert predict(kth_largest(4), Architecture((1, 1, 1), 8, 4), 64).efficient


archs = st.lists(st.integers(1, 3), min_size=1, max_size=3)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spec=specs(), heads=st.lists(archs, min_size=2, max_size=5), T=st.sampled_from([5, 6, 9, 17]),
       E=st.sampled_from([8, 16]), gamma=st.sampled_from([0.5, 1.0, 2.0]))
def test_efficient_exponents_never_exceed_inefficient_ones(spec, heads, T, E, gamma):
    """Same target, T, d, E and gamma: every efficient exponent <= every inefficient one; all >= max(1, gamma)."""
    tree = build(spec, rewritten=False)
    preds = [predict(tree, Architecture(h, E, 4, positional=True), T, gamma=gamma) for h in heads]
    for p in preds:
        assert p.exponent >= max(1.0, gamma) and not NEGATIVE.search(p.formula), p.formula
        assert p.reference_exponent is None or p.reference_exponent > 0
    eff = [p.exponent for p in preds if p.efficient]
    ineff = [p.exponent for p in preds if not p.efficient]
    if eff and ineff:
        assert max(eff) <= min(ineff) + 1e-12


def test_efficient_read_of_many_positions_is_not_above_the_failed_version():
    """A specific-position read costs 1 + gamma in memorisation; the failed k-th largest costs no less."""
    tree = Tree([Positions((1, 2), lambda x: x[..., 0].sum(axis=1)), *kth_largest(2).terms], input_dim=4)
    eff = predict(tree, Architecture((1, 1), 8, 4, positional=True), 16)
    ineff = predict(tree, Architecture((2,), 8, 4, positional=True), 16)
    assert eff.efficient and not ineff.efficient and ineff.regime == "theorem 2"
    assert eff.exponent == 2.0 <= ineff.exponent  # Theorem 2 alone would be (16 - 3)/9 = 1.44


def test_every_prediction_field_is_documented():
    doc = Prediction.__doc__
    for f in dataclasses.fields(Prediction):
        assert re.search(rf"\b{f.name}\b", doc), f.name
    for word in ("regime", "formula", "reference_exponent", "exact", "gamma", "memorisation", "theorem 2"):
        assert word in doc


def test_a_search_that_gives_up_says_so(monkeypatch):
    monkeypatch.setattr(schedule_module, "SEARCH_BUDGET", 3)
    pred = predict(pairwise_max(3), Architecture((2, 3), 48, 4), 16)
    assert not pred.schedule.exact and not pred.efficient
    assert any("stopped after 3 steps" in n and "not proved" in n for n in pred.notes)
    monkeypatch.undo()
    full = predict(pairwise_max(3), Architecture((2, 3), 48, 4), 16)
    assert full.schedule.exact and full.notes == ()


@pytest.mark.parametrize("eps", [1.0, 2.0, 0.0, -0.1, float("nan"), float("inf")])
def test_cost_needs_an_accuracy_below_one(eps):
    pred = predict(pairwise_max(2), Architecture((2, 2), 32, 4), 16)
    with pytest.raises(ValueError, match="eps"):
        pred.cost(eps)
    assert pred.cost(1e-2) == pytest.approx(1e2)
