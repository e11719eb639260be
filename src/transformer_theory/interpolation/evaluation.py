"""Structured evaluation that touches only what each layer changes (Paper A's constructions at scale).

The tokens of all sequences are kept as positions plus, for every token, the index of its position (as the
builder's :class:`~.construction.configuration.Configuration` does), so a feed-forward layer acts on each
position once however many tokens sit there; the positions are merged again after every self-attention
layer, which is the only kind of layer that can split them. A hat (:class:`~.feed_forward.HatFeedForward`,
Tool A of Theorem 1.6) moves only the positions in its window ``|u·x − t_p| < ε``; they are found with a
:class:`ProjectionIndex`, the positions sorted by their projection on one direction, which answers every hat
whose direction is close to that one (the construction moves its leaders along a few directions each, see
:func:`~.construction.hardmax.move_all`), in O(log P) plus the rows it returns. Identity layers are skipped.

Every position is updated with the arithmetic of the layer's own ``apply``, one row at a time, so the result
is bit for bit that of applying every layer to the whole token array in turn (:meth:`Block.apply
<transformer_theory.interpolation.transformer.Block.apply>`, the reference this module is tested against).
"""

from __future__ import annotations

from collections import Counter
from typing import Sequence

import numpy as np

from transformer_theory.interpolation.arithmetic import backend_of, distinct, project, unique_rows
from transformer_theory.interpolation.feed_forward import HatFeedForward
from transformer_theory.interpolation.segments import Segments

#: A window query that would return more than ``1/SCAN_SHARE`` of the positions scans them all instead.
SCAN_SHARE = 8
#: Positions moved since the index was sorted are kept aside, sorted, up to ``BUFFER·√P`` of them.
BUFFER = 4
#: At most this many indexes are kept up to date at once (the most recently built ones).
LIVE_INDEXES = 4
#: Below this many positions a hat scans them all (an index would not pay).
SMALL = 256

_EPS = float(np.finfo(np.float64).eps)


def direction_key(u: np.ndarray) -> tuple[bytes, float]:
    """``(key, sign)``: the same key for ``u`` and ``−u`` (float directions), ``u = sign·(the key's vector)``;
    hats along either share one index."""
    nonzero = np.flatnonzero(u)
    sign = -1.0 if nonzero.size and u[nonzero[0]] < 0 else 1.0
    return (u * sign + 0.0).tobytes(), sign


class ProjectionIndex:
    """The rows of a float position array sorted by their projection ``project(x, u)`` on one direction.

    :meth:`window` returns the rows in the window of a hat along ``±u`` with their projections (exactly those
    the hat computes: ``project`` of a row along ``−u`` is minus that along ``u``, bit for bit). :meth:`rows_near`
    returns a superset of the rows a hat along any direction ``v`` moves (the hat then tests them itself),
    using ``v·x = λ u·x + (v − λu)·x`` with ``|x| ≤`` :attr:`radius` and the rounding bounds of
    :func:`~.arithmetic.project`. Rows moved since the sort (:meth:`moved`) are kept in a small sorted buffer,
    merged back when it grows past ``BUFFER·√P``.
    """

    def __init__(self, points: np.ndarray, u: np.ndarray) -> None:
        self.u = np.asarray(u, dtype=np.float64)
        self.key, self.sign = direction_key(self.u)
        self.norm = float(np.linalg.norm(self.u))
        self.projection = project(points, self.u)
        self.radius = _radius(points)
        self.limit = BUFFER * int(np.sqrt(len(points))) + 16
        self._sort()

    def _sort(self) -> None:
        self.order = np.argsort(self.projection, kind="stable")
        self.sorted = self.projection[self.order]
        self.fresh = np.ones(len(self.projection), dtype=bool)
        self.extra = np.empty(0)
        self.extra_row = np.empty(0, dtype=np.intp)

    def _between(self, lo: float, hi: float) -> np.ndarray:
        """Rows whose current projection lies in ``[lo, hi]``."""
        a, b = np.searchsorted(self.sorted, lo, "left"), np.searchsorted(self.sorted, hi, "right")
        rows = self.order[a:b]
        rows = rows[self.fresh[rows]]
        if self.extra_row.size:
            a, b = np.searchsorted(self.extra, lo, "left"), np.searchsorted(self.extra, hi, "right")
            if b > a:
                extra = self.extra_row[a:b]
                extra = np.unique(extra[self.projection[extra] == self.extra[a:b]])  # a row moved twice: its last entry
                rows = np.concatenate([rows, extra])
        return rows

    def window(self, sign: float, center: float, eps: float) -> tuple[np.ndarray, np.ndarray]:
        """Rows ``x`` with ``|project(x, sign·u) − center| ≤ eps`` (and maybe a few ulps more) and those
        projections (``sign = ±1``)."""
        c, e = float(center), float(eps)
        lo, hi = (c - e, c + e) if sign > 0 else (-(c + e), -(c - e))
        pad = 4 * _EPS * (abs(c) + e)
        rows = self._between(lo - pad, hi + pad)
        return rows, self.projection[rows] * sign

    def rows_near(self, v: np.ndarray, center: float, eps: float) -> np.ndarray | None:
        """Row indices containing every row ``x`` with ``|project(x, v) − center| < eps``, or ``None`` when
        ``v`` is too far from ``u`` for that to be a small share of the rows."""
        lam = float(np.dot(v, self.u)) / self.norm**2
        if lam == 0 or not np.isfinite(lam):
            return None
        d = len(self.u)
        rest = float(np.linalg.norm(v - lam * self.u))
        rounding = 4 * (d + 2) * _EPS * (float(np.linalg.norm(v)) + abs(lam) * self.norm)
        half = float(eps) + (1.01 * rest + rounding) * self.radius
        lo, hi = (float(center) - half) / lam, (float(center) + half) / lam
        lo, hi = min(lo, hi), max(lo, hi)
        widen = 8 * _EPS * (abs(float(center)) + half) / abs(lam)
        lo, hi = lo - widen, hi + widen
        if np.searchsorted(self.sorted, hi, "right") - np.searchsorted(self.sorted, lo) > len(self.sorted) // SCAN_SHARE:
            return None
        return self._between(lo, hi)

    def moved(self, points: np.ndarray, rows: np.ndarray) -> None:
        """Record that ``rows`` of ``points`` changed."""
        moved = points[rows]
        projection = project(moved, self.u)
        self.projection[rows] = projection
        self.fresh[rows] = False
        self.radius = max(self.radius, _radius(moved))
        if len(rows) == 1:
            at = int(np.searchsorted(self.extra, projection[0]))
            self.extra = np.concatenate([self.extra[:at], projection, self.extra[at:]])
            self.extra_row = np.concatenate([self.extra_row[:at], rows, self.extra_row[at:]])
        else:
            order = np.argsort(projection, kind="stable")
            at = np.searchsorted(self.extra, projection[order])
            self.extra = np.insert(self.extra, at, projection[order])
            self.extra_row = np.insert(self.extra_row, at, rows[order])
        if len(self.extra) > self.limit:
            self._sort()


