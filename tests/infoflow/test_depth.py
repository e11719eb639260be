"""Depth as the update rule allows: a token inherits the information set of the token it attends to, so a
k-hop pointer chase takes about log2 k layers (pointer doubling, Sanford et al. 2024)."""

import math

import numpy as np
import pytest

from transformer_theory.infoflow import (Architecture, Bilinear, Linear, PointerCycleInputs, Reduction, Tree, k_hop,
                                         minimal_depth, predict, propagate)
from transformer_theory.infoflow.reference import prediction_table
from transformer_theory.plotting.infoflow import plot_information_flow


def follow_the_cycle(X, b, k):
    """Brute force: start at the largest first coordinate, step to the successor (key = my pointer) k times."""
    out = []
    for x in X:
        p = int(np.argmax(x[:, 0]))
        for _ in range(k):
            p = int(np.argmin(np.linalg.norm(x[:, :2] - x[p, 2:], axis=1)))
        out.append(b @ x[p])
    return np.array(out)


def test_pointer_cycle_inputs_form_one_cycle_with_a_margin():
    T = 12
    X = PointerCycleInputs().sample(50, T, 0)
    assert X.shape == (50, T, 4)
    np.testing.assert_allclose(np.linalg.norm(X[..., :2], axis=-1), 1.0)
    for x in X:
        scores = x[:, :2] @ x[:, 2:].T          # scores[s, u] = k_s . p_u
        succ = scores.argmax(axis=0)
        top2 = np.sort(scores, axis=0)[-2:]
        assert np.allclose(top2[1], 1.0) and np.all(top2[0] <= np.cos(2 * np.pi / T) + 1e-9)  # unique, margin
        seen, p = set(), 0
        for _ in range(T):                       # a single cycle through all positions
            seen.add(p)
            p = succ[p]
        assert seen == set(range(T)) and p == 0
    with pytest.raises(ValueError, match="d = 4"):
        PointerCycleInputs(d=3)


@pytest.mark.parametrize("k", [0, 1, 2, 5, 13])
@pytest.mark.parametrize("T", [1, 3, 16])
def test_k_hop_evaluates_the_pointer_chase(k, T):
    tree = k_hop(k, seed=1)
    X, y = tree.sample(40, T, 2)
    np.testing.assert_allclose(y, follow_the_cycle(X, tree.params["b"], k), atol=1e-12)
    assert y.shape == (40,) and np.std(y) > 0 or T == 1


def test_k_hop_is_fast_to_evaluate_at_depth():
    """Nested look-ups are computed once per position, not over T^(k+1) tuples."""
    tree = k_hop(12)
    X = tree.sample_inputs(64, 32, 0)
    np.testing.assert_allclose(tree(X), follow_the_cycle(X, tree.params["b"], 12), atol=1e-12)


@pytest.mark.parametrize("k", range(0, 33))
def test_minimal_depth_of_the_k_hop_chase_is_logarithmic(k):
    """ceil(log2(k + 2)) layers with one head each: the CLS token starts at p_0 in layer 1, every token doubles
    the run of pointers it holds, and the CLS token follows from its last position in every later layer."""
    assert minimal_depth(k_hop(k), 1, 32, 64) == max(1, math.ceil(math.log2(k + 2)))


def test_minimal_depth_grows_by_one_layer_each_time_k_doubles():
    depths = [minimal_depth(k_hop(k), 1, 32, 64) for k in (1, 2, 4, 8, 16, 32, 64)]
    assert depths == [2, 2, 3, 4, 5, 6, 7]
    assert all(b - a in (0, 1) for a, b in zip(depths, depths[1:]))
    assert depths[-1] < 64  # not one layer per hop


