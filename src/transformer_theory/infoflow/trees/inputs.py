"""What a tree samples its inputs from: Gaussian tokens, or tokens pointing along a cycle."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from transformer_theory.checks import is_real, positive_int, positive_real


class InputDistribution(Protocol):
    """What a tree samples its inputs from: ``d`` and ``sample(batch, seq_len, rng) -> (batch, seq_len, d)``."""

    d: int

    def sample(self, batch: int, seq_len: int,
               rng: np.random.Generator | int | None = None) -> np.ndarray:  # pragma: no cover - protocol
        ...


def _rng_and_sizes(batch: int, seq_len: int, rng: np.random.Generator | int | None
                   ) -> tuple[int, int, np.random.Generator]:
    batch, seq_len = positive_int("batch", batch), positive_int("seq_len", seq_len)
    return batch, seq_len, rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)


@dataclass(frozen=True)
class GaussianInputs:
    """i.i.d. tokens ``x(t) ~ N(0, variance * I_d)``; with ``norm_range=(lo, hi)`` each token is
    rescaled so that its norm is clamped to ``[lo, hi]`` (triangle center, InfoFlow §4.2 as summarised)."""

    d: int
    variance: float = 1.0
    norm_range: tuple[float, float] | None = None

    def __post_init__(self) -> None:
        positive_int("GaussianInputs: d", self.d)
        positive_real("GaussianInputs: variance", self.variance)
        if self.norm_range is not None:
            lo, hi = self.norm_range
            if not (is_real(lo) and is_real(hi) and 0 <= lo <= hi < math.inf):
                raise ValueError(f"GaussianInputs: norm_range must be (lo, hi) with 0 <= lo <= hi finite, "
                                 f"got {self.norm_range!r}")

    def sample(self, batch: int, seq_len: int, rng: np.random.Generator | int | None = None) -> np.ndarray:
        batch, seq_len, rng = _rng_and_sizes(batch, seq_len, rng)
        X = rng.normal(0.0, np.sqrt(self.variance), size=(batch, seq_len, self.d))
        if self.norm_range is not None:
            lo, hi = self.norm_range
            n = np.linalg.norm(X, axis=-1, keepdims=True)
            X = X * (np.clip(n, lo, hi) / np.maximum(n, 1e-300))
        return X


@dataclass(frozen=True)
class PointerCycleInputs:
    """Tokens that point to each other along one cycle through all ``T`` positions (``d = 4``).

    Token ``t`` carries a *key* ``k_t = (cos th_t, sin th_t)`` and a *pointer* ``p_t = k_{pi(t)}``, the
    key of its successor: ``x(t) = (k_t, p_t)``. The keys sit at ``T`` equally spaced angles
    ``th_t = phi + 2 pi r_t / T`` (a uniform random rotation ``phi`` and a uniformly random assignment
    ``r`` of angles to positions); ``pi`` is a uniformly random cyclic permutation (a single cycle, so
    ``k < T`` hops never revisit a token). The pointer score ``k_s . p_t = cos(th_s - th_pi(t))`` is 1 at
    ``s = pi(t)`` and at most ``cos(2 pi / T)`` elsewhere: every look-up has a unique answer with a
    margin ``1 - cos(2 pi / T)``, so the k-hop target is well posed (its only discontinuities are the
    measure-zero inputs where the start of the chase changes).
    """

    d: int = 4

    def __post_init__(self) -> None:
        if self.d != 4:
            raise ValueError(f"PointerCycleInputs: tokens are (key, pointer) in R^2 x R^2, so d = 4, "
                             f"got d = {self.d!r}")

    def sample(self, batch: int, seq_len: int, rng: np.random.Generator | int | None = None) -> np.ndarray:
        B, T, rng = _rng_and_sizes(batch, seq_len, rng)
        phi = rng.uniform(0.0, 2 * np.pi, size=(B, 1))
        theta = phi + 2 * np.pi * np.argsort(rng.random((B, T)), axis=1) / T
        order = np.argsort(rng.random((B, T)), axis=1)  # the cycle visits order[:, 0], order[:, 1], ...
        succ = np.empty((B, T), dtype=np.intp)
        np.put_along_axis(succ, order, np.roll(order, -1, axis=1), axis=1)
        nxt = np.take_along_axis(theta, succ, axis=1)
        return np.stack([np.cos(theta), np.sin(theta), np.cos(nxt), np.sin(nxt)], axis=-1)
