"""The held-out suite: configurations the prediction rule was not calibrated on, predicted before training.

Chapter 06's agreement table (:mod:`~transformer_theory.infoflow.reference`) is the *calibration
set*: the configurations whose reported outcomes the reconstructed rule was built to reproduce, and it
covers verdicts only. This module fixes a second set, chosen to test the rule where it was not fitted:
new trees (nested and mixed reductions, unevenly spread reductions, pointer chases, positions plus
retrieval, additive shifts), and embedding dimensions around ``T0 d`` where the exponent, not only the
verdict, is the claim. Every target is evaluable (``tree.sample``), has a scalar output and fits a small
CPU-trainable transformer with CLS readout (``d = 4``, ``T <= 32``, ``<= 3`` layers, ``E <= 48``).

The predictions and the **observation criterion** are written to ``results/book/12_predictions.json``
(:func:`transformer_theory.chapters.predictions.write_predictions`, ``python -m
transformer_theory.chapters.predictions``) and committed before any network is trained; chapter 12
(``12_predictions_vs_training``) compares them with trained networks.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from transformer_theory.checks import positive_real
from transformer_theory.infoflow import targets
from transformer_theory.infoflow.architecture import Architecture
from transformer_theory.infoflow.efficiency import EFFICIENCY, SIBLING_GAP, observed_efficient
from transformer_theory.infoflow.prediction import predict
from transformer_theory.infoflow.trees import Bilinear, Custom, Linear, Positions, Reduction, Tree

__all__ = ["HeldOut", "CRITERION", "TREES", "configurations", "predictions",
           "exponent_claim_holds", "scoreboard", "agreement", "predictions_document", "PREDICTIONS_FILE"]

#: Where the predictions are committed, relative to the repository root.
PREDICTIONS_FILE = Path("results") / "book" / "12_predictions.json"

#: Accuracy at which ``log10_params`` is reported, and the FFN exponent gamma of the predictions.
EPS, GAMMA = 1e-3, 1.0

#: The observation criterion, fixed before any training (thresholds informed by the CPU training runs
#: of the intrinsic-dimension and depth-separation targets: full-head models reached 2e-3 to 8e-3,
#: models missing a head stayed at 1e-2 to 3e-2, one-layer depth-separation models at 0.2 to 0.6).
CRITERION: dict[str, Any] = {
    "statistic": ("best validation NMSE: the minimum over seeds (at least 2) and checkpoints of "
                  "mean((y_hat - y)^2) / Var(y) on at least 4096 fresh samples from the target's input "
                  "distribution, at the configuration's embedding dimension E"),
    **EFFICIENCY,  # nmse_threshold 1e-2, max_growth 4: the book's criterion is this one
    "efficient_if": ("observed efficient iff the best validation NMSE at the largest sequence length is at most "
                     "nmse_threshold AND at most max_growth times the best validation NMSE at the smallest "
                     "sequence length; otherwise observed inefficient"),
    "exponent_gap": 1.0,
    "exponent_if": ("for a configuration with model_sizes, at every sequence length and for every pair of model "
                    "sizes whose predicted exponents differ by at least exponent_gap, the size with the larger "
                    "predicted exponent must have the larger best validation NMSE; the exponent claim is "
                    "observed iff every such pair agrees (no pair: nothing claimed)"),
    "agrees_if": "a configuration agrees iff observed efficient == predicted efficient (and, with model_sizes, "
                 "the exponent claim is observed)",
}


# ----------------------------------------------------------------------------------------------
# the held-out targets (d = 4, scalar output); fixed random parameters iid N(0, 1/d) from seed 7
# ----------------------------------------------------------------------------------------------
def _params(n: int, shape: tuple[int, ...] = (4,), seed: int = 7) -> np.ndarray:
    return np.random.default_rng(seed).normal(0.0, 0.5, size=(n,) + shape)


def mixed_orders() -> Tree:
    """``max_t a^T x(t) + min_t max_s x(s)^T B x(t)``: an order-1 term beside a nested order-2 term."""
    (a,), (B,) = _params(1), _params(1, (4, 4), seed=8)
    nested = Reduction("min", "u", Reduction("max", "s", Bilinear("s", "u", B), label="s"), label="u")
    return Tree([Reduction("max", "t", Linear("t", a), label="t"), nested], input_dim=4, name="mixed_orders",
                description="max_t a^T x(t) + min_t max_s x(s)^T B x(t)")


def max_min_pairwise() -> Tree:
    """``max_t min_s x(s)^T A x(t)``: two nested reductions of opposite kind."""
    (A,) = _params(1, (4, 4), seed=9)
    return Tree([Reduction("max", "t", Reduction("min", "s", Bilinear("s", "t", A), label="s"), label="t")],
                input_dim=4, name="max_min_pairwise", description="max_t min_s x(s)^T A x(t)")


def uneven_pair_sum() -> Tree:
    """``max_t [max_s x(s)^T A1 x(t) + max_s x(s)^T A2 x(t)]``: two reductions per token, one above them."""
    A1, A2 = _params(2, (4, 4), seed=10)
    inner = [Reduction("max", "s", Bilinear("s", "t", A), label=f"s{i}") for i, A in enumerate((A1, A2), 1)]
    return Tree([Reduction("max", "t", inner[0] + inner[1], label="t")], input_dim=4, name="uneven_pair_sum",
                description="max_t [max_s x(s)^T A1 x(t) + max_s x(s)^T A2 x(t)]")


def positions_plus_max() -> Tree:
    """``b^T (x(1) + x(2)) + max_t a^T x(t)``: a fixed-position read beside a retrieval (needs PE)."""
    a, b = _params(2, seed=11)
    return Tree([Positions((1, 2), lambda toks: toks.sum(axis=1) @ b), Reduction("max", "t", Linear("t", a))],
                input_dim=4, name="positions_plus_max", description="b^T (x(1) + x(2)) + max_t a^T x(t)")


def split_positions() -> Tree:
    """``(b^T x(1)) (b^T x(2)) + tanh(b^T x(3))``, written as three Positions nodes (one head reads them)."""
    (b,) = _params(1, seed=12)
    nodes = [Positions((p,), lambda toks: toks[:, 0] @ b, label=f"P{p}") for p in (1, 2, 3)]
    return Tree(nodes, combine=lambda v: v[0] * v[1] + np.tanh(v[2]), input_dim=4, name="split_positions",
                description="(b^T x(1)) (b^T x(2)) + tanh(b^T x(3))")


def shifted_max() -> Tree:
    """``max_t [a^T x(t) + min_s b^T x(s)]``: a closed reduction nested additively in a score."""
    a, b = _params(2, seed=13)
    return Tree([Reduction("max", "t", Linear("t", a) + Reduction("min", "s", Linear("s", b), label="s"),
                           label="t")], input_dim=4, name="shifted_max",
                description="max_t [a^T x(t) + min_s b^T x(s)]")


def position_gated() -> Tree:
    """``max_t (b^T x(1)) (a^T x(t))``: the sign of a fixed position's content decides max or min (needs PE)."""
    a, b = _params(2, seed=14)
    gate = Positions((1,), lambda toks: toks[:, 0] @ b, label="P")
    return Tree([Reduction("max", "t", Custom(lambda x, g: g * (x @ a), ("t", gate), name="gated"))], input_dim=4,
                name="position_gated", description="max_t (b^T x(1)) (a^T x(t))")


