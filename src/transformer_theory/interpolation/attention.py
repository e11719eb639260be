"""Single-head self-attention ``SA(X)_i = ρ x_i + V Σ_l π_il(X) x_l`` (Paper A, §1: each block is a
feed-forward layer, then a self-attention layer).

Scores are ``s_il = ⟨A x_i, x_l⟩``. Hardmax weights average **uniformly over all maximisers**
(Fig. 2 of the paper; a tie means a score within ``HARDMAX_TIE_TOL·(1 + |max|)`` of the maximum in
float64, exact equality in rational arithmetic); softmax weights are ``exp(s_il / τ)`` normalised.

Evaluation exploits the structure of ``A`` and ``V`` (low-rank, as Paper A's abstract says): an
identity layer (``V = 0``, ``ρ = 1``) costs nothing, and rank-one hardmax attention ``A = a bᵀ`` only
needs the extremes of ``a·x`` in each sequence (Lemma 4.1), i.e. O(n log n) per sequence instead of O(n²).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any

import numpy as np

from transformer_theory.interpolation.arithmetic import EXACT, FLOAT, HARDMAX_TIE_TOL, project, tie_tolerance
from transformer_theory.interpolation.linear_maps import DenseMatrix, LinearMap, RankOne, ScaledIdentity
from transformer_theory.interpolation.segments import Segments

ATTENTIONS = ("hardmax", "softmax")


def hardmax_weights(S: np.ndarray) -> np.ndarray:
    """Hardmax weights for scores ``S`` (..., n, n): uniform over the (tolerance-)maximisers of each row."""
    top = S.max(axis=-1, keepdims=True)
    tied = S >= top - tie_tolerance(top)
    count = tied.sum(axis=-1, keepdims=True)
    if S.dtype == object:
        return np.where(tied, Fraction(1), Fraction(0)) / count
    return tied / count


def softmax_weights(S: np.ndarray, temperature: float) -> np.ndarray:
    """Softmax weights ``exp(s/τ) / Σ exp(s/τ)`` (max-subtracted; float64 only)."""
    if S.dtype == object:
        raise ValueError("softmax attention needs float64 arithmetic, not exact rationals")
    z = np.exp((S - S.max(axis=-1, keepdims=True)) / temperature)
    return z / z.sum(axis=-1, keepdims=True)


@dataclass(frozen=True, eq=False)
class SelfAttention:
    """``SA(X)_i = ρ x_i + V Σ_l π_il x_l`` with scores ``⟨A x_i, x_l⟩``; ``A``, ``V`` structured matrices."""

    rho: Any
    V: LinearMap
    A: LinearMap
    attention: str = "hardmax"
    temperature: float | None = None

    def __post_init__(self) -> None:
        if self.attention not in ATTENTIONS:
            raise ValueError(f"attention must be one of {ATTENTIONS}, got {self.attention!r}")
        if self.attention == "softmax" and not (self.temperature is not None and self.temperature > 0):
            raise ValueError(f"softmax attention needs a temperature > 0, got {self.temperature!r}")

    @classmethod
    def identity(cls, exact: bool = False) -> "SelfAttention":
        """The identity layer (ρ = 1, V = 0; A is irrelevant and set to 0)."""
        backend = EXACT if exact else FLOAT
        zero = ScaledIdentity(backend.scalar(0))
        return cls(rho=backend.scalar(1), V=zero, A=zero)

    @property
    def is_identity(self) -> bool:
        return self.rho == 1 and self.V.is_zero

    def matrices(self, d: int) -> tuple[np.ndarray, np.ndarray]:
        """``(V, A)`` as dense d×d arrays."""
        return self.V.matrix(d), self.A.matrix(d)

    def rescaled(self, factor: Any) -> "SelfAttention":
        """``X ↦ factor·SA(X / factor)`` (``factor > 0``): A becomes ``A / factor²``, so the scores, hence the
        weights at the same temperature, do not change; ρ and V are linear and stay."""
        if self.is_identity:
            return self
        return replace(self, A=self.A.for_scale(factor))

    def num_parameters(self, d: int, structured: bool = True) -> int:
        """Dense: ρ, V, A (1 + 2d²). Structured: ρ plus the free entries of V and A (0 for the identity)."""
        if not structured:
            return 1 + 2 * d * d
        if self.is_identity:
            return 0
        return 1 + self.V.num_parameters(d) + self.A.num_parameters(d)

    def weights(self, X: np.ndarray) -> np.ndarray:
        """The attention matrix ``π(X)`` (n×n) of one sequence."""
        S = self.A.apply(X) @ X.T
        return hardmax_weights(S) if self.attention == "hardmax" else softmax_weights(S, self.temperature)

    def __call__(self, X: np.ndarray) -> np.ndarray:
        """The layer on one sequence ``X`` (n, d)."""
        X = np.asarray(X)
        return self.apply(X, Segments(np.array([len(X)])))

    def apply(self, X: np.ndarray, segments: Segments, structured: bool = True) -> np.ndarray:
        """The layer on stacked sequences (attention within each segment).

        ``structured=False`` evaluates with dense d×d matrices and full n×n attention, as a reference. The
        identity layer returns ``X`` on both paths (its dense formula ``1·X + 0·π(X)X`` is exactly ``X``).
        """
        if self.is_identity:
            return X
        if not structured:
            d = X.shape[1]
            V, A = self.matrices(d)
            return self._apply_grouped(X, segments, DenseMatrix(V), DenseMatrix(A), range(len(segments.lengths)))
        if self.V.is_zero:
            return X if self.rho == 1 else X * self.rho
        if self.attention == "hardmax" and isinstance(self.A, RankOne) and X.dtype != object:
            return self._apply_rank_one_hardmax(X, segments)
        return self._apply_grouped(X, segments, self.V, self.A, range(len(segments.lengths)))

    def _apply_grouped(self, X: np.ndarray, segments: Segments, V: LinearMap, A: LinearMap, sequences) -> np.ndarray:
        """Full attention, batched over the given sequences grouped by length."""
        Y = X.copy(order="K")
        wanted = np.zeros(len(segments.lengths), dtype=bool)
        wanted[list(sequences)] = True
        d = X.shape[1]
        for n, index in segments.groups.items():
            index = index[wanted[segments.sequence_of[index[:, 0]]]]
            if not len(index):
                continue
            Xg = X[index]  # (G, n, d)
            S = A.apply(Xg.reshape(-1, d)).reshape(Xg.shape) @ Xg.transpose(0, 2, 1)
            P = hardmax_weights(S) if self.attention == "hardmax" else softmax_weights(S, self.temperature)
            mixed = V.apply((P @ Xg).reshape(-1, d)).reshape(Xg.shape)
            Y[index] = Xg * self.rho + mixed
        return Y

    def _apply_rank_one_hardmax(self, X: np.ndarray, segments: Segments) -> np.ndarray:
        """Lemma 4.1: with ``A = a bᵀ`` the scores are ``(b·x_i)(a·x_l)``, so the maximisers of query i
        are the tokens with the largest ``a·x`` if ``b·x_i > 0`` and the smallest if ``b·x_i < 0``.

        Sequences where some query has no clear unique maximiser (margin below twice the tie
        tolerance) fall back to full attention, so ties are still averaged exactly as defined.
        """
        key = project(X, self.A.a)
        query = project(X, self.A.b)
        seq, starts, lengths = segments.sequence_of, segments.starts, segments.lengths
        order = np.lexsort((-key, seq))  # within each sequence: key descending
        last = starts + lengths - 1
        top, bottom = order[starts], order[last]
        second_top = order[np.minimum(starts + 1, last)]
        second_bottom = order[np.maximum(last - 1, starts)]
        positive = query > 0
        leader = np.where(positive, top[seq], bottom[seq])
        gap = np.where(positive, (key[top] - key[second_top])[seq], (key[second_bottom] - key[bottom])[seq])
        best = query * key[leader]
        margin = np.abs(query) * gap
        clear = (lengths[seq] == 1) | ((query != 0) & (margin > 2 * HARDMAX_TIE_TOL * (1 + np.abs(best))))
        Y = np.asfortranarray(X * self.rho + self.V.apply(X[leader]))
        unclear = np.unique(seq[~clear])
        if unclear.size:
            Y_full = self._apply_grouped(X, segments, self.V, self.A, unclear)
            rows = np.isin(seq, unclear)
            Y[rows] = Y_full[rows]
        return Y
