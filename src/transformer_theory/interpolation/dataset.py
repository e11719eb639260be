"""Sequence-to-sequence interpolation data and the assumptions of Theorem 1.6 (spec §2.2).

The assumptions (reconstruction: forced by permutation equivariance) are: d ≥ 2; tokens distinct
within each input and within each target sequence; ``m_j ≤ n_j``; inputs pairwise different as
sets (equal inputs with equal target sets are merged, with a warning).
"""

from __future__ import annotations

import warnings
from fractions import Fraction
from typing import Sequence

import numpy as np


def _as_token_array(seq, what: str, j: int, exact: bool) -> np.ndarray:
    """A (n, d) array: float64, or an object array of Fractions when ``exact``."""
    try:
        arr = np.array(seq, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{what} sequence {j}: not an array of numbers ({exc})") from None
    if arr.ndim == 1 and arr.size == 0 or arr.ndim == 2 and arr.shape[0] == 0:
        raise ValueError(f"{what} sequence {j} is empty (every sequence needs at least one token)")
    if arr.ndim != 2:
        raise ValueError(f"{what} sequence {j}: expected an array of shape (n, d), got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{what} sequence {j} has non-finite values (NaN or inf)")
    if exact:
        return np.vectorize(Fraction, otypes=[object])(np.array(seq, dtype=object))
    return arr


def _holds_fractions(seq) -> bool:
    try:
        return any(isinstance(v, Fraction) for v in np.asarray(seq, dtype=object).flat)
    except ValueError:  # ragged: reported by _as_token_array
        return False


def _repeated(arr: np.ndarray) -> tuple[int, int] | None:
    seen: dict[tuple, int] = {}
    for i, row in enumerate(arr):
        key = tuple(row)
        if key in seen:
            return seen[key], i
        seen[key] = i
    return None


class SequenceDataset:
    """Input sequences ``X^j`` (n_j, d) and target sequences ``Y^j`` (m_j, d), j = 0..N−1.

    Raises ``ValueError`` naming the sequence and the violated assumption. Attributes: ``inputs``,
    ``targets`` (lists of arrays: float64, or Fractions if given), ``N``, ``d``,
    ``total_output_length`` (M = Σ m_j), ``scale`` (largest absolute coordinate, at least 1e-300).
    """

    def __init__(self, inputs: Sequence, targets: Sequence) -> None:
        inputs, targets = list(inputs), list(targets)
        if len(inputs) == 0:
            raise ValueError("the dataset is empty: give at least one input sequence")
        if len(inputs) != len(targets):
            raise ValueError(f"{len(inputs)} input sequences but {len(targets)} target sequences")
        exact = any(_holds_fractions(s) for s in inputs + targets)
        xs = [_as_token_array(x, "input", j, exact) for j, x in enumerate(inputs)]
        ys = [_as_token_array(y, "target", j, exact) for j, y in enumerate(targets)]
        d = xs[0].shape[1]
        if d < 2:
            raise ValueError(f"input sequence 0 has token dimension d = {d}; the construction needs d >= 2")
        for what, arrays in (("input", xs), ("target", ys)):
            for j, arr in enumerate(arrays):
                if arr.shape[1] != d:
                    raise ValueError(
                        f"{what} sequence {j} has token dimension {arr.shape[1]}, expected {d} "
                        "(all tokens must have the same dimension d)"
                    )
                pair = _repeated(arr)
                if pair is not None:
                    raise ValueError(
                        f"{what} sequence {j} repeats a token (tokens {pair[0]} and {pair[1]} are equal); "
                        f"tokens within one {what} sequence must be distinct"
                    )
        for j, (x, y) in enumerate(zip(xs, ys)):
            if len(y) > len(x):
                raise ValueError(
                    f"target sequence {j} has m_j = {len(y)} tokens but input sequence {j} has only "
                    f"n_j = {len(x)}; the construction needs m_j <= n_j"
                )
        self.inputs, self.targets = self._merge_equal_inputs(xs, ys)
        self.d = d

    @staticmethod
    def _merge_equal_inputs(xs: list[np.ndarray], ys: list[np.ndarray]) -> tuple[list, list]:
        first: dict[frozenset, int] = {}
        keep: list[int] = []
        for j, x in enumerate(xs):
            key = frozenset(map(tuple, x))
            if key not in first:
                first[key] = j
                keep.append(j)
                continue
            i = first[key]
            if frozenset(map(tuple, ys[i])) != frozenset(map(tuple, ys[j])):
                raise ValueError(
                    f"input sequences {i} and {j} are equal as sets but have different target sets; "
                    "a permutation-equivariant transformer maps them to the same output set"
                )
            warnings.warn(
                f"input sequences {i} and {j} are equal as sets with equal targets: sequence {j} is merged "
                f"into sequence {i}",
                stacklevel=3,
            )
        return [xs[j] for j in keep], [ys[j] for j in keep]

    @property
    def N(self) -> int:  # noqa: N802 (the paper's name)
        return len(self.inputs)

    @property
    def total_output_length(self) -> int:
        """M = Σ_j m_j."""
        return sum(len(y) for y in self.targets)

    @property
    def input_lengths(self) -> list[int]:
        return [len(x) for x in self.inputs]

    @property
    def output_lengths(self) -> list[int]:
        return [len(y) for y in self.targets]

    @property
    def scale(self) -> float:
        """The largest absolute coordinate over inputs and targets (the "data scale" of tolerances)."""
        return max(float(np.max(np.abs(a.astype(np.float64)))) for a in self.inputs + self.targets)

    @property
    def is_rational(self) -> bool:
        """True when the data were given as Fractions (floats are rational too and also work exactly)."""
        return self.inputs[0].dtype == object

    def __repr__(self) -> str:
        return f"SequenceDataset(N={self.N}, d={self.d}, M={self.total_output_length}, n={self.input_lengths})"