#: The suite's own trees by name (the other configurations use :mod:`~transformer_theory.infoflow.targets`);
#: a training run names its target this way (:class:`transformer_theory.training.RunConfig`).
TREES: dict[str, Callable[[], Tree]] = {f.__name__: f for f in (
    mixed_orders, max_min_pairwise, uneven_pair_sum, positions_plus_max, split_positions, shifted_max,
    position_gated)}


# ----------------------------------------------------------------------------------------------
# configurations
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class HeldOut:
    """One held-out (target, architecture) configuration.

    The target is ``target_name(**target_args)``, a tree of :data:`TREES` or a function of
    :mod:`~transformer_theory.infoflow.targets`. ``seq_lens`` are the sequence lengths to train at;
    ``model_sizes`` (embedding dimensions) give a model-size axis for configurations whose claim is the
    exponent.
    """

    name: str
    family: str
    target_name: str
    heads: tuple[int, ...]
    embed_dim: int
    seq_lens: tuple[int, ...] = (8, 16)
    positional: bool = False
    model_sizes: tuple[int, ...] = ()
    tests: str = ""
    target_args: Mapping[str, Any] = field(default_factory=dict)

    def target(self) -> Tree:
        """The target tree (the same object the predictions reason about and the training samples)."""
        function = TREES.get(self.target_name) or getattr(targets, self.target_name)
        return function(**self.target_args)

    @property
    def claim(self) -> str:
        return "exponent" if self.model_sizes else "verdict"

    def architecture(self, embed_dim: int | None = None) -> Architecture:
        return Architecture(self.heads, self.embed_dim if embed_dim is None else embed_dim, 4,
                            positional=self.positional)


