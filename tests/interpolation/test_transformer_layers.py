"""Layers on their own: the three attention lemmas (Fig. 4), tie averaging (Fig. 2), softmax, block
orders, hat feed-forward layers (Tool A), structured versus dense evaluation."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from transformer_theory.interpolation import (
    HARDMAX_TIE_TOL,
    Block,
    DenseMatrix,
    FeedForward,
    HatFeedForward,
    RankOne,
    ScaledIdentity,
    SelfAttention,
    Transformer,
)
from transformer_theory.interpolation.arithmetic import EXACT, FLOAT
from transformer_theory.interpolation.construction.geometry import sphere_slots
from transformer_theory.interpolation.construction.hat import best_direction, hat_along, hat_move, peel_move
from transformer_theory.interpolation.segments import Segments

RNG = np.random.default_rng(0)


def collapse_sa(A, one=1.0) -> SelfAttention:
    """``ρ = 0``, ``V = I``: every token moves to the average of its maximisers."""
    return SelfAttention(rho=one * 0, V=ScaledIdentity(one), A=A)


def test_lemma_4_1_rank_one_attention_keeps_the_two_extremes_along_v() -> None:
    X = RNG.normal(size=(11, 2))
    v = np.array([0.6, 0.8])
    Y = collapse_sa(RankOne(v, v))(X)
    proj = X @ v
    top, bottom = X[proj.argmax()], X[proj.argmin()]
    assert np.array_equal(np.unique(Y, axis=0), np.unique(np.stack([top, bottom]), axis=0))
    for x, y in zip(X, Y):  # positive side -> v-maximiser, negative side -> v-minimiser
        assert np.array_equal(y, top if x @ v > 0 else bottom)


def test_lemma_4_1_contraction_toward_the_leader() -> None:
    X = RNG.uniform(1, 2, size=(6, 3))
    v = np.array([1.0, 0.5, 0.25])
    c = 0.3
    Y = SelfAttention(rho=1 - c, V=ScaledIdentity(c), A=RankOne(v, v))(X)
    np.testing.assert_allclose(Y, (1 - c) * X + c * X[(X @ v).argmax()], rtol=0, atol=1e-15)


def test_lemma_4_2_dominating_token_attracts_the_whole_box() -> None:
    R = 2.0
    X = np.vstack([RNG.uniform(0.1, R, size=(9, 2)), [[R + 0.5, R + 0.5]]])
    Y = collapse_sa(ScaledIdentity(1.0))(X)
    assert np.array_equal(Y, np.tile(X[-1], (10, 1)))


def test_lemma_4_3_points_on_a_sphere_are_fixed() -> None:
    angles = np.linspace(0, 2 * np.pi, 8, endpoint=False)
    X = 1.5 * np.stack([np.cos(angles), np.sin(angles)], axis=1)
    assert np.array_equal(collapse_sa(ScaledIdentity(1.0))(X), X)


def test_lemma_4_3_exact_rational_sphere_points() -> None:
    Q = sphere_slots(5, 3, np.random.default_rng(1), EXACT, radius=2)
    assert all(sum(v * v for v in q) == 4 for q in Q) and all(v < 0 for v in Q.flat)
    one = Fraction(1)
    assert np.array_equal(collapse_sa(ScaledIdentity(one), one)(Q), Q)


def fig2_tokens() -> np.ndarray:
    x1 = np.array([0.59, 1.12])
    x2 = np.array([-0.03, 2.12])
    x3 = x2 + 1.7 * np.array([x1[1], -x1[0]])  # same projection onto x1 as x2: an exact tie
    return np.array([x1, x2, x3, [-1.63, 1.20], [1.10, 0.34], [-0.81, -0.23]])


def test_fig2_ties_are_averaged_uniformly() -> None:
    X = fig2_tokens()
    sa = collapse_sa(ScaledIdentity(1.0))
    W = sa.weights(X)
    assert W[0, 1] == W[0, 2] == 0.5 and W[0].sum() == 1
    np.testing.assert_allclose(sa(X)[0], (X[1] + X[2]) / 2, atol=1e-15)


def test_ties_within_the_stated_tolerance_are_averaged_and_beyond_are_not() -> None:
    X = np.array([[1.0, 0.0], [2.0, 0.0], [0.0, 0.0]])
    for offset, tied in ((0.1 * HARDMAX_TIE_TOL, True), (100 * HARDMAX_TIE_TOL, False)):
        Z = np.vstack([X, [[2.0 - offset, 1e-3]]])
        W = collapse_sa(ScaledIdentity(1.0)).weights(Z)
        assert (W[0, 3] > 0) == tied


def test_rank_one_tie_falls_back_to_uniform_average() -> None:
    v = np.array([1.0, 0.0])
    X = np.array([[1.0, 0.0], [2.0, 1.0], [2.0, -1.0]])  # x2, x3 tie along v
    Y = collapse_sa(RankOne(v, v))(X)
    np.testing.assert_array_equal(Y[0], [2.0, 0.0])


def test_softmax_tends_to_hardmax_and_averages_ties() -> None:
    X = fig2_tokens()
    hard = collapse_sa(ScaledIdentity(1.0))(X)
    soft = SelfAttention(0.0, ScaledIdentity(1.0), ScaledIdentity(1.0), "softmax", temperature=1e-3)(X)
    np.testing.assert_allclose(soft, hard, atol=1e-9)
    warm = SelfAttention(0.0, ScaledIdentity(1.0), ScaledIdentity(1.0), "softmax", temperature=1.0)(X)
    assert np.abs(warm - hard).max() > 1e-2


@pytest.mark.parametrize("attention", ["hardmax", "softmax"])
def test_structured_and_dense_attention_agree(attention: str) -> None:
    seqs = [RNG.normal(size=(n, 4)) for n in (1, 3, 3, 7)]
    X, seg = np.concatenate(seqs), Segments.of(seqs)
    a, b = RNG.normal(size=4), RNG.normal(size=4)
    for A in (RankOne(a, b), ScaledIdentity(0.7), DenseMatrix(RNG.normal(size=(4, 4)))):
        sa = SelfAttention(0.4, RankOne(b, a), A, attention, temperature=0.5 if attention == "softmax" else None)
        np.testing.assert_allclose(sa.apply(X, seg), sa.apply(X, seg, structured=False), atol=1e-12)
        for j, x in enumerate(seqs):  # attention stays within each sequence
            np.testing.assert_allclose(sa(x), seg.split(sa.apply(X, seg))[j], atol=1e-12)


def test_block_orders() -> None:
    ff = FeedForward(1.0, RNG.normal(size=(2, 4)), RNG.normal(size=(4, 2)), RNG.normal(size=4))
    sa = SelfAttention(0.5, ScaledIdentity(0.5), ScaledIdentity(1.0))
    X = RNG.normal(size=(5, 2))
    seg = Segments.of([X])
    assert np.allclose(Block(ff, sa).apply(X, seg), sa(ff(X)))
    assert np.allclose(Block(ff, sa, order="sa_ff").apply(X, seg), ff(sa(X)))
    with pytest.raises(ValueError, match="block order"):
        Block(ff, sa, order="ff_ff")


def test_feed_forward_formula_and_identity() -> None:
    W, U, b = RNG.normal(size=(3, 4)), RNG.normal(size=(4, 3)), RNG.normal(size=4)
    X = RNG.normal(size=(6, 3))
    np.testing.assert_allclose(FeedForward(0.5, W, U, b)(X), 0.5 * X + np.maximum(X @ U.T + b, 0) @ W.T)
    ident = FeedForward.identity(3)
    assert ident.is_identity and ident(X) is X and ident.num_parameters() == 0
    assert SelfAttention.identity().is_identity and SelfAttention.identity().num_parameters(3) == 0


def test_hat_moves_exactly_one_point() -> None:
    P = RNG.normal(size=(30, 5))
    q = RNG.normal(size=5)
    ff = hat_move(P, 7, q, np.random.default_rng(3))
    assert isinstance(ff, HatFeedForward) and ff.width == 4
    Y = ff(P)
    others = np.arange(30) != 7
    assert np.array_equal(Y[others], P[others])  # bitwise: the increment is exactly 0
    np.testing.assert_allclose(Y[7], q, atol=1e-15)
    np.testing.assert_allclose(ff.apply_dense(P), Y, atol=1e-10)  # the same function as η x + W σ(U x + b)


def test_no_hat_moves_two_points_past_a_point_between_them() -> None:
    """Members moved together must project within an eighth of their gap to the rest: with a third point on the
    segment between two members, or at their midpoint, no direction does (``None``, not an error); a single
    distinct point is always isolated, and a duplicate position is refused by :func:`hat_move`."""
    a, b = np.array([1.0, 1.2, 1.3]), np.array([1.0 + 3e-10, 1.2 - 1e-10, 1.3 + 2e-10])
    for inner in (0.3, 0.5):
        P = np.array([a, b, a + inner * (b - a), [2.0, 1.0, 1.0]])
        assert best_direction(P, 0, np.random.default_rng(0), members=np.array([0, 1])) is None
        assert best_direction(P, 2, np.random.default_rng(0)) is not None
    with pytest.raises(RuntimeError, match="duplicate"):
        hat_move(np.array([a, a, b]), 0, b, np.random.default_rng(0))


def test_hat_biases_are_exact_float64_numbers() -> None:
    """The window is rounded onto the float grid of |t_p| + ε: the biases ±ε − t_p, ±ε/2 − t_p and their
    differences are exact, so a dense evaluation puts the moved point on the flat top even when ε is a
    millionth of t_p."""
    P = np.array([[1000.0, 0.0], [1000.0 + 1e-6, 3e-7], [0.0, 1.0]])
    ff = hat_move(P, 0, np.array([5.0, 5.0]), np.random.default_rng(0))
    b = ff.b
    assert b[0] - b[1] == ff.eps / 2 and b[1] - b[2] == ff.eps and b[2] - b[3] == ff.eps / 2
    np.testing.assert_allclose(ff.apply_dense(P)[0], [5.0, 5.0], rtol=0, atol=1e-9)
    np.testing.assert_allclose(ff.apply_dense(P)[1:], P[1:], rtol=0, atol=1e-12)  # cancellation: ~ε_mach·|δ||s|/ε


def test_peeled_hat_leaves_the_protected_points_bitwise_put_in_a_dense_evaluation() -> None:
    """Tool A moving the extreme candidate: every protected point is on the side of the window where all four
    neurons are 0, so even the dense formula returns it unchanged, whatever the window's width."""
    rng = np.random.default_rng(1)
    P = np.vstack([rng.uniform(0, 1, (40, 3)), [[0.5, 0.5, 0.5]], [[0.5, 0.5, 0.5 + 1e-11]]])
    candidates, protected = np.arange(30, 42), np.arange(10)
    p, u, gap, protects_all = peel_move(P, candidates, protected, lambda: FLOAT.gaussian_direction(rng, 3))
    assert protects_all and p in candidates
    ff = hat_along(P, p, np.full(3, 9.0), u, gap)
    dense = ff.apply_dense(P)
    assert np.array_equal(dense[protected], P[protected])
    assert np.array_equal(dense[np.setdiff1d(candidates, [p])], P[np.setdiff1d(candidates, [p])])


