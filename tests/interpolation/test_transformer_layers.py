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
from transformer_theory.interpolation.arithmetic import EXACT
from transformer_theory.interpolation.construction.geometry import sphere_slots
from transformer_theory.interpolation.construction.hat import hat_move
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


@pytest.mark.parametrize("affine", [False, True])
def test_hat_moves_exactly_one_point(affine: bool) -> None:
    P = RNG.normal(size=(30, 5))
    q = RNG.normal(size=5)
    eta, shift = (0.5, RNG.normal(size=5)) if affine else (1, None)
    ff = hat_move(P, 7, q, np.random.default_rng(3), eta, shift)
    assert isinstance(ff, HatFeedForward) and ff.width == 4 and ff.flat_top == (not affine)
    Y = ff(P)
    others = np.arange(30) != 7
    expected = P[others] if not affine else P[others] * eta + shift
    assert np.array_equal(Y[others], expected)  # bitwise: the increment is exactly 0
    np.testing.assert_allclose(Y[7], q, atol=1e-15)
    np.testing.assert_allclose(ff.apply_dense(P), Y, atol=1e-10)  # the same function as η x + W σ(U x + b)


def test_flat_top_hat_tolerates_small_perturbations_of_the_moved_point() -> None:
    P = RNG.normal(size=(10, 3))
    ff = hat_move(P, 0, np.zeros(3), np.random.default_rng(0))
    nudged = P[:1] + 0.2 * ff.eps * ff.u / np.sum(ff.u**2)
    np.testing.assert_allclose(ff(nudged)[0], nudged[0] + ff.displacement, atol=1e-15)


def test_parameters_are_exposed() -> None:
    v = np.array([1.0, 2.0])
    sa = SelfAttention(0.7, ScaledIdentity(0.3), RankOne(v, v))
    V, A = sa.matrices(2)
    assert np.array_equal(V, 0.3 * np.eye(2)) and np.array_equal(A, np.outer(v, v))
    assert sa.num_parameters(2) == 1 + 1 + 2 and sa.num_parameters(2, structured=False) == 9
    model = Transformer([Block(FeedForward.identity(2), sa)], d=2)
    assert model.num_blocks == 1 and model(np.eye(2)).shape == (2, 2)


def test_softmax_needs_a_temperature() -> None:
    with pytest.raises(ValueError, match="temperature"):
        SelfAttention(1.0, ScaledIdentity(0.0), ScaledIdentity(1.0), "softmax")