NESTED, UNEVEN, POINTER, POSITIONS, SHIFT, SIZE = (
    "nested and mixed reductions", "unevenly spread reductions", "pointer chases", "positions plus retrieval",
    "additive shifts", "E around T0 d")


def configurations() -> list[HeldOut]:
    """The held-out suite: 25 configurations, none of them in chapter 06's calibration table."""
    return [
        HeldOut("mixed_orders (1,1)", NESTED, "mixed_orders", (1, 1), 32,
                tests="one head per layer serves a token query and a CLS query (capacity per query class)"),
        HeldOut("mixed_orders (3,)", NESTED, "mixed_orders", (3,), 48, tests="a nested pair needs two layers"),
        HeldOut("max_min_pairwise (1,1)", NESTED, "max_min_pairwise", (1, 1), 32, tests="min inside max, two layers"),
        HeldOut("max_min_pairwise (2,)", NESTED, "max_min_pairwise", (2,), 32, tests="one layer, two heads"),
        HeldOut("uneven_pair_sum (2,1)", UNEVEN, "uneven_pair_sum", (2, 1), 32,
                tests="two token reductions in layer 1, one CLS reduction in layer 2"),
        HeldOut("uneven_pair_sum (1,2)", UNEVEN, "uneven_pair_sum", (1, 2), 32,
                tests="the same number of heads, in the wrong layers"),
        HeldOut("max_retrieval(3) (1,2)", UNEVEN, "max_retrieval", (1, 2), 32, target_args={"D": 3},
                tests="three order-1 reductions over 1 + 2 heads"),
        HeldOut("max_retrieval(3) (1,1)", UNEVEN, "max_retrieval", (1, 1), 32, target_args={"D": 3},
                tests="L h = 2 < D = 3"),
        HeldOut("k_hop(2) (1,1)", POINTER, "k_hop", (1, 1), 32, target_args={"k": 2},
                tests="pointer doubling: 2 hops in 2 layers (the CLS token follows a doubled pointer)"),
        HeldOut("k_hop(2) (2,)", POINTER, "k_hop", (2,), 32, target_args={"k": 2},
                tests="one layer cannot chase a pointer"),
        HeldOut("k_hop(3) (1,1)", POINTER, "k_hop", (1, 1), 32, target_args={"k": 3}, tests="3 hops need 3 layers"),
        HeldOut("k_hop(3) (1,1,1)", POINTER, "k_hop", (1, 1, 1), 32, target_args={"k": 3}, tests="3 hops in 3 layers"),
        HeldOut("kth_largest(2) (1,1)", POINTER, "kth_largest", (1, 1), 32, target_args={"k": 2},
                tests="Theorem 2 is a one-layer statement: the 2nd largest as a chase of 'next smaller'"),
        HeldOut("kth_largest(3) (1,1)", POINTER, "kth_largest", (1, 1), 32, target_args={"k": 3},
                tests="3rd largest in two layers"),
        HeldOut("kth_largest(4) (1,1)", POINTER, "kth_largest", (1, 1), 32, target_args={"k": 4},
                tests="4th largest needs three layers"),
        HeldOut("kth_largest(2) (2,)", POINTER, "kth_largest", (2,), 32, target_args={"k": 2},
                tests="Theorem 2, one layer with two heads"),
        HeldOut("positions_plus_max (2,)", POSITIONS, "positions_plus_max", (2,), 32, positional=True,
                tests="a specific-position head beside a retrieval head"),
        HeldOut("positions_plus_max (1,)", POSITIONS, "positions_plus_max", (1,), 32, positional=True,
                tests="one CLS head for two jobs"),
        HeldOut("split_positions (1,)", POSITIONS, "split_positions", (1,), 32, positional=True,
                tests="three Positions nodes are one specific-position head"),
        HeldOut("position_gated (1,1)", POSITIONS, "position_gated", (1, 1), 32, positional=True,
                tests="a fixed position read in layer 1 steers the retrieval in layer 2"),
        HeldOut("position_gated (2,)", POSITIONS, "position_gated", (2,), 32, positional=True,
                tests="the steered retrieval in one layer"),
        HeldOut("shifted_max (2,)", SHIFT, "shifted_max", (2,), 32,
                tests="an additive closed reduction runs beside the retrieval it shifts"),
        HeldOut("shifted_max (1,)", SHIFT, "shifted_max", (1,), 32, tests="one head for two jobs"),
        HeldOut("max_retrieval(2) (1,) size", SIZE, "max_retrieval", (1,), 32, target_args={"D": 2},
                seq_lens=(16, 32), model_sizes=(16, 32, 48),
                tests="aggregation: exponent T d/E - 1 falls with E (7, 3, 2 at T = 32; E = T0 d = 32 at T = 8)"),
        HeldOut("max_retrieval(2) (2,) size", SIZE, "max_retrieval", (2,), 32, target_args={"D": 2},
                seq_lens=(16, 32), model_sizes=(16, 32, 48),
                tests="efficient at every E: exponent 1, nothing claimed across sizes"),
    ]


