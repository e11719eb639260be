"""Predictions: is a target efficiently approximable by an architecture, and at which parameter cost?

Cost law (InfoFlow Theorem 3, as summarised): decoding information coupled from ``T0`` tokens into an
``E``-dimensional state costs ``M ~ eps^{-(T0 d/E - 1)}`` parameters (one summary writes
``eps^{-T0 d/E}``; the two agree up to one power of eps and we use the first). **The rule that
combines it with a schedule is a reconstruction** (see the book's page on how it reconstructs the
papers):

* every term scheduled by top-1 retrievals -> **efficient**, ``M ~ eps^{-max(1, gamma)}``, exponent
  independent of T; a scheduled specific-position read of ``|P|`` tokens adds the cost law with
  ``T0 = |P|``;
* a term that cannot be scheduled is computed by global aggregation: cost law with ``T0 = T``
  (exponent grows linearly with T); when ``T0 d <= E`` the state holds every token separately, the
  **memorisation regime** of P1 Theorem 2(3), cost ``eps^{-(1+gamma)}``: cheap at that T, but the
  exponent is no longer T-independent once ``T d > E`` (so ``efficient`` stays False). Beyond the
  memorisation regime we report ``max(1 + gamma, T0 d/E - 1)`` (see :func:`cost_law_exponent`);
* a k-th largest selection (k >= 2) in a **single layer** uses InfoFlow Theorem 2 (as summarised):
  ``Omega(eps^{-(T-k-1)/(n+1)})``, ``n`` the per-head dimension, floored at ``1 + gamma`` like every
  failed term. With two or more layers a k-th largest is a pointer chase the schedule judges like any
  other tree (:mod:`~transformer_theory.infoflow.canonical`).

For a fixed target, ``T``, ``d``, ``E`` and ``gamma`` an efficient prediction's exponent is never above
an inefficient one's: every failed term costs at least ``1 + gamma`` and at least the cost law of any
specific-position read it contains.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from transformer_theory.checks import positive_int, positive_real
from transformer_theory.infoflow.architecture import Architecture
from transformer_theory.infoflow.expression import parse_target
from transformer_theory.infoflow.schedule import Bottleneck, Schedule, find_schedule
from transformer_theory.infoflow.trees import Tree

__all__ = ["Prediction", "predict", "cost_law_exponent", "p1_single_layer_exponent", "theorem2_exponent",
           "minimal_depth"]


#: which regime names a tie between parts of equal exponent
_REGIME_PRIORITY = {"retrieval": 0, "specific": 1, "memorisation": 2, "aggregation": 3, "theorem 2": 4}


def cost_law_exponent(T0: int, d: int, E: int, gamma: float = 1.0) -> tuple[float, str]:
    """``(k, regime)`` with ``M ~ eps^{-k}`` for decoding ``T0`` coupled tokens of dimension ``d`` from
    an ``E``-dimensional state.

    ``T0 d <= E``: memorisation regime (P1 Theorem 2(3)), ``k = 1 + gamma``. Otherwise the cost law of
    InfoFlow Theorem 3 ``k = T0 d/E - 1``, floored at ``1 + gamma`` (a reconstruction: coupled decoding
    is never taken cheaper than the memorisation construction, so k does not decrease as T0 grows).
    """
    T0, d, E = positive_int("T0", T0), positive_int("d", d), positive_int("E", E)
    gamma = positive_real("gamma", gamma)
    if T0 * d <= E:
        return 1.0 + gamma, "memorisation"
    return max(1.0 + gamma, T0 * d / E - 1.0), "aggregation"


def p1_single_layer_exponent(T: int, h: int, D: int, n: float) -> float | None:
    """P1's single-layer lower-bound exponent for ``h = s < D`` heads (Theorem 2 of P1, verified):
    ``k = (T/4 - s - D + 1) / ((n + 1) s + 1) - 1``; ``None`` when ``k <= 0`` (the bound
    ``M = Omega(eps^{-k})`` then says nothing, which happens for short sequences)."""
    T, s, D = positive_int("T", T), positive_int("h", h), positive_int("D", D)
    n = positive_real("n", n)
    k = (T / 4 - s - D + 1) / ((n + 1) * s + 1) - 1
    return k if k > 0 else None


def theorem2_exponent(T: int, k: int, n: float) -> float | None:
    """InfoFlow Theorem 2 (as summarised): one layer retrieving the k-th largest score (k >= 2) needs
    ``Omega(eps^{-(T-k-1)/(n+1)})`` parameters; ``None`` when the exponent is ``<= 0`` (vacuous)."""
    T, k, n = positive_int("T", T), positive_int("k", k), positive_real("n", n)
    e = (T - k - 1) / (n + 1)
    return e if e > 0 else None


@dataclass(frozen=True)
class Prediction:
    """What :func:`predict` says about a target on an architecture at one sequence length.

    Attributes
    ----------
    efficient
        every term of the tree is scheduled by top-1 retrievals and specific-position reads (no global
        aggregation), so the exponent does not grow with T.
    exponent
        ``k`` in ``M ~ eps^{-k}`` (parameters for sup-norm accuracy ``eps``, up to constants) at
        ``seq_len``: the largest of the parts listed in ``formula``; never below ``max(1, gamma)``.
    regime
        the part that sets ``exponent``: ``"retrieval"`` (top-1 retrievals only, ``max(1, gamma)``),
        ``"specific"`` (a specific-position read of ``|P|`` tokens: cost law with ``T0 = |P|``),
        ``"memorisation"`` (a failed term aggregated while ``T d <= E``: ``1 + gamma``, cheap at this T
        only), ``"aggregation"`` (a failed term, cost law with ``T0 = T``: ``T d/E - 1``) or
        ``"theorem 2"`` (a k-th largest in one layer: ``(T - k - 1)/(n + 1)``).
    bottleneck, bottlenecks
        the first job that could not be scheduled, and one per failed term, with the reason.
    formula
        the parts and their arithmetic, in words.
    gamma
        the FFN's approximation exponent for the smooth parts of the target (P1's upper bound needs
        ``eps^{-gamma}`` parameters for them; gamma = 2 for a finite Barron norm); the default 1 gives
        the ``O(eps^{-1})`` of Theorem 1's two-layer construction.
    seq_len
        the sequence length T of the prediction.
    schedule
        the :class:`~transformer_theory.infoflow.schedule.Schedule`: its placements, and ``exact``,
        True when the search finished (the verdict is then the rule's), False when it stopped at its
        budget (an "inefficient" verdict is then not proved; ``notes`` says so).
    reference_exponent, reference
        an exponent from a proved bound of the papers that applies to this configuration (P1's
        single-layer lower bound when ``h < D``), or ``None``: no such bound, or it is vacuous (``<= 0``)
        at this T. ``reference`` names the result behind the verdict when there is one.
    notes
        remarks on the prediction: the search gave up; a k-th largest read as a k-th smallest.
    """

    efficient: bool
    exponent: float
    regime: str
    bottleneck: Bottleneck | None
    bottlenecks: tuple[Bottleneck, ...]
    formula: str
    gamma: float
    seq_len: int
    schedule: Schedule
    reference_exponent: float | None = None
    reference: str = ""
    notes: tuple[str, ...] = ()

    def cost(self, eps: float) -> float:
        """Predicted parameter count up to constants, ``eps^{-exponent}``, for ``0 < eps < 1``."""
        return 10.0 ** self.log10_cost(eps)

    def log10_cost(self, eps: float) -> float:
        """``log10`` of :meth:`cost`."""
        eps = positive_real("eps", eps)
        if eps >= 1:
            raise ValueError(f"eps must be an accuracy in (0, 1), got {eps!r}: the cost law M ~ eps^-k is a "
                             f"statement about small eps")
        return -self.exponent * math.log10(eps)

    @property
    def reason(self) -> str:
        return self.bottleneck.reason if self.bottleneck else "every comparison is a top-1 retrieval"

    def __repr__(self) -> str:
        verdict = "efficient" if self.efficient else "inefficient"
        return (f"Prediction({verdict}, M ~ eps^-{self.exponent:.3g} ({self.regime}), T={self.seq_len}, "
                f"{self.schedule.tree.name} on {self.schedule.arch}: {self.reason})")


def predict(target: Tree | str, arch: Architecture, seq_len: int, *, gamma: float = 1.0) -> Prediction:
    """Predict whether ``arch`` approximates ``target`` efficiently at sequence length ``seq_len``.

    ``target`` is a comparison tree, or a text :func:`~transformer_theory.infoflow.expression.parse_target`
    reads: a named target (``"pairwise_max(D=2)"``) or an expression (``"max_t a^T x(t) + max_s b^T x(s)"``,
    its parameters of dimension ``arch.input_dim``).

    Returns whether it is efficient (parameter exponent independent of T), the exponent ``k`` of
    ``M ~ eps^{-k}`` at this ``seq_len`` (use :meth:`Prediction.cost` for ``M(eps)``), and the
    bottleneck (which job could not be scheduled, and why); see :class:`Prediction` for every field.
    """
    gamma = positive_real("gamma", gamma)
    if isinstance(target, str):
        target = parse_target(target, arch.input_dim if isinstance(arch, Architecture) else 4)
    schedule = find_schedule(target, arch, seq_len)
    can = schedule.canonical
    T, d, E = schedule.seq_len, arch.input_dim, arch.embed_dim
    base = max(1.0, gamma)
    parts: list[tuple[float, str, str]] = [(base, "retrieval", f"retrieval max(1, gamma) = {base:g}")]
    for j in sorted({p.job for p in schedule.placements if p.mode == "specific"}):
        m = len(can.jobs[j].positions)
        k, reg = cost_law_exponent(m, d, E, gamma)
        parts.append((k, "specific", f"specific positions |P| d = {m * d} <= E = {E}: memorisation 1 + gamma = {k:g}"
                      if reg == "memorisation" else f"specific positions max(1 + gamma, |P| d/E - 1) = {k:.3g}"))
    reference, ref_exp = "", None
    failures = []
    for b in schedule.bottlenecks:
        job = can.jobs[b.job]
        if b.kind == "rank" and arch.n_layers == 1 and job.kind == "chain":
            n = E / arch.heads[0]
            t2 = theorem2_exponent(T, job.rank, n)
            k = max(1.0 + gamma, t2 or 0.0)
            failures.append((k, "theorem 2", f"Theorem 2, one layer: max(1 + gamma, (T - k - 1)/(n + 1)) = "
                             f"max({1 + gamma:g}, ({T} - {job.rank} - 1)/({n:g} + 1)) = {k:.3g}"))
            reference = "InfoFlow Theorem 2 (k-th largest in one layer, as summarised)"
        else:
            k, reg = cost_law_exponent(T, d, E, gamma)
            failures.append((k, reg, f"aggregation, memorisation regime T d = {T * d} <= E = {E}: 1 + gamma = {k:g}"
                             if reg == "memorisation" else
                             f"aggregation max(1 + gamma, T d/E - 1) = max({1 + gamma:g}, {T}*{d}/{E} - 1) = {k:.3g}"))
    parts += failures
    exponent = max(p[0] for p in parts)
    # the part with the largest exponent; at a tie the more specific statement (independent of term order)
    regime = max(failures or parts, key=lambda p: (p[0], _REGIME_PRIORITY[p[1]]))[1]
    uniq = list(dict.fromkeys(p[2] for p in parts))
    formula = uniq[0] if len(uniq) == 1 else "max(" + "; ".join(uniq) + f") = {exponent:.3g}"
    notes = list(can.notes)
    if schedule.bottlenecks and not schedule.exact:
        notes.append(f"the schedule search stopped after {schedule.steps} steps without finishing: an efficient "
                     f"schedule may exist that it did not find, so 'inefficient' is not proved")
    if schedule.bottlenecks and arch.n_layers == 1 and _plain_retrievals(schedule) is not None:
        D, h = _plain_retrievals(schedule), arch.heads[0]
        ref_exp = p1_single_layer_exponent(T, h, D, E / h)
        reference = f"P1 single-layer bound, s = h = {h} < D = {D}: (T/4 - s - D + 1)/((n+1)s + 1) - 1"
        if ref_exp is None:
            reference += f" is <= 0 at T = {T}: vacuous"
    elif any(b.kind == "depth" for b in schedule.bottlenecks):
        reference = "InfoFlow Theorem 1 (depth separation): k linear in T for one layer, constants unknown"
    return Prediction(efficient=schedule.feasible, exponent=float(exponent), regime=regime,
                      bottleneck=schedule.bottlenecks[0] if schedule.bottlenecks else None,
                      bottlenecks=schedule.bottlenecks, formula=formula, gamma=gamma, seq_len=T,
                      schedule=schedule, reference_exponent=ref_exp, reference=reference, notes=tuple(notes))


def _plain_retrievals(schedule: Schedule) -> int | None:
    """``D`` when every term is one closed order-1 retrieval (P1's generalized D-retrieval form)."""
    can = schedule.canonical
    jobs = set().union(*can.terms)
    for j in jobs:
        job = can.jobs[j]
        node = schedule.tree.info[job.representative].node
        if job.kind != "retrieval" or job.free or job.deps or getattr(node, "order", 0) != 1:
            return None
    return len(jobs)


def minimal_depth(target: Tree, heads_per_layer: int, embed_dim: int, seq_len: int, *,
                  positional: bool = False, max_layers: int = 16) -> int | None:
    """The fewest layers with ``heads_per_layer`` heads each for which ``target`` is predicted efficient
    at ``seq_len`` (``None`` if more than ``max_layers`` are needed)."""
    h, E = positive_int("heads_per_layer", heads_per_layer), positive_int("embed_dim", embed_dim)
    for L in range(1, positive_int("max_layers", max_layers) + 1):
        arch = Architecture((h,) * L, E, target.input_dim, positional=positional)
        if predict(target, arch, seq_len).efficient:
            return L
    return None

