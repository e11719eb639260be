"""The layout a tree is evaluated on: every position variable is an integer index array broadcastable to it."""

from __future__ import annotations

import itertools
from typing import Any, Callable, Sequence

import numpy as np


class EvalContext:
    """Layout of one evaluation: batch axis + one axis per bound variable (or a tuple axis)."""

    def __init__(self, X: np.ndarray, cache: dict, idx: dict[str, np.ndarray], ndim: int):
        self.X = X
        self.cache = cache
        self.idx = idx
        self.ndim = ndim

    @property
    def T(self) -> int:
        return self.X.shape[1]

    def cached(self, key: Any, fn: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
        if key not in self.cache:
            self.cache[key] = fn(self.X)
        return self.cache[key]

    def gram(self) -> np.ndarray:
        """``G[b, s, t] = x(s) . x(t)``."""
        return self.cached("gram", lambda X: np.matmul(X, X.transpose(0, 2, 1)))

    def index(self, var: str) -> np.ndarray:
        return self.idx[var]

    def gather1(self, feat: np.ndarray, var: str) -> np.ndarray:
        """``feat[:, idx[var]]`` for a per-token feature ``feat`` of shape (B, T)."""
        return feat[:, self.idx[var]]

    def gather2(self, M: np.ndarray, v: str, w: str) -> np.ndarray:
        """``M[:, idx[v], idx[w]]`` for a pair feature ``M`` of shape (B, T, T)."""
        iv, iw = self.idx[v], self.idx[w]
        if self.ndim and iw.shape[-1] == self.T and iv.shape[-1] == 1 and iw.size == self.T:
            # w runs over the last axis: gather whole rows (contiguous copies, much faster)
            return np.take(M, iv[..., 0], axis=1)
        if self.ndim and iv.shape[-1] == self.T and iw.shape[-1] == 1 and iv.size == self.T:
            return np.take(M.transpose(0, 2, 1), iw[..., 0], axis=1)
        return M[:, iv, iw]

    def tokens(self, var: str) -> np.ndarray:
        """The tokens ``x(var)``, shape (B, *layout, d)."""
        return self.X[:, self.idx[var]]

    def bind(self, var: str) -> "EvalContext":
        """A new trailing axis of length T for ``var``."""
        idx = {k: v[..., None] for k, v in self.idx.items()}
        idx[var] = np.arange(self.T).reshape((1,) * self.ndim + (self.T,))
        return EvalContext(self.X, self.cache, idx, self.ndim + 1)

    def bind_tuple(self, vars_: Sequence[str], symmetric: bool) -> "EvalContext":
        """Two trailing axes (C, T) enumerating tuples of ``vars_`` jointly.

        With ``symmetric`` the first ``k-1`` variables run over sorted tuples (combinations with
        repetition) and the last over all positions: a symmetric score takes every value it takes
        on ``[T]^k`` (pairs t1 <= t2 + batched third index for the triangle center).
        """
        T, k = self.T, len(vars_)
        if symmetric:
            comb = np.array(list(itertools.combinations_with_replacement(range(T), k - 1)), dtype=np.intp)
        else:
            comb = np.array(list(itertools.product(range(T), repeat=k - 1)), dtype=np.intp)
        comb = comb.reshape(len(comb), k - 1)
        lead = (1,) * self.ndim
        idx = {key: v[..., None, None] for key, v in self.idx.items()}
        for j, var in enumerate(vars_[:-1]):
            idx[var] = comb[:, j].reshape(lead + (len(comb), 1))
        idx[vars_[-1]] = np.arange(T).reshape(lead + (1, T))
        return EvalContext(self.X, self.cache, idx, self.ndim + 2)
