"""Two arithmetic backends for one construction: float64 arrays and exact rationals.

The construction of Theorem 1.6 only uses field operations (+, −, ×, ÷), comparisons and ReLU, so
the *same* code builds and evaluates a transformer either in float64 or in exact rational arithmetic
(NumPy object arrays of :class:`fractions.Fraction`). Random numbers are drawn as dyadic floats
(``k / 2**bits``), which both backends represent exactly, so a seed gives the same draws in both.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

#: Hardmax tie tolerance (float64 only): scores ``s`` with ``s >= max - HARDMAX_TIE_TOL * (1 + |max|)``
#: count as maximisers and are averaged uniformly. Exact arithmetic compares exactly (tolerance 0).
HARDMAX_TIE_TOL = 1e-12

#: :func:`project` sums at most this many rows with one ``np.add.accumulate`` call.
SMALL_PROJECTION = 64

#: Random dyadic numbers are multiples of ``2**-DYADIC_BITS``.
DYADIC_BITS = 20


@dataclass(frozen=True)
class Arithmetic:
    """An arithmetic backend: ``exact=False`` is float64, ``exact=True`` is Python ``Fraction``."""

    exact: bool

    def asarray(self, values: Any) -> np.ndarray:
        """``values`` as an array of this backend (a copy; Fractions are kept exact)."""
        if not self.exact:
            arr = np.asarray(values)
            if arr.dtype == object:
                arr = np.vectorize(float, otypes=[float])(arr) if arr.size else arr.astype(float)
            return np.array(arr, dtype=np.float64)
        arr = np.asarray(values, dtype=object)
        out = np.empty(arr.shape, dtype=object)
        out.flat[:] = [Fraction(v) for v in arr.flat]
        return out

    def scalar(self, value: Any) -> Any:
        """One number of this backend."""
        return Fraction(value) if self.exact else float(value)

    def column_major(self, X: np.ndarray) -> np.ndarray:
        """``X`` stored column by column (float64), so that :func:`project` reads contiguous columns."""
        return X if self.exact else np.asfortranarray(X)

    def zeros(self, shape: int | tuple[int, ...]) -> np.ndarray:
        return self.asarray(np.zeros(shape))

    def dyadic(self, rng: np.random.Generator, low: float, high: float, size: int | None = None) -> Any:
        """Uniform random dyadic numbers in ``[low, high)`` (exactly representable in both backends)."""
        k = rng.integers(int(low * 2**DYADIC_BITS), int(high * 2**DYADIC_BITS), size=size)
        values = np.asarray(k, dtype=np.float64) / 2**DYADIC_BITS
        return self.asarray(values) if size is not None else self.scalar(values.item())

    def gaussian_direction(self, rng: np.random.Generator, d: int) -> np.ndarray:
        """A random direction in R^d (Gaussian, rounded to dyadics; not normalised: only its direction matters)."""
        g = np.round(rng.standard_normal(d) * 2**DYADIC_BITS) / 2**DYADIC_BITS
        return self.asarray(g)


FLOAT = Arithmetic(exact=False)
EXACT = Arithmetic(exact=True)


def backend_of(array: np.ndarray) -> Arithmetic:
    """The backend an array belongs to (object arrays are exact)."""
    return EXACT if np.asarray(array).dtype == object else FLOAT


def project(X: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Row-wise inner products ``X @ u``, summed coordinate by coordinate in a fixed order.

    The result for a row depends only on that row (not on the batch it sits in), so tokens that are
    equal stay bitwise equal however the tokens are batched; BLAS products do not
    guarantee this. Works for both backends; fastest on column-major float arrays. A few rows are summed by
    ``np.add.accumulate`` along the row (sequential, the same additions in the same order, one call).
    """
    if X.shape[0] <= SMALL_PROJECTION and X.shape[1]:
        return np.add.accumulate(X * u, axis=1)[:, -1]
    s = X[:, 0] * u[0]
    for k in range(1, X.shape[1]):
        s = s + X[:, k] * u[k]
    return s


def relu(z: np.ndarray) -> np.ndarray:
    """σ(z) = max(z, 0) for both backends."""
    if z.dtype == object:
        return np.where(z > 0, z, Fraction(0))
    return np.maximum(z, 0.0)


def tie_tolerance(max_score: np.ndarray) -> np.ndarray:
    """Hardmax tie tolerance for the given maximal scores (0 in exact arithmetic)."""
    if np.asarray(max_score).dtype == object:
        return max_score * 0
    return HARDMAX_TIE_TOL * (1.0 + np.abs(max_score))


def distinct(values: np.ndarray) -> np.ndarray:
    """The distinct values of a 1-D array, sorted (``np.unique(values)``, by one sort: NumPy's hash-based
    ``np.unique`` is some 25 times slower on 10^5 integer keys)."""
    s = np.sort(values)
    keep = np.ones(len(s), dtype=bool)
    keep[1:] = s[1:] != s[:-1]
    return s[keep]


def unique_rows(X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Distinct rows of ``X`` (exact equality) and, for every row, the index of its distinct row."""
    if X.dtype != object:
        Z = np.ascontiguousarray(X + 0.0)  # + 0.0 turns -0.0 into 0.0
        if Z.shape[1] == 0 or len(Z) == 0:
            rows, inverse = np.unique(Z, axis=0, return_inverse=True)
            return np.asfortranarray(rows), inverse.reshape(-1)
        order = _lexicographic_order(Z)
        S = Z[order]
        new = np.ones(len(S), dtype=bool)
        new[1:] = np.any(S[1:] != S[:-1], axis=1)
        inverse = np.empty(len(S), dtype=np.intp)
        inverse[order] = np.cumsum(new) - 1
        return np.asfortranarray(S[new]), inverse
    index: dict[tuple, int] = {}
    inverse = np.array([index.setdefault(tuple(row), len(index)) for row in X], dtype=np.intp)
    rows = np.empty((len(index), X.shape[1]), dtype=object)
    for key, i in index.items():
        rows[i] = key
    return rows, inverse


def _lexicographic_order(X: np.ndarray) -> np.ndarray:
    """A stable permutation sorting the rows of a float array lexicographically (as ``np.unique(axis=0)`` orders
    them): by the first column, then, in the runs of rows that tie there but are not all equal, by all columns
    (one sort of a column when the rows are distinct there or repeat whole, as before and after a collapse)."""
    order = np.argsort(X[:, 0], kind="stable")
    first = X[order, 0]
    start = np.ones(len(order), dtype=bool)
    start[1:] = first[1:] != first[:-1]
    if start.all():
        return order
    run = np.cumsum(start) - 1
    leader = order[np.flatnonzero(start)][run]  # the first row of each position's run
    mixed = np.isin(run, run[np.any(X[order] != X[leader], axis=1)])  # runs holding different rows
    if mixed.any():
        at = np.flatnonzero(mixed)
        sub = order[at]
        order[at] = sub[np.lexsort((*X[sub, 1:].T[::-1], run[at]))]  # stays in its run (the primary key)
    return order


def to_float(X: Any) -> np.ndarray:
    """A float64 copy of an array of either backend."""
    return FLOAT.asarray(X)
