"""The targets of the InfoFlow paper and of its predecessor, as comparison trees.

Each function returns a :class:`~transformer_theory.infoflow.trees.Tree`: the *symbolic* comparison
tree that :func:`~transformer_theory.infoflow.predict` reasons about **and** the evaluable target
(``tree(X)``, ``tree.sample_inputs(batch, seq_len, rng)``) that the experiment chapters train on: one
definition of each target. Fixed random parameters (``a_i``, ``A_i``, ``q``, ``b``) are drawn at
construction from ``seed``; their distribution is our choice where the papers do not give one
(iid ``N(0, 1/d)`` entries), and is recorded in ``tree.params``.

References: P1 = Yu, Jiang, Bao, R. Yu, Li, *The Effect of Attention Head Count on Transformer
Approximation* (ICLR 2026, arXiv 2510.06662); InfoFlow = Yu, Jiang, Bao, Li (arXiv 2605.17930), as
summarised; Sanford, Hsu, Telgarsky, *Transformers, Parallel Computation, and Logarithmic Depth*
(ICML 2024) for the pointer chase.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from transformer_theory.checks import non_negative_int, positive_int, seed_value
from transformer_theory.infoflow.trees import (Bilinear, GaussianInputs, Linear, NormOfSum, PointerCycleInputs,
                                               Positions, Reduction, Tree)

__all__ = ["max_retrieval", "pairwise_max", "min_pairwise_dot", "kth_largest", "specific_positions",
           "coupled_positions", "triangle_center", "k_hop"]


def max_retrieval(D: int, d: int = 4, seed: int = 0) -> Tree:
    """``F(X) = sum_{i<=D} max_t a_i^T x(t)``: P1's D-retrieval target (intrinsic dimension D).

    Order-1 reductions, comparison dimension beta_1 = D. P1: a single layer is efficient iff h >= D;
    two layers need L*h >= D (P1 Table 5). ``a_i`` iid ``N(0, 1/d)``; tokens ``N(0, I_d)`` (P1 §B).
    """
    D, d = positive_int("D", D), positive_int("d", d)
    a = np.random.default_rng(seed_value(seed)).normal(0.0, 1.0 / np.sqrt(d), size=(D, d))
    terms = [Reduction("max", "t", Linear("t", a[i]), label=f"t{i + 1}") for i in range(D)]
    return Tree(terms, input_dim=d, name=f"max_retrieval(D={D})", params={"a": a, "seed": seed},
                description=f"sum_{{i<={D}}} max_t a_i^T x(t)")


def pairwise_max(D: int, d: int = 4, seed: int = 0) -> Tree:
    """``F(X) = sum_{i<=D} max_{s,t} x(s)^T A_i x(t)``: the intrinsic-dimension target of InfoFlow §4.1.

    Written as nested reductions ``max_t [ max_s x(s)^T A_i x(t) ]`` (inner: order 2 with free
    variable t; outer: order 1), so beta_1 = D at both levels. ``A_i`` iid ``N(0, 1/d)`` entries
    (the paper does not give the distribution); tokens ``N(0, I_d)``, d = 4 in the paper.
    """
    D, d = positive_int("D", D), positive_int("d", d)
    A = np.random.default_rng(seed_value(seed)).normal(0.0, 1.0 / np.sqrt(d), size=(D, d, d))
    terms = [Reduction("max", "t", Reduction("max", "s", Bilinear("s", "t", A[i]), label=f"s{i + 1}"),
                       label=f"t{i + 1}") for i in range(D)]
    return Tree(terms, input_dim=d, name=f"pairwise_max(D={D})", params={"A": A, "seed": seed},
                description=f"sum_{{i<={D}}} max_{{s,t}} x(s)^T A_i x(t)")


def min_pairwise_dot(d: int = 4, distinct: bool = True) -> Tree:
    """``F(X) = min_{s,t} x(s)^T x(t)`` (``s != t`` with ``distinct``): InfoFlow Theorem 1's target.

    The summaries name the target ("minimum of pairwise dot products"); whether ``s = t`` is excluded
    is unknown. With Gaussian tokens the two versions differ with probability ~0 (``x^T x >= 0`` while
    the off-diagonal minimum is negative almost surely). Depth separation: one layer costs
    ``eps^{-k(T)}`` with k linear in T, two layers with one head each ``O(eps^{-1})``. With ``distinct``
    the target needs ``seq_len >= 2`` (at ``T = 1`` no pair ``s != t`` exists; evaluating or predicting
    there raises ``ValueError``).
    """
    d = positive_int("d", d)
    inner = Reduction("min", "s", Bilinear("s", "t"), exclude=("t",) if distinct else (), label="s")
    return Tree([Reduction("min", "t", inner, label="t")], input_dim=d, name="min_pairwise_dot",
                params={"distinct": distinct},
                description="min_{s != t} x(s)^T x(t)" if distinct else "min_{s,t} x(s)^T x(t)")


def kth_largest(k: int, d: int = 4, seed: int = 0) -> Tree:
    """``F(X) = b^T x(t_k)``, ``t_k`` = position of the k-th largest score ``q^T x(t)`` (our form of
    InfoFlow Theorem 2's target, a reconstruction; k = 1 is the efficient max-position control).

    Theorem 2 (as summarised): a single layer needs ``Omega(eps^{-(T-k-1)/(n+1)})`` parameters for
    k >= 2 (n = per-head dimension). With more layers the k-th largest is a pointer chase (``k - 1``
    look-ups of the next smaller score from the maximum) that the schedule judges. The same target
    written as a max that masks the first ``k - 1`` maxima (``Reduction(..., exclude=(...))``) gets the
    same prediction. ``q, b`` iid ``N(0, 1/d)``.
    """
    k, d = positive_int("k", k), positive_int("d", d)
    rng = np.random.default_rng(seed_value(seed))
    q, b = rng.normal(0.0, 1.0 / np.sqrt(d), size=(2, d))
    red = Reduction("max", "t", Linear("t", q), rank=k, value=Linear("t", b), label="t")
    return Tree([red], input_dim=d, name=f"kth_largest(k={k})", params={"q": q, "b": b, "seed": seed},
                description=f"b^T x(t_{k}), t_{k} = position of the {k}-th largest q^T x(t)")


def masked_kth_largest(k: int, d: int = 4, seed: int = 0) -> Tree:
    """:func:`kth_largest` written another way: a max of ``q^T x(t)`` that masks the positions of the first
    ``k - 1`` maxima (each one a masked max itself). Same function, same ``q, b``; chapter 06 checks that
    the prediction does not depend on which form a target is written in."""
    base = kth_largest(k, d, seed)
    q, b = base.params["q"], base.params["b"]

    def jth_maximum(j: int, value: Linear | None = None) -> Reduction:  # a fresh node each time (no sharing)
        return Reduction("max", "t", Linear("t", q), exclude=tuple(jth_maximum(i) for i in range(1, j)), value=value)

    return Tree([jth_maximum(k, Linear("t", b))], input_dim=d, name=f"kth_largest(k={k}), masked", params=base.params,
                description=f"b^T x(t), t = argmax of q^T x over the positions left after masking {k - 1} maxima")


def specific_positions(P: Sequence[int] = (1, 2, 3), d: int = 2) -> Tree:
    """``F(X) = sum_{p in P} x(p)`` (a vector in R^d): InfoFlow §4.4 (P = {1,2,3}, d = 2, T = 10).

    Needs positional encoding (specific-position aggregation); the prediction raises ``ValueError``
    for a model without it (a NoPE model is permutation invariant, this target is not).
    """
    d = positive_int("d", d)
    return Tree([Positions(P)], input_dim=d, name="specific_positions", params={"P": tuple(P)},
                description=f"sum_{{p in {set(P)}}} x(p)")


def coupled_positions(T0: int, d: int = 2, seed: int = 0) -> Tree:
    """``F(X) = sum_{j<=T0} cos(c_j^T x(j))``: a different smooth readout of each of the first T0 positions
    (our target for InfoFlow Theorem 3's cost law, a reconstruction; the paper's experiment of §4.4 is the
    linear :func:`specific_positions`).

    One head that reads P = {1, ..., T0} mixes the T0 tokens into one state before any position-dependent
    nonlinearity can act on them (the encoder sees content only, the PE is added after it), so the FFN must
    decode a function of all T0 d coordinates from that coupled state: the cost law with ``T0 = |P|``.
    A sum of one function of each token would not do (the encoder computes it before the mixing), nor a
    linear target at T0 = 1 (no FFN needed). ``c_j`` iid ``N(0, I_d)`` from ``seed``; tokens ``N(0, I_d)``.
    """
    T0, d = positive_int("T0", T0), positive_int("d", d)
    c = np.random.default_rng(seed_value(seed)).normal(0.0, 1.0, size=(T0, d))
    node = Positions(tuple(range(1, T0 + 1)), lambda toks: np.cos(np.einsum("bjd,jd->bj", toks, c)).sum(axis=1))
    return Tree([node], input_dim=d, name=f"coupled_positions(T0={T0})", params={"c": c, "seed": seed},
                description=f"sum_{{j<={T0}}} cos(c_j^T x(j))")


def triangle_center(squared: bool = False) -> Tree:
    """``F(X) = min_{t1,t2,t3} ||x(t1) + x(t2) + x(t3)||`` (InfoFlow §4.2; one summary squares the norm:
    ``squared``).

    Order-3 comparison (repeated indices allowed). Inputs ``x(t) ~ N(0, 2 I_2)`` with the norm of
    each token clamped to [0.2, 4] (as summarised). Evaluated over pairs t1 <= t2 and a batched third
    index in float64 (symmetric score; see :meth:`Reduction.fused_chain`).
    """
    phi = NormOfSum(("t1", "t2", "t3"), squared=squared)
    tree = Reduction("min", "t1", Reduction("min", "t2", Reduction("min", "t3", phi, label="t3"), label="t2"),
                     label="t1")
    return Tree([tree], input_dim=2, inputs=GaussianInputs(2, variance=2.0, norm_range=(0.2, 4.0)),
                name="triangle_center", params={"squared": squared},
                description="min_{t1,t2,t3} ||x(t1)+x(t2)+x(t3)||" + ("^2" if squared else ""))


#: ``x(s)^T A x(u) = k_s . p_u``: the key of ``s`` against the pointer carried by ``u`` (tokens ``(k, p)``)
_POINTER = np.array([[0.0, 0.0, 1.0, 0.0], [0.0, 0.0, 0.0, 1.0], [0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]])


def k_hop(k: int, seed: int = 0) -> Tree:
    """``F(X) = b^T x(p_k)``: the k-hop pointer chase (Sanford et al. 2024), as a comparison tree.

    Tokens (:class:`~transformer_theory.infoflow.trees.PointerCycleInputs`, d = 4) carry a key and the
    key of their successor on a random cycle through all positions. The pointer of token ``u`` is
    ``ptr(u) = argmax_s x(s)^T A x(u)`` with ``x(s)^T A x(u) = k_s . p_u``: the successor, found with a
    margin ``1 - cos(2 pi / T)``. The chase starts at ``p_0 = argmax_t x(t)_1`` (the key nearest angle 0)
    and ``p_j = ptr(p_{j-1})``; the output reads the last token, ``b`` iid ``N(0, 1/d)`` from ``seed``.
    For ``k < T`` the ``k + 1`` positions visited are distinct.

    The tree is ``max_t x(t)_1`` whose value is ``k`` nested look-ups with the same pointer score
    (``max_{s1} x(s1)^T A x(t)`` with value ``max_{s2} x(s2)^T A x(s1)`` ... with value ``b^T x(s_k)``).
    ``k = 0`` is a plain max retrieval; ``k = 1`` is the induction-head pattern (Sanford et al.: find a
    token, read the token it points to; here pointers are content-addressed, so no positional encoding
    is needed). Sanford et al. show that k hops need depth of order ``log k``: the schedule finds
    pointer doubling, ``ceil(log2(k + 2))`` layers with one head each.
    """
    k = non_negative_int("k", k)
    d = 4
    b = np.random.default_rng(seed_value(seed)).normal(0.0, 1.0 / np.sqrt(d), size=d)
    value: Linear | Reduction = Linear(f"s{k}" if k else "t", b)
    for j in range(k, 0, -1):  # the j-th look-up, from position s_{j-1} (s_0 = t) to s_j
        prev = f"s{j - 1}" if j > 1 else "t"
        value = Reduction("max", f"s{j}", Bilinear(f"s{j}", prev, _POINTER), value=value, label=f"p{j}")
    start = Reduction("max", "t", Linear("t", np.eye(d)[0]), value=value, label="t")
    return Tree([start], input_dim=d, inputs=PointerCycleInputs(), name=f"k_hop(k={k})",
                params={"b": b, "A": _POINTER, "k": k, "seed": seed},
                description=f"b^T x(p_{k}), p_0 = argmax_t x(t)_1, p_j = argmax_s x(s)^T A x(p_(j-1))")
