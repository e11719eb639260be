"""Hausdorff distance between token sets, the notion of exact interpolation (spec §2.2).

``T`` interpolates the data when ``d_H(T(X^j), Y^j) = 0`` for every j: every output token lies on a
target and every target is hit (order and multiplicity are ignored).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np

from transformer_theory.interpolation.dataset import SequenceDataset
from transformer_theory.interpolation.transformer import Transformer


def _sqrt(value: Any) -> Any:
    """√value: a Fraction when ``value`` is the square of a rational (e.g. 0), else a float."""
    if isinstance(value, Fraction):
        num, den = math.isqrt(value.numerator), math.isqrt(value.denominator)
        if num * num == value.numerator and den * den == value.denominator:
            return Fraction(num, den)
    return math.sqrt(value)


def hausdorff(A: np.ndarray, B: np.ndarray) -> Any:
    """``d_H(A, B) = max(max_a min_b |a − b|, max_b min_a |a − b|)`` for point sets (rows).

    Exact (a Fraction) for rational inputs whose distance is rational, in particular exactly 0.
    """
    A, B = np.asarray(A), np.asarray(B)
    D2 = ((A[:, None, :] - B[None, :, :]) ** 2).sum(axis=-1)
    return _sqrt(max(D2.min(axis=1).max(), D2.min(axis=0).max()))


def verify(model: Transformer, dataset: SequenceDataset) -> np.ndarray:
    """Per-sequence errors ``d_H(T(X^j), Y^j)``: float64, or exact Fractions for an exact model."""
    outputs = model.apply(dataset.inputs)
    targets = [model.backend.asarray(y) for y in dataset.targets]
    errors = [hausdorff(out, y) for out, y in zip(outputs, targets)]
    return np.array(errors, dtype=object if model.exact else np.float64)


def tolerance(dataset: SequenceDataset) -> float:
    """The float64 acceptance tolerance ``1e-8·(1 + data scale)`` (spec §4.9)."""
    return 1e-8 * (1.0 + dataset.scale)
