"""Feed-forward layers ``FF(x) = η x + W σ(U x + b)`` (spec §2.1), dense or as a structured hat.

A :class:`HatFeedForward` is Tool A of the construction (spec §4.1, a reconstruction): a width-3
ReLU layer whose increment is a hat function of one projection ``u·x``; it moves one point and fixes
every other point of a finite set. An optional fourth neuron (constant input) and ``η ≠ 1`` add the
affine map ``x ↦ η x + τ₀`` used to rescale the cloud; width ≤ 4, as in the paper (Theorem 1.6).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from transformer_theory.interpolation.arithmetic import EXACT, FLOAT, backend_of, project, relu


class FeedForwardLayer(Protocol):
    """What a block needs of its feed-forward layer: ``FF(x) = η x + W σ(U x + b)``, evaluated structured
    (:meth:`apply`) or densely (:meth:`apply_dense`), and counted. :class:`FeedForward`,
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

    def apply(self, X: np.ndarray) -> np.ndarray:
        """The layer on every row of ``X`` (the identity layer returns ``X`` itself)."""
        return X if self.is_identity else self.apply_dense(X)

    def num_parameters(self, structured: bool = True) -> int:
        """η, W, U, b (0 for the identity layer when ``structured``)."""
        if structured and self.is_identity:
            return 0
        return 1 + self.W.size + self.U.size + self.b.size


@dataclass(frozen=True, eq=False)
class HatFeedForward(FeedForwardBase):
    """Tool A (spec §4.1, reconstruction): ``FF(x) = η x + τ₀ + δ·h(u·x − t_p)``, a bump ``h`` of one projection.

    Without a shift τ₀ the bump is a **flat-top** hat of width 4 (our improvement on the spec's
    width-3 triangle): ``h(s) = min(1, max(0, 2(ε − |s|)/ε))``, equal to
    ``(2/ε)[σ(s + ε) − σ(s + ε/2) − σ(s − ε/2) + σ(s − ε)]``; the moved point may be perturbed by up to
    ε/2 (rounding of a dense evaluation) and still lands exactly on its destination. With a shift the
    bump is the spec's triangle ``h(s) = max(0, ε − |s|)/ε = [σ(s + ε) − 2σ(s) + σ(s − ε)]/ε`` and the
    fourth neuron (constant input 1) carries τ₀. Either way the width is at most 4, as in Theorem 1.6.

    The point ``p`` with ``u·p = t_p`` goes to ``η p + τ₀ + δ``; every ``x`` with ``|u·x − t_p| ≥ ε`` goes to
    ``η x + τ₀``. :meth:`apply` evaluates the bump in closed form, so outside the window the increment
    is exactly 0 (no cancellation of large ReLU terms) and the points not being moved stay bitwise put.
    """

    u: np.ndarray
    center: Any
    eps: Any
    displacement: np.ndarray
    eta: Any = 1
    shift: np.ndarray | None = None

    @property
    def flat_top(self) -> bool:
        return self.shift is None

    @property
    def _pattern(self) -> tuple[list, list]:
        """(bias offsets relative to −t_p, output weights relative to δ) of the bump's neurons."""
        e, half = self.eps, self.eps / 2
        if self.flat_top:
            return [e, half, -half, -e], [2 / e, -2 / e, -2 / e, 2 / e]
        return [e, e * 0, -e], [1 / e, -2 / e, 1 / e]

    @property
    def W(self) -> np.ndarray:  # noqa: N802
        cols = [self.displacement * w for w in self._pattern[1]]
        if self.shift is not None:
            cols.append(self.shift)
        return np.stack(cols, axis=1)

    @property
    def U(self) -> np.ndarray:  # noqa: N802
        rows = [self.u] * len(self._pattern[0])
        if self.shift is not None:
            rows.append(self.u * 0)
        return np.stack(rows, axis=0)

    @property
    def b(self) -> np.ndarray:
        vals = [o - self.center for o in self._pattern[0]] + ([self.eps / self.eps] if self.shift is not None else [])
        arr = np.empty(len(vals), dtype=object if backend_of(self.u).exact else np.float64)
        arr[:] = vals
        return arr

    @property
    def width(self) -> int:
        return 4

    @property
    def is_identity(self) -> bool:
        return False

    def bump(self, r: np.ndarray) -> np.ndarray:
        """``h`` as a function of ``r = |u·x − t_p|`` (1 at the moved point, 0 for ``r ≥ ε``)."""
        ramp = relu(self.eps - r) / self.eps
        if self.flat_top:
            ramp = ramp * 2
            return np.where(ramp > 1, ramp * 0 + 1, ramp)
        return ramp

    def apply(self, X: np.ndarray) -> np.ndarray:
        """The layer on every row of ``X``; rows outside the window get exactly ``η x + τ₀``."""
        r = np.abs(project(X, self.u) - self.center)
        inside = np.flatnonzero(r < self.eps)
        Y = X.copy(order="K") if self.eta == 1 else X * self.eta
        if self.shift is not None:
            Y = Y + self.shift
        if inside.size:
            Y[inside] = Y[inside] + self.bump(r[inside])[:, None] * self.displacement[None, :]
        return Y

    def num_parameters(self, structured: bool = True) -> int:
        """Dense: η, W, U, b. Structured: η, u, the biases, δ, the bump pattern and τ₀."""
        d = self.u.shape[0]
        if not structured:
            return 1 + 2 * d * self.width + self.width
        return 1 + d + self.width + d + len(self._pattern[1]) + (d if self.shift is not None else 0)
