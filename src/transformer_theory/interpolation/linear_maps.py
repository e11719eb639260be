"""Structured d×d matrices used as attention parameters: c·I, rank one a bᵀ, or dense.

The construction only needs identity-like and rank-one matrices (Paper A's abstract: low-rank attention); keeping the structure
lets a layer be evaluated in O(n d) and counted with O(d) parameters instead of d².
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from transformer_theory.interpolation.arithmetic import EXACT, project


@dataclass(frozen=True)
class ScaledIdentity:
    """The matrix ``c·I`` (``c = 0``: zero matrix, ``c = 1``: identity)."""

    c: Any

    def matrix(self, d: int) -> np.ndarray:
        if isinstance(self.c, Fraction):
            return EXACT.asarray(np.eye(d, dtype=int)) * self.c
        return np.eye(d) * float(self.c)

    def apply(self, X: np.ndarray) -> np.ndarray:
        """Rows ``M x`` for the rows ``x`` of ``X``."""
        return X * self.c

    def for_scale(self, factor: Any) -> "ScaledIdentity":
        """The score matrix for tokens scaled by ``factor``: ``M / factor²``."""
        return ScaledIdentity(self.c / (factor * factor))

    def num_parameters(self, d: int) -> int:
        return 1

    @property
    def is_zero(self) -> bool:
        return self.c == 0


@dataclass(frozen=True)
class RankOne:
    """The matrix ``a bᵀ`` (``a is b``: symmetric ``v vᵀ``, counted with d parameters)."""

    a: np.ndarray
    b: np.ndarray

    def matrix(self, d: int) -> np.ndarray:
        return np.outer(self.a, self.b)

    def apply(self, X: np.ndarray) -> np.ndarray:
        return project(X, self.b)[:, None] * self.a[None, :]

    def for_scale(self, factor: Any) -> "RankOne":
        """The score matrix for tokens scaled by ``factor``: ``(a / factor)(b / factor)ᵀ`` (symmetry kept)."""
        a = self.a / factor
        return RankOne(a, a if self.a is self.b else self.b / factor)

    def num_parameters(self, d: int) -> int:
        return d if self.a is self.b else 2 * d

    @property
    def is_zero(self) -> bool:
        return not (np.any(self.a != 0) and np.any(self.b != 0))


@dataclass(frozen=True)
class DenseMatrix:
    """A general d×d matrix."""

    m: np.ndarray

    def matrix(self, d: int) -> np.ndarray:
        return self.m

    def apply(self, X: np.ndarray) -> np.ndarray:
        return X @ self.m.T

    def for_scale(self, factor: Any) -> "DenseMatrix":
        """The score matrix for tokens scaled by ``factor``: ``M / factor²``."""
        return DenseMatrix(self.m / (factor * factor))

    def num_parameters(self, d: int) -> int:
        return d * d

    @property
    def is_zero(self) -> bool:
        return not np.any(self.m != 0)


LinearMap = ScaledIdentity | RankOne | DenseMatrix
