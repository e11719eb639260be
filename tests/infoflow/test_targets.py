"""Targets evaluated by the generic tree evaluator agree with hand-written brute force (small T)."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from transformer_theory.infoflow import (Architecture, Bilinear, Custom, Linear, Reduction, Tree, coupled_positions,
                                         kth_largest, max_retrieval, min_pairwise_dot, pairwise_max, predict,
                                         specific_positions, triangle_center)


# ------------------------------------------------------------------ brute-force references (tests only)
def bf_max_retrieval(X, a):
    return np.array([sum(max(a[i] @ x[t] for t in range(len(x))) for i in range(len(a))) for x in X])


def bf_pairwise_max(X, A):
    T = X.shape[1]
    return np.array([sum(max(x[s] @ A[i] @ x[t] for s in range(T) for t in range(T)) for i in range(len(A)))
                     for x in X])


def bf_min_pairwise_dot(X, distinct):
    T = X.shape[1]
    return np.array([min(x[s] @ x[t] for s in range(T) for t in range(T) if not (distinct and s == t)) for x in X])


def bf_kth(X, q, b, k):
    out = []
    for x in X:
        scores = [q @ x[t] for t in range(len(x))]
        tk = sorted(range(len(x)), key=lambda t: -scores[t])[k - 1]
        out.append(b @ x[tk])
    return np.array(out)


def bf_triangle(X, squared):
    T = X.shape[1]
    p = 2 if squared else 1
    return np.array([min(np.linalg.norm(x[a] + x[b] + x[c]) ** p
                         for a, b, c in itertools.product(range(T), repeat=3)) for x in X])


RNG = np.random.default_rng(123)


@pytest.mark.parametrize("D", [1, 3])
@pytest.mark.parametrize("T", [1, 5])
def test_max_retrieval_matches_brute_force(D, T):
    tree = max_retrieval(D, seed=7)
    X = tree.sample_inputs(6, T, RNG)
    np.testing.assert_allclose(tree(X), bf_max_retrieval(X, tree.params["a"]), rtol=0, atol=1e-12)


@settings(max_examples=15)
@given(D=st.integers(1, 4), T=st.integers(1, 7), seed=st.integers(0, 10**6))
def test_pairwise_max_matches_brute_force(D, T, seed):
    tree = pairwise_max(D, seed=seed % 97)
    X = tree.sample_inputs(3, T, seed)
    np.testing.assert_allclose(tree(X), bf_pairwise_max(X, tree.params["A"]), rtol=0, atol=1e-12)


@pytest.mark.parametrize("distinct", [True, False])
def test_min_pairwise_dot_matches_brute_force(distinct):
    tree = min_pairwise_dot(distinct=distinct)
    X = tree.sample_inputs(8, 6, RNG)
    np.testing.assert_allclose(tree(X), bf_min_pairwise_dot(X, distinct), rtol=0, atol=1e-12)


@pytest.mark.parametrize("k", [1, 2, 4])
def test_kth_largest_matches_brute_force(k):
    tree = kth_largest(k, seed=3)
    X = tree.sample_inputs(10, 7, RNG)
    np.testing.assert_allclose(tree(X), bf_kth(X, tree.params["q"], tree.params["b"], k), rtol=0, atol=1e-12)


def test_specific_positions_is_the_sum_of_positions():
    tree = specific_positions((1, 2, 3))
    X = tree.sample_inputs(5, 10, RNG)
    np.testing.assert_allclose(tree(X), X[:, 0] + X[:, 1] + X[:, 2])
    assert tree(X).shape == (5, 2)


@pytest.mark.parametrize("T0", [1, 3, 6])
def test_coupled_positions_reads_each_of_the_first_positions_its_own_way(T0):
    tree = coupled_positions(T0, d=2, seed=4)
    X = tree.sample_inputs(7, 8, RNG)
    c = tree.params["c"]
    expected = [sum(np.cos(c[j] @ x[j]) for j in range(T0)) for x in X]
    np.testing.assert_allclose(tree(X), expected, rtol=0, atol=1e-12)
    assert np.array_equal(coupled_positions(T0 + 2, seed=4).params["c"][:T0], c)  # nested: the same first readouts
    if T0 > 1:
        with pytest.raises(ValueError, match="exceeds seq_len"):
            tree(X[:, : T0 - 1])


def test_coupled_positions_cost_law_exponent():
    """Specific-position aggregation of T0 tokens: exponent max(1 + gamma, T0 d / E - 1) (Theorem 3, our rule)."""
    exponents = [predict(coupled_positions(T0), Architecture((1,), 4, 2, positional=True), 16).exponent
                 for T0 in (1, 2, 4, 8, 16)]
    assert exponents == [2.0, 2.0, 2.0, 3.0, 7.0]


@pytest.mark.parametrize("squared", [False, True])
@pytest.mark.parametrize("T", [1, 2, 7])
def test_triangle_center_matches_brute_force(squared, T):
    tree = triangle_center(squared=squared)
    X = tree.sample_inputs(6, T, RNG)
    np.testing.assert_allclose(tree(X), bf_triangle(X, squared), rtol=0, atol=1e-12)


def test_triangle_center_chunking_is_exact_at_T64():
    tree = triangle_center()
    X = tree.sample_inputs(3, 64, RNG)
    whole = tree.evaluate(X, chunk_size=3)
    np.testing.assert_array_equal(whole, tree.evaluate(X, chunk_size=1))
    # one sample against a direct float64 evaluation over all T^3 triples
    x = X[0]
    s = x[:, None, None, :] + x[None, :, None, :] + x[None, None, :, :]
    assert abs(whole[0] - np.sqrt((s ** 2).sum(-1)).min()) < 1e-12


def test_triangle_inputs_follow_the_paper():
    X = triangle_center().sample_inputs(2000, 8, 0)
    n = np.linalg.norm(X, axis=-1)
    assert X.shape == (2000, 8, 2) and n.min() >= 0.2 - 1e-12 and n.max() <= 4 + 1e-12
    # N(0, 2 I): most norms are untouched by the clamp; mean of squared norm of unclamped ones ~ 4
    assert 3.0 < np.mean(n[(n > 0.2) & (n < 4)] ** 2) < 4.5


def test_parameters_come_from_the_seed():
    assert np.array_equal(pairwise_max(3, seed=1).params["A"], pairwise_max(3, seed=1).params["A"])
    assert not np.array_equal(pairwise_max(3, seed=1).params["A"], pairwise_max(3, seed=2).params["A"])
    X = pairwise_max(2).sample_inputs(4, 5, 9)
    assert np.array_equal(X, pairwise_max(2).sample_inputs(4, 5, 9))


def test_torch_inputs_give_torch_outputs():
    torch = pytest.importorskip("torch")
    tree = pairwise_max(2)
    X = tree.sample_inputs(4, 6, RNG)
    out = tree(torch.tensor(X, dtype=torch.float32))
    assert isinstance(out, torch.Tensor) and out.dtype == torch.float32 and out.shape == (4,)
    np.testing.assert_allclose(out.numpy(), tree(X), rtol=1e-5, atol=1e-5)


def test_user_written_tree_is_evaluable():
    A = np.arange(16.0).reshape(4, 4) / 16
    inner = Reduction("max", "s", Bilinear("s", "t", A), label="s")
    outer = Reduction("min", "t", Custom(lambda xt, m: m - xt[..., 0], ("t", inner)), label="t")
    tree = Tree([outer, Reduction("max", "u", Linear("u", [1, 0, 0, 0]))], input_dim=4, name="mine")
    X = tree.sample_inputs(5, 6, RNG)
    T = X.shape[1]
    ref = [min(max(x[s] @ A @ x[t] for s in range(T)) - x[t, 0] for t in range(T)) + x[:, 0].max() for x in X]
    np.testing.assert_allclose(tree(X), ref, atol=1e-12)


def test_selected_positions_are_the_argmax():
    tree = pairwise_max(2, seed=4)
    X = tree.sample_inputs(3, 6, RNG)
    s1 = tree.selected_positions(X, 0)  # s1*(t) for every t
    A = tree.params["A"][0]
    for b in range(3):
        for t in range(6):
            assert s1[b, t] == int(np.argmax([X[b, s] @ A @ X[b, t] for s in range(6)]))
    t1 = tree.selected_positions(X, 1)
    assert t1.shape == (3,)
