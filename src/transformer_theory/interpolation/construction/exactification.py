"""Exactification feed-forward layers of the softmax construction (Theorem 1.8, Fig. 8).

After the softmax collapse every token lies on the line ``R·w`` and the tokens of sequence j that
hardmax attention would send onto the P-leader ``x̂^j_1`` only land *near* it: a cluster of small but
nonzero spread (Fig. 8, left). One feed-forward layer per such cluster makes it a single point.

Reconstruction (this project's; the paper's layer is not known, see the book's page *How this book
reconstructs the papers*): a **non-residual** layer (η = 0) of width 3 acting on the line coordinate
``t = w·x``,

    FF(x) = w · g(w·x),   g(t) = lo − σ(lo − t) + σ(t − hi),

so ``g(t) = t`` below the window ``[lo, hi]``, ``g ≡ lo`` on it and ``g(t) = t − (hi − lo)`` above it:
the window collapses onto one point and the map is injective elsewhere. Fig. 8 (right) draws a
3-ReLU profile of the projection with the same purpose (the paper's kinks and slopes differ).

In floating point the collapse is **bitwise** exact: on the window both ReLU inputs are ≤ 0, so the
output is the constant ``lo·w`` however the rest was rounded (also in a dense or PyTorch evaluation,
because the window has a margin much larger than rounding).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from transformer_theory.interpolation.arithmetic import project, relu
from transformer_theory.interpolation.feed_forward import FeedForwardBase


@dataclass(frozen=True, eq=False)
class ClusterFeedForward(FeedForwardBase):
    """``FF(x) = w·(lo − σ(lo − w·x) + σ(w·x − hi))``: η = 0, width 3, collapses the window ``[lo, hi]``
    of the line coordinate ``w·x`` onto ``lo·w`` (Fig. 8, reconstruction)."""

    w: np.ndarray
    lo: float
    hi: float
    eta = 0.0  # class constant (non-residual layer), not a field

    def __post_init__(self) -> None:
        if not self.lo <= self.hi:
            raise ValueError(f"ClusterFeedForward: window [lo, hi] = [{self.lo}, {self.hi}] is empty")

    @property
    def U(self) -> np.ndarray:  # noqa: N802
        return np.stack([-self.w, self.w, np.zeros_like(self.w)])

    @property
    def b(self) -> np.ndarray:
        return np.array([self.lo, -self.hi, 1.0])

    @property
    def W(self) -> np.ndarray:  # noqa: N802
        return np.stack([-self.w, self.w, self.lo * self.w], axis=1)

    @property
    def is_identity(self) -> bool:
        return False

    def rescaled(self, factor: float) -> "ClusterFeedForward":
        """``x ↦ factor·FF(x / factor)``: the window ``[lo, hi]`` scales with ``factor``."""
        return ClusterFeedForward(self.w, self.lo * factor, self.hi * factor)

    def line(self, t: np.ndarray) -> np.ndarray:
        """``g(t)``: the new line coordinate of a token with line coordinate ``t``."""
        return self.lo - relu(self.lo - t) + relu(t - self.hi)

    def apply(self, X: np.ndarray) -> np.ndarray:
        """Row by row (``project``), so equal tokens give bitwise equal outputs however they are batched;
        column-major like the input, as :func:`project` reads columns."""
        Y = np.empty(X.shape, order="F")
        return np.multiply(self.line(project(X, self.w))[:, None], self.w[None, :], out=Y)

    def num_parameters(self, structured: bool = True) -> int:
        """Dense: η, W, U, b. Structured: η, the direction w and the window ends lo, hi."""
        d = self.w.shape[0]
        return 1 + 2 * d * 3 + 3 if not structured else 1 + d + 2


def cluster_window(t: np.ndarray, in_cluster: np.ndarray) -> tuple[float, float, bool]:
    """The window ``[lo, hi]`` of a cluster on the line: its hull ``[a, b]`` widened on each side by a
    third of the distance to the nearest other point (by 1 when there is none).

    ``t``: line coordinates of all current positions; ``in_cluster``: mask of the cluster's positions.
    The flag is False when another position lies inside the hull (the collapse was not accurate
    enough; the window then swallows that position too).
    """
    a, b = float(t[in_cluster].min()), float(t[in_cluster].max())
    others = t[~in_cluster]
    clean = not np.any((others >= a) & (others <= b))
    below, above = others[others < a], others[others > b]
    gaps = [a - below.max()] if below.size else []
    gaps += [above.min() - b] if above.size else []
    margin = min(gaps) / 3 if gaps else 1.0
    return a - margin, b + margin, clean
