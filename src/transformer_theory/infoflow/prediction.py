"""Predictions: is a target efficiently approximable by an architecture, and at which parameter cost?

Cost law (InfoFlow Theorem 3, as summarised; the exponent form is the seed summary's): decoding
information coupled from ``T0`` tokens into an ``E``-dimensional state costs ``M ~ eps^{-(T0 d/E - 1)}``
parameters. S2 renders it ``eps^{-T0 d/E}``; the two agree up to one power of eps and we use the
seed form (``infoflow-spec.md`` §2.4). **The rule that combines it with a schedule is a
reconstruction [INF]** (§2.6):

* every term scheduled by top-1 retrievals -> **efficient**, ``M ~ eps^{-max(1, gamma)}``, exponent
  independent of T (``gamma``: the FFN's approximation exponent for the smooth parts, P1 §4; gamma = 2
  for a finite Barron norm; default 1 gives the O(eps^{-1}) of Theorem 1's two-layer construction);
  a scheduled specific-position read of ``|P|`` tokens adds the cost law with ``T0 = |P|``;
* a term that cannot be scheduled is computed by global aggregation: cost law with ``T0 = T``
  (exponent grows linearly with T); when ``T0 d <= E`` the state holds every token separately, the
  **memorisation regime** of P1 Theorem 2(3), cost ``eps^{-(1+gamma)}``: cheap at that T, but the
  exponent is no longer T-independent once ``T d > E`` (so ``efficient`` stays False). [INF] beyond
  the memorisation regime we report ``max(1 + gamma, T0 d/E - 1)`` (see :func:`cost_law_exponent`);
* a k-th largest selection (k >= 2) uses InfoFlow Theorem 2 ([SEED] form):
  ``Omega(eps^{-(T-k-1)/(n+1)})``, ``n`` the per-head dimension.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

from transformer_theory.infoflow.architecture import Architecture
from transformer_theory.infoflow.schedule import Bottleneck, Schedule, find_schedule
from transformer_theory.infoflow.trees import Positions, Reduction, Tree


def cost_law_exponent(T0: int, d: int, E: int, gamma: float = 1.0) -> tuple[float, str]:
    """``(k, regime)`` with ``M ~ eps^{-k}`` for decoding ``T0`` coupled tokens of dimension ``d`` from
    an ``E``-dimensional state.

    ``T0 d <= E``: memorisation regime (P1 Theorem 2(3)), ``k = 1 + gamma``. Otherwise the cost law of
    Theorem 3 (seed form) ``k = T0 d/E - 1``, floored at ``1 + gamma`` **[INF]**: coupled decoding is
    never taken cheaper than the memorisation construction, so k does not decrease as T0 grows.
    """
    for name, v in (("T0", T0), ("d", d), ("E", E)):
        if not isinstance(v, numbers.Integral) or isinstance(v, bool) or v < 1:
            raise ValueError(f"{name} = {v!r} must be a positive integer")
    if T0 * d <= E:
        return 1.0 + gamma, "memorisation"
    return max(1.0 + gamma, T0 * d / E - 1.0), "aggregation"


def p1_single_layer_exponent(T: int, h: int, D: int, n: float) -> float:
    """P1's single-layer lower-bound exponent for ``h = s < D`` heads (verified):
    ``k = (T/4 - s - D + 1) / ((n + 1) s + 1) - 1``."""
    s = h
    return (T / 4 - s - D + 1) / ((n + 1) * s + 1) - 1


@dataclass(frozen=True)
class Prediction:
    """Result of :func:`predict`: ``M ~ eps^{-exponent}`` parameters for accuracy ``eps``."""

    efficient: bool
    exponent: float
    regime: str               # "retrieval" | "specific" | "aggregation" | "memorisation" | "theorem 2"
    bottleneck: Bottleneck | None
    bottlenecks: tuple[Bottleneck, ...]
    formula: str
    gamma: float
    seq_len: int
    schedule: Schedule
    reference_exponent: float | None = None
    reference: str = ""

    def cost(self, eps: float) -> float:
        """Predicted parameter count up to constants, ``eps^{-exponent}``."""
        if not eps > 0:
            raise ValueError(f"eps = {eps!r} must be positive")
        return float(eps) ** (-self.exponent)

    def log10_cost(self, eps: float) -> float:
        if not eps > 0:
            raise ValueError(f"eps = {eps!r} must be positive")
        return -self.exponent * math.log10(eps)

    @property
    def reason(self) -> str:
        return self.bottleneck.reason if self.bottleneck else "every comparison is a top-1 retrieval"


def predict(target: Tree, arch: Architecture, seq_len: int, *, gamma: float = 1.0) -> Prediction:
    """Predict whether ``arch`` approximates ``target`` efficiently at sequence length ``seq_len``.

    Returns whether it is efficient (parameter exponent independent of T), the exponent ``k`` of
    ``M ~ eps^{-k}`` at this ``seq_len`` (use :meth:`Prediction.cost` for ``M(eps)``), and the
    bottleneck (which node could not be scheduled, and why).
    """
    if not isinstance(gamma, numbers.Real) or isinstance(gamma, bool) or not gamma > 0:
        raise ValueError(f"gamma = {gamma!r} must be a positive number")
    gamma = float(gamma)
    schedule = find_schedule(target, arch, seq_len)
    T, d, E = int(seq_len), arch.input_dim, arch.embed_dim
    base = max(1.0, gamma)
    parts: list[tuple[float, str, str]] = [(base, "retrieval", f"retrieval max(1, gamma) = {base:g}")]
    for p in schedule.placements.values():
        node = target.info[p.index].node
        if isinstance(node, Positions):
            m = len(node.positions)
            k, reg = cost_law_exponent(m, d, E, gamma)
            parts.append((k, "specific", f"specific positions |P| d = {m * d} <= E = {E}: memorisation 1 + gamma = {k:g}"
                          if reg == "memorisation" else f"specific positions max(1 + gamma, |P| d/E - 1) = {k:.3g}"))
    reference, ref_exp = "", None
    bottleneck_parts = []
    for b in schedule.bottlenecks:
        node = target.info[b.index].node
        if b.kind == "rank":
            n = E / min(arch.heads)
            k = (T - node.rank - 1) / (n + 1)
            bottleneck_parts.append((k, "theorem 2", f"Theorem 2 (T - k - 1)/(n + 1) = ({T} - {node.rank} - 1)/({n:g} + 1) = {k:.3g}"))
            reference = "InfoFlow Theorem 2 (k-th largest, single layer; seed form)"
        else:
            k, reg = cost_law_exponent(T, d, E, gamma)
            bottleneck_parts.append((k, reg, f"aggregation, memorisation regime T d = {T * d} <= E = {E}: 1 + gamma = {k:g}"
                                     if reg == "memorisation" else f"aggregation max(1 + gamma, T d/E - 1) = max({1 + gamma:g}, {T}*{d}/{E} - 1) = {k:.3g}"))
    parts += bottleneck_parts
    exponent = max(p[0] for p in parts)
    if bottleneck_parts:
        regime = max(bottleneck_parts, key=lambda p: p[0])[1]
    else:
        regime = max(parts, key=lambda p: p[0])[1]
    uniq = list(dict.fromkeys(p[2] for p in parts))
    formula = uniq[0] if len(uniq) == 1 else "max(" + "; ".join(uniq) + f") = {exponent:.3g}"
    if schedule.bottlenecks and arch.n_layers == 1 and _is_plain_retrieval(target):
        D, h = len(target.terms), arch.heads[0]
        ref_exp = p1_single_layer_exponent(T, h, D, E / h)
        reference = f"P1 single-layer bound, s = h = {h} < D = {D}: (T/4 - s - D + 1)/((n+1)s + 1) - 1"
    elif schedule.bottlenecks and any(b.kind == "depth" for b in schedule.bottlenecks):
        reference = "InfoFlow Theorem 1 (depth separation): k linear in T for one layer, constants unknown"
    return Prediction(efficient=schedule.feasible, exponent=float(exponent), regime=regime,
                      bottleneck=schedule.bottlenecks[0] if schedule.bottlenecks else None,
                      bottlenecks=schedule.bottlenecks, formula=formula, gamma=gamma, seq_len=T,
                      schedule=schedule, reference_exponent=ref_exp, reference=reference)


def _is_plain_retrieval(tree: Tree) -> bool:
    """Every term one rank-1 order-1 reduction (P1's generalized D-retrieval form)."""
    return all(isinstance(t, Reduction) and t.rank == 1 and t.order == 1 and not t.nodes() for t in tree.terms)
