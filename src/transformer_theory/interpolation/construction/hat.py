"""Choosing a hat feed-forward layer that moves exactly one point (Tool A, spec §4.1, reconstruction)."""

from __future__ import annotations

from typing import Any

import numpy as np

from transformer_theory.interpolation.arithmetic import backend_of, project
from transformer_theory.interpolation.feed_forward import HatFeedForward

#: Random directions tried at most per hat; the draw with the largest gap is kept.
MAX_DRAWS = 32
#: A draw is accepted at once when at least ``min(CROWD, P − 1)`` other projections lie within
#: ``WINDOW`` gaps of the moved point's projection, i.e. when its gap is not atypically small for the
#: local density of projections (about 1.5 draws per hat on average).
WINDOW, CROWD = 50, 10


def hat_move(
    points: np.ndarray,
    index: int,
    destination: np.ndarray,
    rng: np.random.Generator,
    eta: Any = 1,
    shift: np.ndarray | None = None,
) -> HatFeedForward:
    """A width-3 (4 with ``shift``) FF sending ``points[index]`` to ``destination`` and every other
    point ``x`` of ``points`` to ``η x + τ₀`` (to itself when ``η = 1`` and no shift).

    The direction ``u`` is random; only the moved point has to be isolated along it: its window half
    width is ε = half the gap between its projection and the nearest other projection.
    """
    backend = backend_of(points)
    eta = backend.scalar(eta)
    P, d = points.shape
    if P == 1:
        u = backend.gaussian_direction(rng, d)
        u_p = project(points, u)[0]
        best = (u, u_p, backend.scalar(2))
    else:
        best = None
        for _ in range(MAX_DRAWS):
            u = backend.gaussian_direction(rng, d)
            s = project(points, u)
            r = np.abs(s - s[index])
            r[index] = r.max() + 1
            gap = r.min()
            if gap > 0 and (best is None or gap / np.abs(u).max() > best[2] / np.abs(best[0]).max()):
                best = (u, s[index], gap)
            if gap > 0 and np.count_nonzero(r < WINDOW * gap) >= min(CROWD, P - 1):
                break
        if best is None:
            raise RuntimeError("no direction isolates the point to move (is it a duplicate position?)")
    u, center, gap = best[:3]
    start = points[index] if eta == 1 else points[index] * eta
    if shift is not None:
        start = start + shift
    return HatFeedForward(u=u, center=center, eps=gap / 2, displacement=destination - start, eta=eta, shift=shift)