@pytest.mark.parametrize("factor", [2.0**-300, 0.125, 2.0**200])
def test_rescaled_layers_are_the_old_ones_times_the_factor_bitwise(factor: float) -> None:
    """``Transformer.rescaled``: every layer is positively homogeneous once its biases, windows and attention
    matrices are rescaled, and a power of two commutes with rounding."""
    P = RNG.normal(size=(6, 3))
    v = np.abs(RNG.normal(size=3)) + 1
    blocks = [
        Block(FeedForward.affine(0.5, RNG.normal(size=3)), SelfAttention.identity()),
        Block(hat_move(P, 2, RNG.normal(size=3), np.random.default_rng(0)), SelfAttention(0.7, ScaledIdentity(0.3), RankOne(v, v))),
        Block(FeedForward.identity(3), SelfAttention(0.0, ScaledIdentity(1.0), ScaledIdentity(1.0))),
        Block(FeedForward.identity(3), SelfAttention(0.2, ScaledIdentity(0.8), DenseMatrix(RNG.normal(size=(3, 3))), "softmax", 0.5)),
    ]
    model = Transformer(blocks, d=3)
    scaled = model.rescaled(factor)
    assert scaled.blocks[1].sa.A.a is scaled.blocks[1].sa.A.b  # the symmetric v vᵀ keeps its d parameters
    for structured in (True, False):
        assert np.array_equal(scaled.apply([P * factor], structured)[0], model.apply([P], structured)[0] * factor)


