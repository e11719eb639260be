"""Where the construction puts tokens (spec §4.4, Fig. 7; constants are this project's choice).

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


def diagonal_slots(N: int, d: int, rng: np.random.Generator, backend: Arithmetic, start: Any = 3) -> np.ndarray:
    """P-slots ``s_j·𝟙`` with ``s_j = start + (j + ξ_j)/N``, ξ_j random in [0.1, 0.9) (rows j = 0..N−1)."""
    xi = backend.dyadic(rng, 0.1, 0.9, size=N)
    s = (backend.asarray(np.arange(N)) + xi) / N + backend.scalar(start)
    return s[:, None] * backend.asarray(np.ones((1, d)))


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


def sphere_slots(count: int, d: int, rng: np.random.Generator, backend: Arithmetic, radius: Any = 1) -> np.ndarray:
    """``count`` points of ``S_R ∩ (−∞, 0)^d`` (rows), spread evenly on the arc
    ``−R (cos θ u₁ + sin θ u₂)``, ``u₁ = 𝟙/√d``, ``u₂ ⟂ u₁`` in span(e₁, u₁), θ in [0.1, 0.9]·arctan(1/√(d−1)),
    each angle jittered by a random quarter spacing."""
    if count == 0:
        return backend.zeros((0, d))
    theta_max = math.atan(1 / math.sqrt(d - 1))
    spacing = 0.8 * theta_max / count
    jitter = np.asarray(backend.dyadic(rng, -0.25, 0.25, size=count), dtype=float)
    thetas = theta_max * 0.1 + spacing * (np.arange(count) + 0.5 + jitter)
    u1 = np.ones(d) / math.sqrt(d)
    u2 = np.eye(d)[0] - u1 * u1[0]
    u2 /= np.linalg.norm(u2)
    unit = -(np.cos(thetas)[:, None] * u1 + np.sin(thetas)[:, None] * u2)
    points = np.stack([rational_sphere_point(x, radius) for x in unit])
    if not all(v < 0 for v in points.flat):
        raise RuntimeError("sphere slots left the negative orthant")  # cannot happen for d >= 2
    return backend.asarray(points)
