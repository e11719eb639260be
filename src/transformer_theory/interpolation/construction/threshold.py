"""The temperature threshold τ* of the softmax construction (Theorem 1.8), computed from the data.

Reconstruction (this project's bound). The collapse layer has
``A = I``, ``ρ = 0``, ``V = w wᵀ``: hardmax attention would send every token i onto the line
coordinate ``t_{h(i)} = w·x_{h(i)}`` of the token h(i) it attends to (its sequence's P-leader, or
itself for a sphere token, Lemmas 4.2 and 4.3). Softmax attention at temperature τ puts weight
``π_il ≤ exp(−Δ_i/τ)`` on every other token l, where ``Δ_i`` is the gap between the best and the
second-best score of token i, so its line coordinate deviates from ``t_{h(i)}`` by at most

    E_i(τ) = S_i · exp(−Δ_i / τ),   S_i = Σ_l |t_l − t_{h(i)}|.

For every hardmax image c let ``δ_c`` be a quarter of the distance from c to the nearest other image
(1 if there is none), and ``δ_i = δ_{c(i)}``. Then

    τ* = min_i Δ_i / log(S_i / δ_i)   (tokens with S_i ≤ δ_i impose nothing)

guarantees ``E_i(τ) ≤ δ_i`` for every token and every ``τ ≤ τ*``: the intervals ``[c − δ_c, c + δ_c]``
are pairwise at distance ≥ half the gap between their images, so after the collapse no cluster's hull
contains a token of another image and tokens of different images stay distinct, which is what the
exactification layers need (:mod:`.exactification`). τ* is *sufficient*, not necessary. The cruder form
``Δ / log((n_max − 1) D / δ)`` (the worst Δ, diameter D and δ of all tokens at once,
:attr:`CollapseBound.uniform_threshold`) is never larger. Both depend on the data's geometry and on the
construction's random choices (the seed), since the collapse acts on the tokens as the earlier stages left them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from transformer_theory.interpolation.arithmetic import project
from transformer_theory.interpolation.segments import Segments


@dataclass(frozen=True)
class CollapseBound:
    """τ* and the per-token quantities it is made of (arrays indexed by stacked token)."""

    threshold: float
    images: np.ndarray
    deltas: np.ndarray
    score_gaps: np.ndarray
    spreads: np.ndarray
    max_length: int  # n_max, the longest sequence
    diameter: float  # D, the largest extent of one sequence's line coordinates

    def accuracy_bound(self, temperature: float) -> float:
        """``max_i E_i(τ)/δ_i``: at most 1 for τ ≤ τ* (the collapse is then δ-accurate)."""
        with np.errstate(over="ignore", invalid="ignore", under="ignore"):
            bounds = self.spreads * np.exp(-self.score_gaps / temperature) / self.deltas
        return float(np.nan_to_num(bounds, nan=0.0).max())

    def accuracy(self, line_coordinates: np.ndarray) -> float:
        """``max_i |t_i − c(i)|/δ_i`` for the line coordinates ``t`` the tokens actually reached."""
        return float((np.abs(line_coordinates - self.images) / self.deltas).max())

    @property
    def min_score_gap(self) -> float:
        """``min_i Δ_i``: the worst score gap of all tokens."""
        return float(self.score_gaps.min())

    @property
    def uniform_threshold(self) -> float:
        """``Δ / log((n_max − 1) D / δ)`` with the worst quantities of all tokens at once: Δ the smallest score
        gap, n_max the longest sequence, D the largest extent of a sequence along the line, δ the smallest
        required accuracy (``inf`` when (n_max − 1) D ≤ δ). Since ``S_i ≤ (n_max − 1) D`` it is never above
        :attr:`threshold`."""
        worst = (self.max_length - 1) * self.diameter
        if worst <= self.deltas.min():
            return float("inf")
        return self.min_score_gap / float(np.log(worst / self.deltas.min()))


def collapse_bound(tokens: np.ndarray, segments: Segments, attracts: np.ndarray, w: np.ndarray) -> CollapseBound:
    """τ* for the collapse layer (``A = I``, ``V = w wᵀ``) applied to ``tokens`` (stacked sequences).

    ``attracts[i]`` is the stacked index of the token that token i must attend to (h(i) above).
    Raises ``RuntimeError`` if some token's best score is not at ``attracts[i]`` (Lemma 4.2 or 4.3
    would fail; the leader geometry prevents it).
    """
    t = project(tokens, w)
    images = t[attracts]
    gaps = np.empty(len(tokens))
    spreads = np.empty(len(tokens))
    for n, index in segments.groups.items():
        X = tokens[index]  # (G, n, d)
        S = X @ X.transpose(0, 2, 1)
        local = attracts[index] - index[:, :1]
        best = np.take_along_axis(S, local[..., None], axis=-1)[..., 0]
        np.put_along_axis(S, local[..., None], -np.inf, axis=-1)
        gaps[index] = best - S.max(axis=-1)
        spreads[index] = np.abs(t[index][:, None, :] - images[index][:, :, None]).sum(axis=-1)
    if np.any(gaps <= 0):
        i = int(np.argmin(gaps))
        raise RuntimeError(f"collapse: token {i} does not attend mainly to token {attracts[i]} (Lemma 4.2/4.3 fails)")
    distinct, which = np.unique(images, return_inverse=True)
    steps = np.diff(distinct)
    nearest = np.minimum(np.append(steps, np.inf), np.insert(steps, 0, np.inf))
    deltas = np.where(np.isfinite(nearest), nearest / 4, 1.0)[which.reshape(-1)]
    with np.errstate(divide="ignore"):
        per_token = np.where(spreads > deltas, gaps / np.log(np.maximum(spreads, deltas) / deltas), np.inf)
    extent = max(float(np.ptp(t[segments.rows(j)])) for j in range(len(segments.lengths)))
    return CollapseBound(float(per_token.min()), images, deltas, gaps, spreads, int(max(segments.lengths)), extent)
