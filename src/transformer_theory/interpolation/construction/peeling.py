"""The order and directions of the hats that move the leaders (stages 2 and 4 of Theorem 1.6; reconstruction).

A hat along ``u`` whose window holds the point p leaves every point x with ``u·x ≤ u·p − ε`` bitwise put in
every evaluation (all four of its neurons are 0 there), while the points above its window are fixed only up to
the rounding of a dense evaluation (the neurons cancel there). So the leaders are moved in an order that keeps
the points later layers need exactly, the leaders still to move and the destinations already reached, below
each window: they are *peeled*.

:func:`move_all` sweeps along one direction ``u`` at a time. The destinations (slots or targets) project into
a band ``[lo, hi]`` along ``u``; the leaders above the band are moved from the top down along ``u``, those
below it from the bottom up along ``−u``, so every hat has the leaders still to move and every destination on
its zero side. One sort of the P positions per sweep gives each hat its window (the nearest projections on
either side) in O(1): a sweep costs O(P (d + log P)) however many leaders it moves, and its hats share one
direction, so the structured evaluation finds their windows in one sorted index as well
(:mod:`~transformer_theory.interpolation.evaluation`). A side of a sweep stops at the first leader whose gap
is below ``1/SWEEP_SPACING`` of the mean spacing of the projections (a near-tie along ``u``); the next sweep
takes a new direction. When a sweep moves nothing (every leader left lies in the band, or ties), one leader is
moved by :func:`~.hat.peel_move`, which draws directions until one protects everything; after k sweeps in a
row that moved nothing, the next one waits for 2^(k−1) such moves (as after the softmax collapse, where the
leaders left lie on one line inside the targets' band and a sweep each time would cost a sort of every
position per leader).
"""

from __future__ import annotations

import bisect
from typing import Callable

import numpy as np

from transformer_theory.interpolation.arithmetic import DYADIC_BITS, project, to_float
from transformer_theory.interpolation.construction.builder import Construction
from transformer_theory.interpolation.construction.hat import FEW_DRAWS, MAX_DRAWS, peel_move, rounding_floor

#: A sweep moves a leader along its direction only if the gap to the nearest other projection is at least the
#: mean spacing of the projections divided by this (else the hat's window would be needlessly narrow).
SWEEP_SPACING = 64
#: Random tilts of the sweep's direction tried for a leader that the direction itself isolates too narrowly,
#: each moving the projections of the positions by up to ``TILT`` mean spacings.
TILTS = 8
TILT = 4


def move_all(c: Construction, leaders: list[np.ndarray], destination: Callable[[int, int], np.ndarray],
             direction: Callable[[], np.ndarray],
             sweep_direction: Callable[[int], np.ndarray] | None = None) -> list[np.ndarray]:
    """One hat per leader token, moving the k-th moved leader of sequence j to ``destination(j, k)``; returns
    the leaders of each sequence in the order they were moved.

    Sweep k goes along ``sweep_direction(k)`` (default: a draw of ``direction``); :func:`~.hat.peel_move`
    draws from ``direction`` when a sweep moves nothing. When no draw protects everything (the leaders left
    lie inside the hull of the points already moved), the least exposed draw is taken and the next leader gets
    only a few draws; when no draw isolates a candidate, :func:`~.hat.hat_move` moves the first one left."""
    sweep_direction = sweep_direction or (lambda k: direction())
    state = _Peeling(c, leaders, destination)
    draws, sweep, failed, wait = MAX_DRAWS, 0, 0, 0
    while state.remaining:
        if wait == 0:
            moved = state.sweep(sweep_direction(sweep))
            sweep += 1
            if moved:
                failed = 0
                continue
            failed += 1
            wait = 2 ** (failed - 1)  # the leaders left sit in the band: back off before sorting again
        wait -= 1
        points = c.config.token_point[np.array(state.remaining)]
        choice = peel_move(c.config.points, points, np.array(state.done, dtype=int), direction, draws, state.floor)
        draws = MAX_DRAWS if choice is not None and choice[3] else FEW_DRAWS
        token = state.remaining[0] if choice is None else state.remaining[int(np.flatnonzero(points == choice[0])[0])]
        state.move(token, None if choice is None else choice[1:3])
        state.remaining.remove(token)
    return [np.array(tokens, dtype=int) for tokens in state.moved]