def predictions(eps: float = EPS, gamma: float = GAMMA) -> list[dict[str, Any]]:
    """The calculator's predictions for every held-out configuration (JSON-serialisable).

    Per configuration: its description and, for every sequence length (and model size), the verdict,
    exponent, regime, formula, ``log10`` parameters at ``eps`` and the bottleneck.
    """
    eps, gamma = positive_real("eps", eps), positive_real("gamma", gamma)
    out = []
    for c in configurations():
        tree = c.target()
        rows = []
        for E in c.model_sizes or (c.embed_dim,):
            for T in c.seq_lens:
                p = predict(tree, c.architecture(E), T, gamma=gamma)
                b = p.bottleneck
                rows.append({"T": T, "E": E, "efficient": p.efficient, "exponent": round(p.exponent, 6),
                             "log10_params": round(p.log10_cost(eps), 6), "regime": p.regime,
                             "formula": p.formula, "bottleneck": "" if b is None else f"{b.kind}: {b.description}",
                             "reason": p.reason, "notes": list(p.notes)})
        verdicts = {r["efficient"] for r in rows}
        if len(verdicts) != 1:  # pragma: no cover - the verdict does not depend on T or E by construction
            raise AssertionError(f"{c.name}: the verdict changes with T or E")
        out.append({"name": c.name, "family": c.family, "target": tree.name, "formula": tree.description,
                    "d": tree.input_dim, "heads": list(c.heads), "E": c.embed_dim, "positional": c.positional,
                    "seq_lens": list(c.seq_lens), "model_sizes": list(c.model_sizes), "claim": c.claim,
                    "tests": c.tests, "predicted_efficient": verdicts.pop(), "predictions": rows})
    return out


def exponent_claim_holds(rows: list[Mapping[str, Any]], criterion: Mapping[str, Any] = CRITERION) -> bool | None:
    """The fixed criterion for a model-size axis: ``rows`` carry ``T``, ``E``, the predicted ``exponent``
    and the observed ``nmse``; ``None`` when no pair of sizes differs enough to claim anything."""
    judged = []
    for a in rows:
        for b in rows:
            if a["T"] == b["T"] and a["E"] < b["E"] and abs(a["exponent"] - b["exponent"]) >= criterion["exponent_gap"]:
                larger, smaller = (a, b) if a["exponent"] > b["exponent"] else (b, a)
                judged.append(larger["nmse"] > smaller["nmse"])
    return all(judged) if judged else None


