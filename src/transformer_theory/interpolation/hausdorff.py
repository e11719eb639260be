"""Hausdorff distance between token sets, the notion of exact interpolation (Theorem 1.6).

``T`` interpolates the data when ``d_H(T(X^j), Y^j) = 0`` for every j: every output token lies on a
target and every target is hit (order and multiplicity are ignored).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, Sequence

import numpy as np

from transformer_theory.checks import one_of
from transformer_theory.interpolation.arithmetic import to_float
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


#: The evaluation paths a user can take: structured NumPy (the default), dense NumPy (every layer as
#: ``η x + W σ(U x + b)`` and full attention), and the float64 PyTorch export.
PATHS = ("structured", "dense", "torch")

#: The float64 acceptance tolerance, relative to the dataset's unit (about its largest |coordinate|).
TOLERANCE = 1e-8


def _torch_outputs(model: Transformer, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """The "torch" path: the model loaded into the project's torch family and evaluated in float64
    (:func:`transformer_theory.models.export.torch_outputs`; the one place this package reaches torch,
    imported only when the path is asked for)."""
    from transformer_theory.models.export import torch_outputs

    return torch_outputs(model, inputs)


def verify(model: Transformer, dataset: SequenceDataset, path: str = "structured") -> np.ndarray:
    """Per-sequence errors ``d_H(T(X^j), Y^j)`` along one evaluation ``path`` (:data:`PATHS`).

    Float64 errors, or exact Fractions for an exact model on the structured and dense paths (the torch path
    always evaluates in float64).
    """
    one_of("path", path, PATHS)
    if path == "torch":
        outputs, targets = _torch_outputs(model, dataset.inputs), [to_float(y) for y in dataset.targets]
    else:
        outputs = model.apply(dataset.inputs, structured=path == "structured")
        targets = [model.backend.asarray(y) for y in dataset.targets]
    errors = [hausdorff(out, y) for out, y in zip(outputs, targets)]
    return np.array(errors, dtype=object if model.exact and path != "torch" else np.float64)


def tolerance(dataset: SequenceDataset) -> float:
    """The float64 acceptance tolerance ``TOLERANCE · unit`` (relative to the data scale; ``unit`` is the power
    of two the construction measures lengths in, :attr:`SequenceDataset.unit`)."""
    return TOLERANCE * dataset.unit


def check_paths(model: Transformer, dataset: SequenceDataset, paths: Sequence[str]) -> None:
    """Raise ``RuntimeError`` naming the path if ``model`` misses a target by more than the tolerance along one
    of ``paths`` (exact models must be exact on the rational paths)."""
    for path in paths:
        errors = verify(model, dataset, path)
        tol = 0 if model.exact and path != "torch" else tolerance(dataset)
        worst = int(np.argmax([float(e) for e in errors]))
        if errors[worst] > tol:
            raise RuntimeError(
                f"the {path} evaluation misses the targets of sequence {worst} by {float(errors[worst]):.3g} "
                f"(tolerance {tol:.3g})"
            )