class _Peeling:
    """The leaders left, those moved (per sequence, in order) and the positions they reached."""

    def __init__(self, c: Construction, leaders: list[np.ndarray], destination: Callable[[int, int], np.ndarray]):
        self.c, self.destination = c, destination
        self.sequence_of = {int(t): j for j, tokens in enumerate(leaders) for t in tokens}
        self.remaining = [int(t) for tokens in leaders for t in tokens]
        self.moved: list[list[int]] = [[] for _ in leaders]
        self.done: list[int] = []
        self.destinations = np.array([destination(j, k) for j, tokens in enumerate(leaders)
                                      for k in range(len(tokens))]).reshape(-1, c.d)
        self.floor = rounding_floor(np.concatenate([c.config.points, self.destinations]))

    def move(self, token: int, direction: tuple | None) -> None:
        j = self.sequence_of[token]
        point = int(self.c.config.token_point[token])
        self.c.move(point, self.destination(j, len(self.moved[j])), direction=direction)
        self.moved[j].append(token)
        self.done.append(point)

    def sweep(self, u: np.ndarray) -> int:
        """Move the leaders above the destinations' band along ``u`` (top down) and those below it along ``−u``
        (bottom up), each side until a leader that neither ``u`` nor a slight tilt of it isolates well
        (:meth:`_tilted`); returns how many moved."""
        c = self.c
        points = c.config.points
        P = len(points)
        s = project(points, u)
        band = project(self.destinations, u)
        order = np.argsort(s, kind="stable")
        ranked = s[order]
        rank = np.empty(P, dtype=np.intp)
        rank[order] = np.arange(P)
        spacing = float(ranked[-1] - ranked[0]) / max(P - 1, 1)
        threshold = max(self.floor * float(np.linalg.norm(to_float(u))), spacing / SWEEP_SPACING)
        unmoved = np.ones(P, dtype=bool)
        unmoved[self.done] = False
        cloud = to_float(points[unmoved]) if unmoved.any() else np.zeros((1, c.d))
        reach = float(np.linalg.norm(cloud.max(axis=0) - cloud.min(axis=0)))  # bounds |x − y| over unmoved x, y
        box = np.concatenate([cloud, to_float(self.destinations)])  # every position is unmoved or a destination
        far = float(np.linalg.norm(box.max(axis=0) - box.min(axis=0)))  # bounds |x − y| over all positions x, y
        tokens = np.array(self.remaining, dtype=np.intp)
        at = s[c.config.token_point[tokens]]
        leader = np.zeros(P, dtype=bool)  # positions of the leaders left and of the destinations reached
        leader[c.config.token_point[tokens]] = True
        leader[self.done] = True
        gone = np.zeros(P, dtype=bool)  # positions vacated in this sweep (their leaders moved)
        landed: list[int] = []  # their rows now hold destinations
        landed_at: list = []  # the projections of those destinations along u, sorted, and their rows in that order
        landed_rows: list[int] = []

        def nearby(center, half) -> tuple[np.ndarray, np.ndarray]:
            """The positions within ``half`` of ``center`` along u: the others, and the leaders' and reached
            destinations' (which must stay behind)."""
            a, b = np.searchsorted(ranked, center - half, "left"), np.searchsorted(ranked, center + half, "right")
            rows = order[a:b]
            rows = rows[~gone[rows]]
            reached = landed_rows[bisect.bisect_left(landed_at, center - half) : bisect.bisect_right(landed_at, center + half)]
            return rows[~leader[rows]], np.concatenate([rows[leader[rows]], np.array(reached, dtype=np.intp)])

        for sign, edge in ((1, band.max()), (-1, -band.min())):  # the band is behind `edge` (sign·u coordinates)
            chosen = sign * at > edge
            side = tokens[chosen][np.argsort(-sign * at[chosen], kind="stable")]
            ahead = np.inf  # nearest position beyond the last leader moved on this side (sign·u coordinates)
            for token in side:
                point = int(c.config.token_point[token])
                i, t = rank[point], sign * s[point]
                k = i + sign  # the next position ahead: the previous leader of this side if it moved
                if 0 <= k < P:
                    ahead = sign * ranked[k] if not gone[order[k]] else ahead
                else:
                    ahead = np.inf
                k = i - sign  # the next position behind that is still there
                while 0 <= k < P and gone[order[k]]:
                    k -= sign
                behind = sign * ranked[k] if 0 <= k < P else -np.inf
                nearest = (landed_at[-1] if sign > 0 else -landed_at[0]) if landed else -np.inf  # all in the band
                gap = min(t - behind, ahead - t, t - nearest)
                direction = u if sign > 0 else -u
                if not gap >= threshold:
                    tilted = self._tilted(direction, point, threshold, spacing / reach if reach > 0 else np.nan, far,
                                          lambda half: nearby(s[point], half))
                    if tilted is None:
                        break
                    direction, gap = tilted
                if gap == np.inf:  # the only position: any window will do
                    gap = c.backend.scalar(2)
                self.move(token, (direction, gap))
                projection = project(points[point : point + 1], u)[0]
                at_rank = bisect.bisect(landed_at, projection)
                landed_at.insert(at_rank, projection)
                landed_rows.insert(at_rank, point)
                gone[point] = True
                landed.append(point)
        if landed:
            self.remaining = [t for t in self.remaining if not gone[c.config.token_point[t]]]
        return len(landed)

    def _tilted(self, direction: np.ndarray, point: int, threshold: float, density: float, far: float,
                nearby: Callable[[float], tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, object] | None:
        """A dyadic direction ``v`` within ``τ = TILT·density`` of ``direction`` (``density``: the mean spacing
        of the projections over the extent of the positions not moved yet) along which ``point`` is at least
        ``threshold`` from every other position and ahead of the leaders left and the destinations reached,
        and that gap; ``None`` if :data:`TILTS` draws find none.

        ``far`` bounds the distance between any two positions, so along ``v`` their projections relative to
        ``point`` move by at most ``|v − direction|·far ≤ 2τ·far``: only the positions within
        ``h = threshold + 2τ·far`` of ``point`` along ``direction`` (``nearby(h)``: the others, and those that
        must stay behind, all behind ``point`` along ``direction``) are checked one by one; every other
        position is at least ``h − |v − direction|·far`` away, on its side. O(d) per position in that slab,
        whatever the number of positions."""
        if not density > 0:
            return None
        backend, d = self.c.backend, self.c.d
        points = self.c.config.points
        tau = TILT * density
        half = threshold + 2 * tau * far
        near, behind = nearby(half)
        near, behind = near[near != point], behind[behind != point]
        best = None
        for _ in range(TILTS):
            xi = self.c.rng.standard_normal(d)
            v = backend.asarray(np.round((to_float(direction) + tau * xi / np.linalg.norm(xi)) * 2**DYADIC_BITS)
                                / 2**DYADIC_BITS)
            turned = float(np.linalg.norm(to_float(v - direction)))
            if not turned <= 2 * tau:
                continue
            here = project(points[point : point + 1], v)[0]
            gap = half - turned * far  # positions outside the slab are at least this far
            if near.size:
                gap = min(gap, np.abs(project(points[near], v) - here).min())
            if behind.size:
                gap = min(gap, here - project(points[behind], v).max())
            if gap >= threshold and (best is None or gap > best[1]):
                best = (v, gap)
        return best
