"""Feed-forward layers ``FF(x) = η x + W σ(U x + b)`` of Paper A's blocks (Fig. 3), dense or as a
structured hat.

A :class:`HatFeedForward` is Tool A of the construction (a reconstruction, see the book's page on how it
reconstructs the papers): a width-4 ReLU layer whose increment is a flat-top hat of one projection ``u·x``;
it moves one point and fixes every other point of a finite set. :meth:`FeedForward.affine` is the affine
map ``x ↦ η x + τ₀`` (width 1) that puts the cloud where the construction needs it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from transformer_theory.interpolation.arithmetic import EXACT, FLOAT, backend_of, project, relu


class FeedForwardLayer(Protocol):
    """What a block needs of its feed-forward layer: ``FF(x) = η x + W σ(U x + b)``, evaluated structured
    (:meth:`apply`) or densely (:meth:`apply_dense`), rescaled and counted. :class:`FeedForward`,
    :class:`HatFeedForward` and the softmax construction's ``ClusterFeedForward`` all satisfy it."""

    eta: Any
    W: np.ndarray
    U: np.ndarray
    b: np.ndarray

    @property
    def width(self) -> int: ...

    @property
    def is_identity(self) -> bool: ...

    def apply(self, X: np.ndarray) -> np.ndarray: ...

    def apply_dense(self, X: np.ndarray) -> np.ndarray: ...

    def rescaled(self, factor: Any) -> "FeedForwardLayer": ...

    def num_parameters(self, structured: bool = True) -> int: ...


class FeedForwardBase:
    """Dense evaluation, width and identity test shared by the feed-forward layers.

    Subclasses provide ``eta``, ``W`` (d×w), ``U`` (w×d), ``b`` (w), :meth:`apply` and ``num_parameters``.
    """

    @property
    def width(self) -> int:
        return int(self.b.shape[0])

    @property
    def is_identity(self) -> bool:
        return self.eta == 1 and not np.any(self.W != 0)

    def apply_dense(self, X: np.ndarray) -> np.ndarray:
        """``η x + W σ(U x + b)`` for every row, by dense matrix products (the reference formula)."""
        if self.width == 0:
            return X * self.eta
        return X * self.eta + relu(X @ self.U.T + self.b) @ self.W.T

    def __call__(self, X: np.ndarray) -> np.ndarray:
        return self.apply(np.asarray(X))


@dataclass(frozen=True, eq=False)
class FeedForward(FeedForwardBase):
    """A general feed-forward layer ``FF(x) = η x + W σ(U x + b)`` (width ``w = len(b)``)."""

    eta: Any
    W: np.ndarray
    U: np.ndarray
    b: np.ndarray

    def __post_init__(self) -> None:
        w = self.b.shape[0]
        if self.W.shape[1] != w or self.U.shape[0] != w or self.W.shape[0] != self.U.shape[1]:
            raise ValueError(f"FeedForward: shapes W {self.W.shape}, U {self.U.shape}, b {self.b.shape} do not fit")

    @classmethod
    def identity(cls, d: int, exact: bool = False) -> "FeedForward":
        """The identity layer (η = 1, width 0)."""
        backend = EXACT if exact else FLOAT
        return cls(backend.scalar(1), backend.zeros((d, 0)), backend.zeros((0, d)), backend.zeros(0))

    @classmethod
    def affine(cls, eta: Any, shift: np.ndarray) -> "FeedForward":
        """``x ↦ η x + τ₀``: one neuron with constant input 1 carries the translation τ₀ (width 1)."""
        backend = backend_of(shift)
        return cls(backend.scalar(eta), shift[:, None], backend.zeros((1, len(shift))), backend.asarray(np.ones(1)))

    def apply(self, X: np.ndarray) -> np.ndarray:
        """The layer on every row of ``X`` (the identity layer returns ``X`` itself)."""
        return X if self.is_identity else self.apply_dense(X)

    def rescaled(self, factor: Any) -> "FeedForward":
        """``x ↦ factor·FF(x / factor)``: the biases scale with ``factor`` (σ is positively homogeneous)."""
        return FeedForward(self.eta, self.W, self.U, self.b * factor)

    def num_parameters(self, structured: bool = True) -> int:
        """η, W, U, b (0 for the identity layer when ``structured``)."""
        if structured and self.is_identity:
            return 0
        return 1 + self.W.size + self.U.size + self.b.size


