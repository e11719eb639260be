"""Chapter 06 (``06_infoflow_framework``): the framework of InfoFlow (Yu, Jiang, Bao, Li 2026, arXiv 2605.17930),
reconstructed from secondary summaries, and of its predecessor on head count (P1: Yu et al. 2026, arXiv 2510.06662),
as the library :mod:`transformer_theory.infoflow` implements it.

:func:`analyse` computes everything the notebook shows, checks and records (:class:`FrameworkAnalysis`): the
comparison statistics of the papers' targets, the information sets of worked examples (a)-(c), the exponent curves,
the prediction table against the papers (the calibration set), a reader's own target, its plain rewrites and the
k-hop pointer chase's fewest layers; :func:`verdicts` gives the chapter's claim. The notebook only displays them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from transformer_theory.chapters.computed import InfoFlowFrameworkParameters
from transformer_theory.chapters.parameters import store
from transformer_theory.chapters.verdicts import Claim
from transformer_theory.infoflow import (Architecture, Bilinear, ComparisonStats, Linear, Propagation, Reduction, Tree,
                                         comparison_capacity, comparison_stats, k_hop, kth_largest, masked_kth_largest,
                                         max_retrieval, min_pairwise_dot, minimal_depth, pairwise_max, predict,
                                         propagate, specific_positions, triangle_center)
from transformer_theory.infoflow.reference import missing_head_costs, prediction_table

__all__ = ["CAPACITY_HEADS", "CAPACITY_TS", "EXPONENT_TS", "HOPS", "OWN_HEADS", "POSITIONS_T", "REWRITE_HEADS",
           "FrameworkAnalysis", "Rewrite", "analyse", "exponent_curves", "own_targets", "verdicts"]

#: The sequence lengths of worked example (b)'s comparison count against the models' query-key comparisons.
CAPACITY_TS = (4, 8, 16, 32, 64, 128)
#: The architectures (E = 48, d = 2) whose query-key comparisons example (b) draws.
CAPACITY_HEADS = ((2, 2), (4, 4), (8, 8, 8, 8))
#: The sequence length of worked example (c) (the paper's §4.4 experiment).
POSITIONS_T = 10
#: The sequence lengths of the exponent curves.
EXPONENT_TS = (8, 16, 32, 64, 128, 256)
#: The architectures on which the reader's own target is predicted.
OWN_HEADS = ((1,), (4,), (1, 1), (2, 2))
#: What the rule predicts on them (one layer cannot, two can).
OWN_EXPECTED = ["inefficient", "inefficient", "efficient", "efficient"]
#: The architectures on which a target and its rewrite are compared.
REWRITE_HEADS = ((2,), (1, 1))
#: The numbers of hops of the pointer chase ``k_hop(k)``.
HOPS = (1, 2, 4, 8, 16, 32)


def _targets() -> dict[str, Tree]:
    """The papers' targets as comparison trees, by the name the statistics table gives them."""
    return {"max_retrieval(D=4)": max_retrieval(4), "pairwise_max(D=3)": pairwise_max(3),
            "min_pairwise_dot": min_pairwise_dot(), "kth_largest(k=2)": kth_largest(2),
            "specific_positions": specific_positions((1, 2, 3)), "triangle_center": triangle_center()}


def exponent_curves(embed_dim: int) -> dict[str, tuple[Tree, Architecture]]:
    """The (target, architecture) of each exponent curve, by its legend."""
    return {
        "min_pairwise_dot, L=1, h=4": (min_pairwise_dot(), Architecture((4,), embed_dim, 4)),
        "min_pairwise_dot, L=2, (1,1)": (min_pairwise_dot(), Architecture((1, 1), embed_dim, 4)),
        "kth_largest k=2, L=1, h=1": (kth_largest(2), Architecture((1,), embed_dim, 4)),
        "kth_largest k=1, L=1, h=1": (kth_largest(1), Architecture((1,), embed_dim, 4)),
        "max_retrieval D=4, L=1, h=3": (max_retrieval(4), Architecture((3,), embed_dim, 4)),
        "triangle_center, (4,4), E=48": (triangle_center(), Architecture((4, 4), 48, 2)),
    }


#: The curves whose exponent stays at max(1, γ) (every comparison a top-1 retrieval) and those that grow with T.
FLAT_CURVES = ("min_pairwise_dot, L=2, (1,1)", "kth_largest k=1, L=1, h=1")
GROWING_CURVES = ("min_pairwise_dot, L=1, h=4", "kth_largest k=2, L=1, h=1", "max_retrieval D=4, L=1, h=3")


