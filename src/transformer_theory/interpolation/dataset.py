"""Sequence-to-sequence interpolation data and the assumptions of Theorem 1.6.

The assumptions (reconstruction: forced by permutation equivariance) are: d ≥ 2; tokens distinct
within each input and within each target sequence; ``m_j ≤ n_j``; inputs pairwise different as
sets (equal inputs with equal target sets are merged, with a warning).
"""

from __future__ import annotations

import math
import numbers
import warnings
from fractions import Fraction
from typing import Iterable, Sequence

import numpy as np

from transformer_theory.checks import is_real

#: Supported data scales (largest |coordinate|): the construction rescales its attention matrices by
#: scale⁻² (:meth:`~transformer_theory.interpolation.transformer.Transformer.rescaled`), which must stay
#: a normal float64 number with room to spare.
SCALE_RANGE = (2.0**-480, 2.0**480)


def _numbers(seq, label: str) -> np.ndarray:
    """``seq`` as an array whose entries are real numbers (a NumPy int/float array, or an object array of
    :func:`~transformer_theory.checks.is_real` values); complex, bool and string entries are refused."""
    if isinstance(seq, np.ndarray) and seq.dtype.kind in "iuf":
        return seq
    try:
        arr = np.asarray(seq, dtype=object)
    except ValueError as exc:  # inhomogeneous nesting
        raise ValueError(f"{label}: not an array of numbers ({exc})") from None
    for value in arr.flat:
        if isinstance(value, (list, tuple, np.ndarray)):
            raise ValueError(f"{label}: not an array of numbers (ragged: its rows have different lengths)")
        if not is_real(value):
            raise ValueError(
                f"{label}: not an array of real numbers ({value!r} is a {type(value).__name__}; complex numbers, "
                "bools and strings are refused)"
            )
    return arr


def _exact(value, label: str) -> Fraction:
    """A coordinate of an exact dataset as a Fraction: integers and Fractions, or float64 values (converted
    exactly); lower- or higher-precision floats (float16, float32, longdouble) are refused."""
    if isinstance(value, numbers.Rational):
        return Fraction(value)
    if isinstance(value, float):  # Python floats and np.float64
        if not math.isfinite(value):
            raise ValueError(f"{label} has non-finite values (NaN or inf)")
        return Fraction(value)
    raise ValueError(
        f"{label} mixes Fractions with {type(value).__name__} values; an exact dataset takes Fractions, integers or "
        "float64 numbers"
    )


def as_tokens(seq, label: str, exact: bool) -> np.ndarray:
    """A finite (n, d) array of tokens: float64, or an object array of Fractions when ``exact``.

    ``label`` names the sequence in the ``ValueError`` raised for anything else (wrong type or shape, NaN/inf).
    """
    arr = _numbers(seq, label)
    if arr.ndim == 1 and arr.size == 0 or arr.ndim == 2 and arr.shape[0] == 0:
        raise ValueError(f"{label} is empty (every sequence needs at least one token)")
    if arr.ndim != 2:
        raise ValueError(f"{label}: expected an array of shape (n, d), got shape {arr.shape}")
    if exact:
        out = np.empty(arr.shape, dtype=object)
        out.flat[:] = [_exact(v, label) for v in arr.flat]
        return out
    values = arr.astype(np.float64)
    if not np.all(np.isfinite(values)):
        raise ValueError(f"{label} has non-finite values (NaN or inf)")
    return values


def _holds_fractions(seq) -> bool:
    try:
        return any(isinstance(v, Fraction) for v in np.asarray(seq, dtype=object).flat)
    except ValueError:  # ragged: reported by as_tokens
        return False


def _repeated(arr: np.ndarray) -> tuple[int, int] | None:
    seen: dict[tuple, int] = {}
    for i, row in enumerate(arr):
        key = tuple(row)
        if key in seen:
            return seen[key], i
        seen[key] = i
    return None


def _sequences(what: str, value: object) -> list:
    """``value`` (a list or array of sequences) as a list; ``ValueError`` naming ``what`` otherwise."""
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        raise ValueError(f"{what} must be a list of sequences (arrays of tokens), got {type(value).__name__} {value!r}")
    return list(value)


class SequenceDataset:
    """Input sequences ``X^j`` (n_j, d) and target sequences ``Y^j`` (m_j, d), j = 0..N−1.

    Raises ``ValueError`` naming the sequence and the violated assumption, or the data scale when it lies
    outside :data:`SCALE_RANGE`. Attributes: ``inputs``, ``targets`` (lists of arrays: float64, or Fractions
    if given), ``N``, ``d``, ``total_output_length`` (M = Σ m_j), ``scale`` (largest absolute coordinate) and
    ``unit`` (the power of two the construction measures lengths in).
    """

    def __init__(self, inputs: Sequence, targets: Sequence) -> None:
        inputs, targets = _sequences("inputs", inputs), _sequences("targets", targets)
        if len(inputs) == 0:
            raise ValueError("the dataset is empty: give at least one input sequence")
        if len(inputs) != len(targets):
            raise ValueError(f"{len(inputs)} input sequences but {len(targets)} target sequences")
        exact = any(_holds_fractions(s) for s in inputs + targets)
        xs = [as_tokens(x, f"input sequence {j}", exact) for j, x in enumerate(inputs)]
        ys = [as_tokens(y, f"target sequence {j}", exact) for j, y in enumerate(targets)]
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
        top = max(np.max(np.abs(a)) for a in xs + ys)  # exact for Fractions
        if top != 0 and not SCALE_RANGE[0] <= top <= SCALE_RANGE[1]:
            raise ValueError(
                f"the data scale (largest |coordinate|) is {float(top):.3g}, outside the supported range "
                f"{SCALE_RANGE[0]:.1e} to {SCALE_RANGE[1]:.1e}: the model's attention matrices scale like "
                "scale^-2 and would not be float64 numbers; rescale the data"
            )
        self.inputs, self.targets = self._merge_equal_inputs(xs, ys)
        self.d = d
        self.scale = float(top)

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
    def unit(self) -> float:
        """The smallest power of two >= ``scale`` (1 for all-zero data): the construction builds on the data
        divided by ``unit`` (exactly, a power of two) and scales the model back, and the float tolerance is
        relative to it (:func:`~transformer_theory.interpolation.hausdorff.tolerance`)."""
        if self.scale == 0:
            return 1.0
        mantissa, exponent = math.frexp(self.scale)
        return math.ldexp(1.0, exponent - 1 if mantissa == 0.5 else exponent)

    @property
    def is_rational(self) -> bool:
        """True when the data were given as Fractions (floats are rational too and also work exactly)."""
        return self.inputs[0].dtype == object

    def __repr__(self) -> str:
        return f"SequenceDataset(N={self.N}, d={self.d}, M={self.total_output_length}, n={self.input_lengths})"