def scoreboard(configs: Sequence[Mapping[str, Any]], nmse: Mapping[tuple[str, int, int], float | None],
               criterion: Mapping[str, Any] = CRITERION, max_gap: float = SIBLING_GAP) -> list[dict[str, Any]]:
    """Predicted against observed: one row per configuration, model size and sequence length.

    ``configs`` are entries of the predictions document (``predictions()`` or the committed file),
    ``nmse[(name, E, T)]`` the best validation NMSE (over seeds and checkpoints) at that size and length
    (``None``: every run there diverged; the criterion counts it as an infinite NMSE).
    Per configuration, ``observed_efficient`` applies the calibrated :func:`observed_efficient` at the
    configuration's own ``E`` (``verdict_E`` in every row): its siblings are the configurations of ``configs``
    on the same target at the same ``E`` (the runs of one budget), ``sibling_nmse`` their best NMSE at the row's
    ``E`` and ``T``, and a configuration must come within ``max_gap`` of it at its largest length;
    ``absolute_efficient`` is the committed ``criterion`` alone (where the two differ, the calibration, applied
    after the runs were read, changed the verdict). ``exponent_claim`` is :func:`exponent_claim_holds` over its
    model sizes (``None``: no size axis, or nothing claimed); ``agrees`` (and ``absolute_agrees``) needs the
    verdict to match and the exponent claim not to fail.
    """
    measured: dict[str, list[dict[str, Any]]] = {}
    sibling: dict[tuple[str, int, int], float] = {}  # (target, E, T) -> the best NMSE there
    for c in configs:
        measured[c["name"]] = []
        for p in c["predictions"]:
            key = (c["name"], p["E"], p["T"])
            if key not in nmse:
                raise ValueError(f"scoreboard: no NMSE for {c['name']!r} at E = {p['E']}, T = {p['T']}")
            value = math.inf if nmse[key] is None else nmse[key]
            measured[c["name"]].append({"T": p["T"], "E": p["E"], "exponent": p["exponent"], "nmse": nmse[key]})
            sibling[(c["target"], p["E"], p["T"])] = min(sibling.get((c["target"], p["E"], p["T"]), math.inf), value)
    rows = []
    for c in configs:
        judged = [{**m, "nmse": math.inf if m["nmse"] is None else m["nmse"]} for m in measured[c["name"]]]
        own = {m["T"]: m["nmse"] for m in judged if m["E"] == c["E"]}
        observed = observed_efficient(own, criterion, {T: sibling[(c["target"], c["E"], T)] for T in own}, max_gap)
        absolute = observed_efficient(own, criterion)
        claim = exponent_claim_holds(judged, criterion) if c["model_sizes"] else None
        rows += [{"name": c["name"], "target": c["target"], "heads": list(c["heads"]), "E": m["E"], "T": m["T"],
                  "verdict_E": c["E"], "predicted_efficient": c["predicted_efficient"], "exponent": m["exponent"],
                  "nmse": m["nmse"], "sibling_nmse": sibling[(c["target"], m["E"], m["T"])],
                  "observed_efficient": observed, "absolute_efficient": absolute, "exponent_claim": claim,
                  "agrees": observed == c["predicted_efficient"] and claim is not False,
                  "absolute_agrees": absolute == c["predicted_efficient"] and claim is not False}
                 for m in measured[c["name"]]]
    return rows


def agreement(rows: Sequence[Mapping[str, Any]], absolute: bool = False) -> dict[str, Any]:
    """Per configuration (not per row): how many agree, the rate, and the names of the disagreements (by the
    calibrated criterion, or with ``absolute`` by the committed criterion alone, ``absolute_agrees``)."""
    key = "absolute_agrees" if absolute else "agrees"
    verdicts: dict[str, bool] = {}
    for r in rows:
        if verdicts.setdefault(r["name"], r[key]) != r[key]:
            raise ValueError(f"scoreboard rows of {r['name']!r} disagree on {key!r}")
    if not verdicts:
        raise ValueError("agreement: no scoreboard rows")
    n_agree = sum(verdicts.values())
    return {"n_configurations": len(verdicts), "n_agree": n_agree, "rate": n_agree / len(verdicts),
            "disagreements": [name for name, ok in verdicts.items() if not ok]}


def predictions_document(eps: float = EPS, gamma: float = GAMMA) -> dict[str, Any]:
    """What ``chapters.predictions.write_predictions`` stores, without the provenance."""
    return {"description": ("InfoFlow calculator predictions for the held-out suite, written before any training "
                            "(chapter 12 compares them with trained networks)"),
            "eps": eps, "gamma": gamma, "criterion": CRITERION, "configurations": predictions(eps, gamma)}