def test_the_doubling_schedule_and_information_sets():
    prop = propagate(k_hop(6), Architecture((1, 1, 1), 32, 4), 8)
    assert prop.template(1) == {"t", "p1*(t)"}
    assert prop.template(2) == {"t", "p1*(t)", "p1*^2(t)", "p1*^3(t)"}  # doubled
    cls3 = prop.labels("CLS", 3)
    assert cls3 == {"t*"} | {f"p1*^{j}(t*)" if j > 1 else "p1*(t*)" for j in range(1, 7)}
    assert [(s.layer, s.query) for s in prop.steps] == [(1, "CLS"), (1, "tokens"), (2, "CLS"), (2, "tokens"),
                                                        (3, "CLS")]
    # one head per layer: the CLS retrieval and the tokens' pointer step share it
    assert {s.head for s in prop.steps} == {1}


def test_retrieved_positions_follow_the_pointer_on_data():
    tree = k_hop(6)
    prop = propagate(tree, Architecture((1, 1, 1), 32, 4), 8)
    X = tree.sample_inputs(1, 8, 3)[0]
    succ = (X[:, :2] @ X[:, 2:].T).argmax(axis=0)
    start = int(np.argmax(X[:, 0]))
    by_layer = {(s.layer, s.query): prop.retrieved(s, X) - 1 for s in prop.steps}
    assert by_layer[(1, "CLS")] == start
    np.testing.assert_array_equal(by_layer[(1, "tokens")], succ)
    np.testing.assert_array_equal(by_layer[(2, "tokens")], succ[succ])            # offset 2: doubling
    assert by_layer[(2, "CLS")] == succ[start]                                     # follow from p_0
    assert by_layer[(3, "CLS")] == succ[succ[succ[start]]]                          # follow from p_2
    ax = plot_information_flow(prop, X)
    arrows = [c for c in ax.texts if getattr(c, "arrow_patch", None) is not None and c.get_text() == ""]
    assert len(arrows) == 3 + 2 * 8  # three CLS retrievals, two layers of pointer steps at every token


def test_induction_head_needs_two_layers():
    """Sanford et al.: one layer cannot find a token and read the one it points to cheaply; two layers can."""
    one = [predict(k_hop(1), Architecture((h,), 32, 4), 32) for h in (1, 4, 8)]
    assert not any(p.efficient for p in one) and {p.bottleneck.kind for p in one} == {"depth"}
    assert predict(k_hop(1), Architecture((1, 1), 32, 4), 32).efficient
    rows = [r for r in prediction_table() if r["experiment"].startswith("induction head")]
    assert len(rows) == 3 and all(r["agrees"] for r in rows)


def test_distinct_pointers_are_chased_one_layer_per_hop():
    """Doubling needs one repeated pointer; k different pointers are k nested look-ups (a documented limit)."""
    rng = np.random.default_rng(0)
    value = Linear("s3", rng.normal(size=4))
    for j in (3, 2, 1):
        value = Reduction("max", f"s{j}", Bilinear(f"s{j}", f"s{j - 1}" if j > 1 else "t", rng.normal(size=(4, 4))),
                          value=value)
    tree = Tree([Reduction("max", "t", Linear("t", [1, 0, 0, 0]), value=value)], input_dim=4)
    assert minimal_depth(tree, 1, 32, 16) == 4
    same = k_hop(3)
    assert minimal_depth(same, 1, 32, 16) == 3


def test_a_pointer_chase_at_every_token_doubles():
    """f(u) = b^T x(ptr^m(u)) at every token, read by a CLS max: ceil(log2(m + 1)) layers, then one more."""
    A = k_hop(1).params["A"]
    b = np.ones(4)
    for m, depth in [(1, 2), (3, 3), (4, 4), (7, 4)]:
        value = Linear(f"s{m}", b)
        for j in range(m, 0, -1):
            value = Reduction("max", f"s{j}", Bilinear(f"s{j}", f"s{j - 1}" if j > 1 else "u", A), value=value)
        feature = Reduction("max", "u", value, label="u")  # max over u of b^T x(ptr^m(u))
        tree = Tree([feature], input_dim=4, inputs=PointerCycleInputs())
        assert minimal_depth(tree, 1, 32, 16) == depth, m