def own_targets(seed: int) -> tuple[Tree, Tree, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """The reader's target ``b^T x(s*(t*))`` (the notebook's worked example), the same function with the selection
    of t* shifted by a nested minimum, and their parameters ``(a, b, A)`` drawn from ``default_rng(seed)``."""
    rng = np.random.default_rng(seed)
    a, b = rng.normal(0.0, 0.5, size=(2, 4))
    A = rng.normal(0.0, 0.5, size=(4, 4))
    partner = Reduction("max", "s", Bilinear("s", "t", A), value=Linear("s", b), label="s")
    own = Tree([Reduction("max", "t", Linear("t", a), value=partner, label="t")], input_dim=4,
               name="partner_of_best", description="b^T x(s*(t*))")
    shift = Reduction("min", "r", Linear("r", b), label="r")
    partner_again = Reduction("max", "s", Bilinear("s", "t", A), value=Linear("s", b), label="s")
    shifted = Tree([Reduction("max", "t", Linear("t", a) + shift, value=partner_again, label="t")], input_dim=4,
                   name="partner_of_best, shifted")
    return own, shifted, (a, b, A)


@dataclass(frozen=True)
class Rewrite:
    """A target and a plain rewrite of it predicted on one architecture: ``(efficient, exponent)`` of each."""

    target: str
    rewritten: str
    heads: tuple[int, ...]
    first: tuple[bool, float]
    second: tuple[bool, float]

    def row(self) -> dict[str, Any]:
        """The row of the notebook's rewrite table."""
        return {"target": self.target, "rewritten": self.rewritten, "heads": list(self.heads),
                "verdicts": f"{self.first[0]} / {self.second[0]}",
                "exponents": f"{self.first[1]:.3g} / {self.second[1]:.3g}"}


def _close(ours: np.ndarray, expected: np.ndarray) -> bool:
    """``np.testing.assert_allclose``'s test (relative 1e-7, shapes equal)."""
    ours, expected = np.asarray(ours), np.asarray(expected)
    return ours.shape == expected.shape and bool(np.allclose(ours, expected, rtol=1e-7, atol=0.0))


@dataclass(frozen=True)
class FrameworkAnalysis:
    """Everything chapter 06 shows, checks and records, computed by :func:`analyse`.

    The samples (``pairwise_sample``, ``flow_sample``, ``triangle_sample``, ``positions_sample``, ``own_sample``) are
    drawn in this order from one ``default_rng(seed)``; ``n_judged`` and ``n_agree`` are counted from
    ``prediction_rows`` (the configurations the papers judged, and those where the prediction agrees).
    """

    params: InfoFlowFrameworkParameters
    stats: dict[str, ComparisonStats]
    stats_rows: list[dict[str, Any]]
    pairwise_sample: np.ndarray
    pairwise_sample_values: np.ndarray
    prop_22: Propagation
    prop_12: Propagation
    flow_sample: np.ndarray
    prop_tc: Propagation
    triangle_sample: np.ndarray
    comparison_numbers: list[int]
    capacities: dict[tuple[int, ...], list[int]]
    prop_sp: Propagation
    positions_sample: np.ndarray
    nope_message: str | None
    exponents: dict[str, list[float]]
    prediction_rows: list[dict[str, Any]]
    missing_head_costs: dict[int, float]
    own_sample: np.ndarray
    own_values: np.ndarray
    own_brute_force: np.ndarray
    own_rows: list[dict[str, Any]]
    own_propagation: Propagation
    shifted_values: np.ndarray
    masked_values: np.ndarray
    kth_values: np.ndarray
    rewrites: tuple[Rewrite, ...]
    k_hop_depths: dict[int, int]
    n_judged: int = field(init=False)
    n_agree: int = field(init=False)

    def __post_init__(self) -> None:
        judged = self.judged
        store(self, "n_judged", len(judged))
        store(self, "n_agree", sum(bool(r["agrees"]) for r in judged))

    @property
    def judged(self) -> list[dict[str, Any]]:
        """The rows of the prediction table that the papers judged."""
        return [r for r in self.prediction_rows if r["agrees"] is not None]

    @property
    def rewrite_rows(self) -> list[dict[str, Any]]:
        return [r.row() for r in self.rewrites]

    def failures(self) -> list[str]:
        """The chapter's checks that fail (none: every claim of the notebook holds), each described."""
        p, prop_22, prop_12, tc, sp = self.params, self.prop_22, self.prop_12, self.prop_tc, self.prop_sp
        floor = max(1.0, p.gamma)
        bottleneck = prop_12.bottlenecks[0] if prop_12.bottlenecks else None
        checks = [
            (self.stats["triangle_center"].order == 3, "the triangle center has comparison order 3"),
            (self.stats["pairwise_max(D=3)"].dimension == {1: 3, 2: 3},
             "pairwise_max(D=3) has comparison dimension 3 at both levels"),
            (prop_22.template(1) == {"t", "s1*(t)", "s2*(t)"}, "(a) with heads (2, 2), I(t,1) = {t, s1*(t), s2*(t)}"),
            ({"t1*", "s1*(t1*)", "t2*", "s2*(t2*)"} <= prop_22.labels("CLS", 2),
             "(a) with heads (2, 2), I(CLS,2) holds both maximising pairs"),
            ("aggregation" in prop_12.modes("CLS", 2), "(a) with heads (1, 2), the CLS token aggregates at layer 2"),
            (bottleneck is not None and (bottleneck.label, bottleneck.kind) == ("s2", "capacity"),
             "(a) with heads (1, 2), the bottleneck is the second inner maximum s2, for lack of capacity"),
            ([s.mode for s in tc.steps] == ["aggregation"], "(b) the triangle center is one global aggregation"),
            (tc.labels("CLS", 2) == {str(t) for t in range(1, p.seq_len + 1)}, "(b) I(CLS,2) holds every position"),
            (sp.labels("CLS", 1) == {"1", "2", "3"} and sp.modes("CLS", 1) == ["specific"],
             "(c) one head with positional encoding reads I(CLS,1) = {1, 2, 3} by a specific-position step"),
            (self.nope_message is not None and "positional=True" in self.nope_message,
             "(c) without positional encoding the prediction is refused with an error naming positional=True"),
        ]
        checks += [(self.exponents[name] == [floor] * len(EXPONENT_TS),
                    f"the exponent of {name} stays at max(1, gamma) = {floor:g}") for name in FLAT_CURVES]
        checks += [(ks[-1] > ks[0] and ks[-1] > 3, f"the exponent of {name} grows with T beyond 3")
                   for name in GROWING_CURVES for ks in [self.exponents[name]]]
        disagree = [f"{r['target']} with heads {r['heads']} at T = {r['T']}" for r in self.judged if not r["agrees"]]
        checks += [
            (not disagree, "the prediction agrees with the papers on every judged configuration"
             + (f" (it does not on {'; '.join(disagree)})" if disagree else "")),
            (_close(self.own_values, self.own_brute_force),
             "the reader's own target evaluates to b^T x(s*(t*)) by brute force"),
            ([r["predicted"] for r in self.own_rows] == OWN_EXPECTED,
             f"the reader's own target is predicted {', '.join(OWN_EXPECTED)} on heads "
             f"{', '.join(map(str, OWN_HEADS))}"),
            (_close(self.shifted_values, self.own_values),
             "the shifted rewrite of the own target is the same function"),
            (_close(self.masked_values, self.kth_values),
             "masked_kth_largest(3) is the same function as kth_largest(3)"),
        ]
        checks += [(r.first == r.second, f"{r.target} and its rewrite {r.rewritten} get the same verdict and exponent "
                    f"with heads {r.heads}") for r in self.rewrites]
        checks.append((all(self.k_hop_depths[k] == int(np.ceil(np.log2(k + 2))) for k in HOPS),
                       "the k-hop pointer chase needs ceil(log2(k + 2)) layers of one head"))
        return [what for ok, what in checks if not ok]

    def values(self) -> dict[str, Any]:
        """The chapter's key numbers, by the names its results file records."""
        return {"prediction_table": self.prediction_rows, "n_configurations": len(self.prediction_rows),
                "n_agree_with_papers": self.n_agree, "n_judged": self.n_judged,
                "paper_missing_head_costs": self.missing_head_costs, "own_target_predictions": self.own_rows,
                "k_hop_minimal_depth": self.k_hop_depths}


def _stats_row(name: str, tree: Tree, st: ComparisonStats) -> dict[str, Any]:
    return {"target": name, "formula": tree.description, "order": st.order, "dimension per level": str(st.dimension),
            "depth": st.depth, "comparison number": st.number_formula, f"at T={st.seq_len}": st.number}


def _own_row(heads: tuple[int, ...], own: Tree, p: InfoFlowFrameworkParameters) -> dict[str, Any]:
    pred = predict(own, Architecture(heads, p.embed_dim, 4), p.seq_len, gamma=p.gamma)
    b = pred.bottleneck
    return {"heads": list(heads), "predicted": "efficient" if pred.efficient else "inefficient",
            "exponent": pred.exponent, "regime": pred.regime,
            "bottleneck": "" if b is None else f"{b.kind}: {b.reason}"}


def _rewrite(first: Tree, second: Tree, heads: tuple[int, ...], p: InfoFlowFrameworkParameters) -> Rewrite:
    p1, p2 = (predict(t, Architecture(heads, p.embed_dim, 4), p.seq_len, gamma=p.gamma) for t in (first, second))
    return Rewrite(first.name, second.name, heads, (p1.efficient, p1.exponent), (p2.efficient, p2.exponent))


def _refusal(arch: Architecture) -> str | None:
    """The error that refuses specific positions on ``arch`` (``None``: predicted, not refused)."""
    try:
        predict(specific_positions((1, 2, 3)), arch, POSITIONS_T)
    except ValueError as exc:
        return str(exc)
    return None


def analyse(p: InfoFlowFrameworkParameters) -> FrameworkAnalysis:
    """Chapter 06's analysis at the parameters ``p``: statistics, worked examples, exponent curves, the prediction
    table, the own target, its rewrites and the k-hop depths (no training: the rule is computed, not fitted)."""
    T, E, rng = p.seq_len, p.embed_dim, np.random.default_rng(p.seed)
    trees = _targets()
    stats = {name: comparison_stats(tree, T) for name, tree in trees.items()}
    pairwise_sample = trees["pairwise_max(D=3)"].sample_inputs(4, T, rng)
    prop_22 = propagate(pairwise_max(2), Architecture((2, 2), embed_dim=E, input_dim=4), T)
    prop_12 = propagate(pairwise_max(2), Architecture((1, 2), embed_dim=E, input_dim=4), T)
    flow_sample = pairwise_max(2).sample_inputs(1, T, rng)[0]
    prop_tc = propagate(triangle_center(), Architecture((4, 4), embed_dim=48, input_dim=2), T)
    triangle_sample = triangle_center().sample_inputs(1, T, rng)[0]
    prop_sp = propagate(specific_positions((1, 2, 3)), Architecture((1,), embed_dim=16, input_dim=2, positional=True),
                        POSITIONS_T)
    positions_sample = specific_positions((1, 2, 3)).sample_inputs(1, POSITIONS_T, rng)[0]
    own, shifted, (a, b, A) = own_targets(p.seed)
    own_sample, own_values = own.sample(256, T, rng)
    t_star = np.argmax(own_sample @ a, axis=1)
    brute = np.array([x[np.argmax(x @ A @ x[t])] @ b for x, t in zip(own_sample, t_star)])
    masked = masked_kth_largest(3)
    return FrameworkAnalysis(
        params=p, stats=stats, stats_rows=[_stats_row(name, trees[name], st) for name, st in stats.items()],
        pairwise_sample=pairwise_sample, pairwise_sample_values=trees["pairwise_max(D=3)"](pairwise_sample),
        prop_22=prop_22, prop_12=prop_12, flow_sample=flow_sample, prop_tc=prop_tc, triangle_sample=triangle_sample,
        comparison_numbers=[stats["triangle_center"].number_at(t) for t in CAPACITY_TS],
        capacities={h: [comparison_capacity(Architecture(h, 48, 2), t) for t in CAPACITY_TS] for h in CAPACITY_HEADS},
        prop_sp=prop_sp, positions_sample=positions_sample, nope_message=_refusal(Architecture((1,), 16, 2)),
        exponents={name: [predict(tree, arch, t, gamma=p.gamma).exponent for t in EXPONENT_TS]
                   for name, (tree, arch) in exponent_curves(E).items()},
        prediction_rows=prediction_table(eps=p.eps, gamma=p.gamma), missing_head_costs=missing_head_costs(),
        own_sample=own_sample, own_values=own_values, own_brute_force=brute,
        own_rows=[_own_row(h, own, p) for h in OWN_HEADS],
        own_propagation=propagate(own, Architecture((1, 1), E, 4), T),
        shifted_values=shifted(own_sample), masked_values=masked(own_sample), kth_values=kth_largest(3)(own_sample),
        rewrites=tuple(_rewrite(first, second, h, p) for first, second in ((own, shifted), (kth_largest(3), masked))
                       for h in REWRITE_HEADS),
        k_hop_depths={k: minimal_depth(k_hop(k), 1, E, 4 * T) for k in HOPS})


def verdicts(a: FrameworkAnalysis) -> list[Claim]:
    """Chapter 06's claim: the calculator's predictions against the papers' observed (in)efficiencies (the calibration
    set, so agreement is consistency by construction, not a test)."""
    return [Claim(
        "06_infoflow_framework", "InfoFlow, framework (reconstructed)", "information sets and propagation modes "
        "predict which configurations are efficient", "summaries", "the papers' observed (in)efficiencies",
        f"{a.n_agree} of {a.n_judged} configurations agree",
        "consistent by construction" if a.n_agree == a.n_judged else "not observed",
        "the calculator is this book's reconstruction of InfoFlow's rules, calibrated on these very configurations: "
        "agreement here is not a test (the held-out test is chapter 12's row)")]
