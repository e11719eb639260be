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
#: The dense and torch paths' tolerance is at least this many times their rounding estimate
#: ``ε_mach·rounding_scale()`` (twice the rounding bound of a layer's sum, twice again for the largest of many
#: tokens' accumulated errors; see :func:`path_tolerance`).
ROUNDING_MARGIN = 4.0
#: ... but at most this, relative to the unit: a model whose dense rounding is estimated larger has windows too
#: narrow for a dense float64 evaluation (e.g. tokens 1e-14 apart), and its dense paths are held to this.
MAX_PATH_TOLERANCE = 1e-6
_EPS = float(np.finfo(np.float64).eps)


def _torch_outputs(model: Transformer, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """The "torch" path: the model loaded into the project's torch family and evaluated in float64
    (:func:`transformer_theory.models.export.torch_outputs`; the one place this package reaches torch,
    imported only when the path is asked for)."""
    from transformer_theory.models.export import torch_outputs

    return torch_outputs(model, inputs)


def verify(model: Transformer, dataset: SequenceDataset, path: str = "structured",
           sequences: Sequence[int] | None = None) -> np.ndarray:
    """Per-sequence errors ``d_H(T(X^j), Y^j)`` along one evaluation ``path`` (:data:`PATHS`), for every
    sequence or for the indices ``sequences`` (in that order).

    Float64 errors, or exact Fractions for an exact model on the structured and dense paths (the torch path
    always evaluates in float64).
    """
    one_of("path", path, PATHS)
    index = range(dataset.N) if sequences is None else [int(j) for j in sequences]
    inputs, targets = [dataset.inputs[j] for j in index], [dataset.targets[j] for j in index]
    if path == "torch":
        outputs, targets = _torch_outputs(model, inputs), [to_float(y) for y in targets]
    else:
        outputs = model.apply(inputs, structured=path == "structured")
        targets = [model.backend.asarray(y) for y in targets]
    errors = [hausdorff(out, y) for out, y in zip(outputs, targets)]
    return np.array(errors, dtype=object if model.exact and path != "torch" else np.float64)


def tolerance(dataset: SequenceDataset) -> float:
    """The float64 acceptance tolerance ``TOLERANCE · unit`` (relative to the data scale; ``unit`` is the power
    of two the construction measures lengths in, :attr:`SequenceDataset.unit`)."""
    return TOLERANCE * dataset.unit


def path_tolerance(model: Transformer, dataset: SequenceDataset, path: str) -> float:
    """The float64 tolerance of ``model`` along ``path``: :func:`tolerance` on the structured path; on the dense
    and torch paths ``ROUNDING_MARGIN·ε_mach·model.rounding_scale()``, the rounding those evaluations accumulate
    (it grows with the depth and with the largest hat weights ``|δ|/ε``, so with N), kept between
    :func:`tolerance` and ``MAX_PATH_TOLERANCE·unit``."""
    one_of("path", path, PATHS)
    if path == "structured":
        return tolerance(dataset)
    rounding = ROUNDING_MARGIN * _EPS * model.rounding_scale()
    return min(max(tolerance(dataset), rounding), MAX_PATH_TOLERANCE * dataset.unit)


def check_sample(N: int, sequences: int | None, seed: int) -> np.ndarray:
    """The indices of the sequences that :func:`check_paths` evaluates on the dense and torch paths: all ``N``
    when ``sequences`` is ``None`` or at least ``N``, else ``sequences`` of them drawn with ``seed`` (sorted)."""
    if sequences is None or sequences >= N:
        return np.arange(N)
    return np.sort(np.random.default_rng(seed).choice(N, size=sequences, replace=False))


def check_paths(model: Transformer, dataset: SequenceDataset, paths: Sequence[str],
                sequences: int | None = None, seed: int = 0) -> dict[str, int]:
    """Raise ``RuntimeError`` naming the path and the sequence if ``model`` misses a target by more than
    :func:`path_tolerance` along one of ``paths`` (exact models must be exact on the rational paths).

    The structured path is checked on every sequence; the others on :func:`check_sample` ``(N, sequences,
    seed)``. Returns how many sequences each path was checked on."""
    checked = {}
    for path in paths:
        index = np.arange(dataset.N) if path == "structured" else check_sample(dataset.N, sequences, seed)
        errors = verify(model, dataset, path, index)
        tol = 0 if model.exact and path != "torch" else path_tolerance(model, dataset, path)
        worst = int(np.argmax([float(e) for e in errors]))
        if errors[worst] > tol:
            raise RuntimeError(
                f"the {path} evaluation misses the targets of sequence {index[worst]} by {float(errors[worst]):.3g} "
                f"(tolerance {tol:.3g})"
            )
        checked[path] = len(index)
    return checked
