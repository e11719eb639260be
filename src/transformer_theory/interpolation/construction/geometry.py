"""Where the construction puts tokens (Paper A, Fig. 7; the constants are this project's reconstruction).

* box ``B = [1, 2]^d`` (positive orthant): every token is first mapped there by an affine map;
* region ``P = {x : x_k > 2 for all k}``: one leader per sequence on the diagonal, slot ``s_j·𝟙``;
* sphere ``S_R ∩ (−∞, 0)^d``: the other ``m_j − 1`` leaders, on an arc of the negative orthant.

Sphere points are rational (inverse stereographic projection of a rational point of R^{d−1}), so
``|q|² = R²`` holds exactly in rational arithmetic, as Lemma 4.3 needs.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np

from transformer_theory.interpolation.arithmetic import DYADIC_BITS, Arithmetic

BOX_LOW, BOX_HIGH = 1, 2


def box_affine(points: np.ndarray, backend: Arithmetic) -> tuple[Any, np.ndarray]:
    """``(η, τ₀)`` with ``η x + τ₀ ∈ [1, 2]^d`` for all rows ``x`` (η = 1 / largest coordinate range)."""
    lo, hi = points.min(axis=0), points.max(axis=0)
    width = (hi - lo).max()
    eta = backend.scalar(1) / width if width > 0 else backend.scalar(1)
    return eta, BOX_LOW - lo * eta


#: How far below the box (along :func:`side`) the slots of :func:`below_box` lie.
BELOW_MARGIN = 0.25


def side(d: int) -> np.ndarray:
    """The unit vector ``u₂ ⟂ 𝟙`` in span(e₁, 𝟙) along which the sphere arc of :func:`sphere_slots` turns."""
    u1 = np.ones(d) / math.sqrt(d)
    u2 = np.eye(d)[0] - u1 * u1[0]
    return u2 / np.linalg.norm(u2)


def below_box(d: int, slot_start: float = 3) -> tuple[float, float, tuple[float, float]] | None:
    """Slots that all lie below the box along ``u₂ =`` :func:`side`: ``(κ, R, arc)`` for P-slots
    ``s_j·𝟙 − κ u₂`` (``s_j ≥ slot_start``) and sphere slots of radius R on the arc ``θ ∈ arc``
    (:func:`sphere_slots`), both at ``u₂·x ≤ min_B u₂·x − BELOW_MARGIN``; ``None`` when ``slot_start`` is too
    close to the box for that. The construction uses them in d ≤ 3, where the directions ⊥ 𝟙 and ⊥ u₂
    (along which all the usual slots project to 0) are too few to find good hat windows.

    Lemmas 4.2 and 4.3 still hold: moving the P-slot ``κ`` off the diagonal changes a box token's scores by at
    most ``κ·|u₂·x| ≤ κ``, at most half the margin ``(s_j − 2)·d`` by which it prefers its P-leader (the
    condition checked), and the sphere slots stay in the negative orthant (θ below ``arctan √(d − 1)``)."""
    u2 = side(d)
    kappa = math.ceil(64 * (0.5 * float(np.abs(u2).sum()) + BELOW_MARGIN)) / 64  # half the box's extent along u₂
    if (slot_start - BOX_HIGH) * d < 2 * kappa:
        return None
    theta_max = math.atan(math.sqrt(d - 1))
    arc = (0.5 * theta_max, 0.9 * theta_max)
    return kappa, math.ceil(8 * kappa / math.sin(arc[0])) / 8, arc


def diagonal_slots(N: int, d: int, rng: np.random.Generator, backend: Arithmetic, start: Any = 3,
                   offset: np.ndarray | None = None) -> np.ndarray:
    """P-slots ``s_j·𝟙 + offset``, ``s_j = start + (j + ξ_j)/N``, ξ_j random in [0.1, 0.9) (rows j = 0..N−1)."""
    xi = backend.dyadic(rng, 0.1, 0.9, size=N)
    s = (backend.asarray(np.arange(N)) + xi) / N + backend.scalar(start)
    slots = s[:, None] * backend.asarray(np.ones((1, d)))
    return slots if offset is None else slots + backend.asarray(offset)


def rational_sphere_point(x: np.ndarray, radius: Any = 1, bits: int = DYADIC_BITS) -> np.ndarray:
    """A rational point of the sphere of radius R near ``R x`` (x a unit vector, ``x_d < 1``), as Fractions.

    Stereographic projection from the pole e_d, rounding to ``t = a / 2^bits`` (a integer), and back:
    ``t ↦ (2t, |t|² − 1) / (|t|² + 1)`` has a rational image of norm exactly 1.
    """
    a = [round(v * 2**bits) for v in x[:-1] / (1.0 - x[-1])]
    one = 4**bits
    den = sum(v * v for v in a) + one
    R = Fraction(radius)
    coords = [2 * v * 2**bits for v in a] + [den - 2 * one]
    return np.array([Fraction(c * R.numerator, den * R.denominator) for c in coords], dtype=object)


def sphere_arc(d: int) -> tuple[float, float]:
    """The default arc of :func:`sphere_slots`: ``[0.1, 0.9]·arctan(1/√(d−1))``."""
    theta_max = math.atan(1 / math.sqrt(d - 1))
    return 0.1 * theta_max, 0.9 * theta_max


def sphere_slots(count: int, d: int, rng: np.random.Generator, backend: Arithmetic, radius: Any = 1,
                 arc: tuple[float, float] | None = None) -> np.ndarray:
    """``count`` points of ``S_R ∩ (−∞, 0)^d`` (rows), spread evenly on the arc
    ``−R (cos θ u₁ + sin θ u₂)``, ``u₁ = 𝟙/√d``, ``u₂ =`` :func:`side`, θ in ``arc`` (default
    [0.1, 0.9]·arctan(1/√(d−1))), each angle jittered by a random quarter spacing."""
    if count == 0:
        return backend.zeros((0, d))
    arc = sphere_arc(d) if arc is None else arc
    spacing = (arc[1] - arc[0]) / count
    jitter = np.asarray(backend.dyadic(rng, -0.25, 0.25, size=count), dtype=float)
    thetas = arc[0] + spacing * (np.arange(count) + 0.5 + jitter)
    u1 = np.ones(d) / math.sqrt(d)
    unit = -(np.cos(thetas)[:, None] * u1 + np.sin(thetas)[:, None] * side(d))
    points = _float_sphere_points(unit, radius) if not backend.exact else None
    if points is None:
        points = backend.asarray(np.stack([rational_sphere_point(x, radius) for x in unit]))
    if not all(v < 0 for v in points.flat):
        raise RuntimeError("sphere slots left the negative orthant")  # cannot happen for d >= 2
    return points


def _float_sphere_points(unit: np.ndarray, radius: Any, bits: int = DYADIC_BITS) -> np.ndarray | None:
    """:func:`rational_sphere_point` of every row of ``unit``, rounded to float64, computed in integer arrays:
    each coordinate is ``c / den`` with integers below 2^53, so one float division rounds it exactly as
    ``float(Fraction(c, den))`` does. ``None`` when the radius makes the integers too large for that."""
    a = np.round(unit[:, :-1] / (1.0 - unit[:, -1:]) * 2**bits).astype(np.int64)
    den = (a * a).sum(axis=1) + 4**bits
    R = Fraction(radius)
    coords = np.concatenate([2 * a * 2**bits, (den - 2 * 4**bits)[:, None]], axis=1)
    limit = 2**53
    if int(np.abs(coords).max()) * R.numerator >= limit or int(den.max()) * R.denominator >= limit:
        return None
    return (coords * R.numerator).astype(np.float64) / (den * R.denominator).astype(np.float64)[:, None]