def _radius(points: np.ndarray) -> float:
    """An upper bound on the norms of the rows (float64 rounding included)."""
    return 1.01 * float(np.sqrt((points * points).sum(axis=1)).max()) if len(points) else 0.0


class Evaluation:
    """Token positions of stacked sequences moving through a list of blocks (see the module docstring)."""

    def __init__(self, tokens: np.ndarray, segments: Segments, blocks: Sequence) -> None:
        self.backend = backend_of(tokens)
        self.points = tokens.copy(order="K")
        self.token_point = np.arange(len(tokens))
        self.segments = segments
        self.indexed = not self.backend.exact
        self.directions = {id(b.ff): direction_key(b.ff.u) for b in blocks
                           if self.indexed and isinstance(b.ff, HatFeedForward)}
        self.uses = Counter(key for key, _ in self.directions.values())
        self.indexes: list[ProjectionIndex] = []

    def run(self, blocks: Sequence) -> np.ndarray:
        """Apply ``blocks`` in turn (identity blocks skipped) and return the stacked output tokens."""
        for block in blocks:
            if block.is_identity:
                continue
            if block.order == "ff_sa":
                self.feed_forward(block.ff)
                self.attention(block.sa)
            else:
                self.attention(block.sa)
                self.feed_forward(block.ff)
        return self.tokens()

    def tokens(self) -> np.ndarray:
        return self.backend.column_major(self.points[self.token_point])

    def feed_forward(self, ff) -> None:
        if ff.is_identity:
            return
        if not isinstance(ff, HatFeedForward):
            self.points = ff.apply(self.points)  # a row-wise layer (affine map, exactification): every position
            self.indexes = []
            return
        rows, projections = self._window(ff) if self.indexed and len(self.points) >= SMALL else (None, None)
        moved = ff.move_rows(self.points, rows, projections)
        if moved.size:
            for index in self.indexes:
                index.moved(self.points, moved)

    def attention(self, sa) -> None:
        if sa.is_identity:
            return
        if sa.V.is_zero:  # ρ x: row-wise
            self.points = self.points * sa.rho
        else:
            self.points, self.token_point = _merged(sa.apply(self.tokens(), self.segments))
        self.indexes = []

    def _window(self, ff: HatFeedForward) -> tuple[np.ndarray | None, np.ndarray | None]:
        """Rows that may lie in the hat's window (``None``: all of them) and, when known, their projections."""
        key, sign = self.directions[id(ff)]
        self.uses[key] -= 1
        self.indexes = [index for index in self.indexes if self.uses[index.key] > 0 or index.key == key]
        for index in self.indexes:
            if index.key == key:
                return index.window(sign * index.sign, ff.center, ff.eps)
        for index in self.indexes:
            rows = index.rows_near(ff.u, ff.center, ff.eps)
            if rows is not None:
                return rows, None
        if self.uses[key] <= 0:  # no later hat along this direction: an index would not pay
            return None, None
        index = ProjectionIndex(self.points, ff.u)
        self.indexes = [index] + self.indexes[: LIVE_INDEXES - 1]
        return index.window(1.0, ff.center, ff.eps)


def _merged(tokens: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Positions and token-to-position map after a self-attention layer: equal rows merged when many tokens
    share a position (as after the collapse), else one position per token (merging would not pay)."""
    if len(distinct(tokens[:, 0])) < 0.75 * len(tokens):
        return unique_rows(tokens)
    return tokens, np.arange(len(tokens))