@dataclass(frozen=True, eq=False)
class HatFeedForward(FeedForwardBase):
    """Tool A (reconstruction): ``FF(x) = x + δ·h(u·x − t_p)``, a flat-top bump of one projection.

    ``h(s) = min(1, max(0, 2(ε − |s|)/ε))`` equals ``(2/ε)[σ(s + ε) − σ(s + ε/2) − σ(s − ε/2) + σ(s − ε)]``
    (width 4, as in Theorem 1.6): the point ``p`` with ``u·p = t_p`` goes to ``p + δ`` and may be perturbed by
    up to ε/2 (rounding of a dense evaluation) and still land exactly there; every ``x`` with
    ``|u·x − t_p| ≥ ε`` is fixed. :meth:`apply` evaluates the bump in closed form, so outside the window the
    increment is exactly 0 and the points not being moved stay bitwise put.
    """

    u: np.ndarray
    center: Any
    eps: Any
    displacement: np.ndarray

    eta = 1  # class constant (residual layer), not a field

    @property
    def _pattern(self) -> tuple[list, list]:
        """(bias offsets relative to −t_p, output weights relative to δ) of the bump's neurons."""
        e, half = self.eps, self.eps / 2
        return [e, half, -half, -e], [2 / e, -2 / e, -2 / e, 2 / e]

    @property
    def W(self) -> np.ndarray:  # noqa: N802
        return np.stack([self.displacement * w for w in self._pattern[1]], axis=1)

    @property
    def U(self) -> np.ndarray:  # noqa: N802
        return np.stack([self.u] * 4, axis=0)

    @property
    def b(self) -> np.ndarray:
        arr = np.empty(4, dtype=object if backend_of(self.u).exact else np.float64)
        arr[:] = [o - self.center for o in self._pattern[0]]
        return arr

    @property
    def width(self) -> int:
        return 4

    @property
    def is_identity(self) -> bool:
        return False

    def rescaled(self, factor: Any) -> "HatFeedForward":
        """``x ↦ factor·FF(x / factor)``: the window and the displacement scale with ``factor``."""
        return HatFeedForward(self.u, self.center * factor, self.eps * factor, self.displacement * factor)

    def bump(self, r: np.ndarray) -> np.ndarray:
        """``h`` as a function of ``r = |u·x − t_p|`` (1 for ``r ≤ ε/2``, 0 for ``r ≥ ε``)."""
        ramp = relu(self.eps - r) / self.eps * 2
        return np.where(ramp > 1, ramp * 0 + 1, ramp)

    def apply(self, X: np.ndarray) -> np.ndarray:
        """The layer on every row of ``X``; rows outside the window are returned unchanged (a copy)."""
        Y = X.copy(order="K")
        self.move_rows(Y)
        return Y

    def move_rows(self, X: np.ndarray, rows: np.ndarray | None = None,
                  projections: np.ndarray | None = None) -> np.ndarray:
        """In place: apply the layer to the rows ``rows`` of ``X`` (all rows if ``None``; they must include
        every row inside the window), given their projections ``project(X[rows], u)`` if known. Returns the
        indices of the rows it moved. Each row is computed from itself only, so the result does not depend on
        which other rows are passed."""
        if projections is None:
            projections = project(X if rows is None else X[rows], self.u)
        r = np.abs(projections - self.center)
        inside = np.flatnonzero(r < self.eps)
        moved = inside if rows is None else rows[inside]
        if inside.size:
            X[moved] = X[moved] + self.bump(r[inside])[:, None] * self.displacement[None, :]
        return moved

    def num_parameters(self, structured: bool = True) -> int:
        """Dense: η, W, U, b. Structured: η, u, the biases, δ and the bump pattern."""
        d = self.u.shape[0]
        if not structured:
            return 1 + 2 * d * self.width + self.width
        return 1 + d + self.width + d + len(self._pattern[1])
