"""Choosing a hat feed-forward layer that moves exactly one point (Tool A, reconstruction).

The hat is exact in the structured evaluation whatever its window. A dense evaluation
``x + W σ(U x + b)`` (NumPy's ``structured=False``, PyTorch) rounds differently: each of the four
ReLU terms of a point at projection distance ``s`` beyond the window has size ``|δ|·|s|/ε`` and they
cancel, leaving a rounding error of about ``ε_mach·|δ|·|s|/ε`` on every point of the neurons' active
side. The choices below keep that error small:

* the direction ``u`` maximises ``ε / (extent of the active side)`` (extents below a multiple
  :data:`ROUNDING` of the rounding of ``u·x`` count as that), and its sign puts the shorter side of the
  cloud on the active side (the other side gets exactly 0, in every evaluation);
* the window centre ``t_p`` and half-width ``ε`` are rounded onto the float grid of ``|t_p| + ε`` so
  that the biases ``±ε − t_p``, ``±ε/2 − t_p`` and their differences are exact float64 numbers: the
  moved point then lands on the flat top in a dense evaluation too, however ``t_p`` compares to ``ε``.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from transformer_theory.interpolation.arithmetic import backend_of, project, to_float
from transformer_theory.interpolation.feed_forward import HatFeedForward

#: Random directions tried at most per hat; the draw with the largest ε / active extent is kept.
MAX_DRAWS = 32
#: Active extents below ``ROUNDING·d·ε_mach·|u|·max|x|`` count as that much: a window must also stay far wider
#: than the rounding of ``u·x`` itself, which moves the point to be moved within it.
ROUNDING = 1e3
#: Draws of :func:`peel_move` right after one that could not protect every point (peeling has stalled).
FEW_DRAWS = 4
#: A draw is accepted at once when the moved point's gap is at least ``1/SPACING`` of the mean spacing
#: of the projections (about 1.7 draws per hat on generic data; crowded points get all draws).
SPACING = 4


def hat_move(points: np.ndarray, index: int, destination: np.ndarray, rng: np.random.Generator) -> HatFeedForward:
    """A width-4 flat-top hat sending ``points[index]`` to ``destination`` and fixing every other row of
    ``points``: its window half-width ε is about half the gap between the moved point's projection and the
    nearest other one (rows must be distinct)."""
    best = best_direction(points, index, rng)
    if best is None:
        raise RuntimeError("no direction isolates the point to move (is it a duplicate position?)")
    return hat_along(points, index, destination, *best[:2])


def best_direction(points: np.ndarray, index: int, rng: np.random.Generator, members: np.ndarray | None = None,
                   fragile: np.ndarray | None = None) -> tuple[np.ndarray, Any, float, int] | None:
    """``(u, gap, score, exposed)`` for a hat at ``points[index]`` (or moving all of ``members`` together, their
    projections within an eighth of the gap of their midpoint): the best of up to :data:`MAX_DRAWS` random
    directions by ``score = gap / extent of the active side`` (about 1 / the dense rounding it causes); ``None``
    if no draw isolates them. A single distinct row is isolated by almost every direction; a set of members
    may be isolated by none (a row outside it lying between them, or near their line, along every direction).

    ``fragile`` (indices of rows with a near-duplicate, which a later hat must tell apart from it at that tiny
    distance) ranks first: ``exposed`` counts those on the active side, and each draw takes the sign (and the
    draws are ranked by) fewest exposed, then score. A narrow window's dense rounding moves the active side's
    points by about ``ε_mach·|δ|·extent/ε``, far more than a near-duplicate's gap: on the zero side they stay
    bitwise put."""
    backend = backend_of(points)
    P, d = points.shape
    members = np.array([index]) if members is None else members
    outside = np.ones(P, dtype=bool)
    outside[members] = False
    fragile = np.setdiff1d(np.empty(0, dtype=np.intp) if fragile is None else fragile, members)
    floor = rounding_floor(points)
    best, best_key = None, None
    for _ in range(MAX_DRAWS if outside.any() else 1):
        u = backend.gaussian_direction(rng, d)
        s = project(points, u)
        s = s - _midpoint(s[members])
        gap = np.abs(s[outside]).min() if outside.any() else backend.scalar(2)
        above, below = s.max(), -s.min()
        exposed_above, exposed_below = int(np.count_nonzero(s[fragile] > 0)), int(np.count_nonzero(s[fragile] < 0))
        if (exposed_below, below) < (exposed_above, above):  # active above the window: fewest fragile rows there,
            u, above, below = -u, below, above  # then the shorter side
            exposed_above = exposed_below
        if not gap > 8 * np.abs(s[members]).max():
            continue
        score = float(gap / max(above, gap, floor * float(np.linalg.norm(np.asarray(u, dtype=float)))))
        key = (exposed_above, -score)
        if best_key is None or key < best_key:
            best, best_key = (u, gap, score, exposed_above), key
        if not exposed_above and gap * max(P - 1, 1) * SPACING >= above + below:
            break
    return best


def _midpoint(s: np.ndarray) -> Any:
    return (s.max() + s.min()) / 2


def rounding_floor(points: np.ndarray) -> float:
    """``ROUNDING·d·ε_mach·√d·max|x_k|``: times ``|u|``, the active extent below which a window counts as too
    narrow (√d·max|x_k| bounds the rows' norms)."""
    d = points.shape[1]
    return ROUNDING * d * float(np.finfo(float).eps) * math.sqrt(d) * float(np.abs(to_float(points)).max())


def hat_along(points: np.ndarray, index: int, destination: np.ndarray, u: np.ndarray, gap,
              members: np.ndarray | None = None) -> HatFeedForward:
    """The hat along ``u`` whose window (half-width about ``gap / 2``) is centred on ``points[index]`` (on the
    midpoint of the projections of ``members``, which all move by ``destination − points[index]``)."""
    backend = backend_of(points)
    members = np.array([index]) if members is None else members
    center, eps = _midpoint(project(points[members], u)), gap / 2
    q = backend.scalar(np.spacing(float(abs(center) + eps)))
    if eps >= 4 * q:  # grid: the moved points stay within ε/4 + q/2 < ε/2 of the centre, the others outside
        eps = math.floor(eps / (2 * q)) * 2 * q
        center = round(center / q) * q
    return HatFeedForward(u=u, center=center, eps=eps, displacement=destination - points[index])


def peel_move(points: np.ndarray, candidates: np.ndarray, protected: np.ndarray,
              direction: Callable[[], np.ndarray], draws: int = MAX_DRAWS,
              floor: float | None = None) -> tuple[int, np.ndarray, Any, bool] | None:
    """A direction ``u`` and the candidate ``p`` with the largest ``u·p`` among ``candidates``, chosen so that
    the rows of ``protected`` also lie below ``u·p``: a hat at ``p`` along ``u`` leaves all of them (and the
    other candidates) on the side of its window where every neuron is 0, so a dense evaluation does not
    perturb them at all.

    ``draws`` directions drawn by ``direction()`` (dyadic vectors), each with both signs;
    a draw costs O(d) per candidate and protected row, and O(d) per row of ``points`` only when it is kept.
    The first draw that protects every row and whose gap is at least ``1/SPACING`` of the mean spacing is
    taken; else the draw with the smallest exposure (how far protected rows reach above ``u·p``, relative to
    the gap), then the largest ε / active extent (``floor``: :func:`rounding_floor` of ``points``, computed if
    not given). Returns ``(p, u, gap, protects_all)``, or ``None`` when no
    draw isolates the top candidate."""
    backend = backend_of(points)
    P, d = points.shape
    floor = rounding_floor(points) if floor is None else floor
    best, best_key = None, None
    for _ in range(draws):
        g = direction()
        at_candidates, at_protected = project(points[candidates], g), project(points[protected], g)
        raw = None
        for sign in (1, -1):
            top = int(np.argmax(sign * at_candidates))
            reach = (sign * at_protected).max() - sign * at_candidates[top] if protected.size else -1
            if best_key is not None and reach > 0 and best_key[0] == 0:
                continue  # a protecting draw is known: skip this one before projecting every row
            raw = project(points, g) if raw is None else raw
            p, s = int(candidates[top]), sign * raw
            r = np.abs(s - s[p])
            r[p] = np.inf
            gap = r.min() if P > 1 else backend.scalar(2)
            if not gap > 0:
                continue
            extent = max(s.max() - s[p], gap, floor * float(np.linalg.norm(np.asarray(g, dtype=float))))
            key = (max(float(reach / gap), 0.0), -float(gap / extent))
            if best_key is None or key < best_key:
                best, best_key = (p, sign * g, gap, key[0] == 0), key
            if key[0] == 0 and gap * SPACING * max(P - 1, 1) >= raw.max() - raw.min():
                return best
    return best
