"""The runs of chapter 13 (what it takes to train InfoFlow's mechanism), first part: the calibration of the
engine on the predecessor's head-count tables (Yu et al., ICLR 2026: P1 Table 2 and Table 5).

Before the book calls one of InfoFlow's phase transitions "not observed", the engine must show that it can
train a sharp retrieval where the predecessor did:

* **Head count, one layer** (P1 Table 2): ``Σ_{i≤D} max_t a_iᵀ x(t)``
  (:func:`~transformer_theory.infoflow.targets.max_retrieval`, D = 4), one layer of h heads of dimension
  ``head_dim`` (E = ``head_dim`` · h), FFN ``ffn_width``, at every T of ``seq_lens``, h ∈ ``heads``, seeds
  ``seeds``, ``steps`` steps on fresh samples. P1 reports a sharp fall of the NMSE at h = D.
* **Budget check**: the cells ``double_heads`` at T = ``double_seq_len`` (first seed) trained with twice the
  budget. The budget is sufficient where doubling it changes the best NMSE by less than
  :data:`~transformer_theory.chapters.budget.BUDGET_TOLERANCE`; otherwise the chapter says the cell was still learning.
* **Head count, two layers** (P1 Table 5): the same target, two layers of h heads each (``tl_heads``), width
  ``tl_embed_dim`` = 32 and per-head dimension ``tl_embed_dim // h`` (P1: 32/h), FFN ``tl_ffn_width``, T =
  ``tl_seq_len``. The transition is at L·h = D, i.e. between h = 1 and h = 2: the retrieved value is linear in
  the token, so two layers of D/2 heads suffice.

The criteria (:data:`CRITERIA`) and the prediction (:data:`PREDICTION`) were committed before any run of this
part was trained.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from transformer_theory.checks import seed_value
from transformer_theory.infoflow import targets
from transformer_theory.infoflow.reference import P1_SINGLE_LAYER_NMSE, P1_TWO_LAYER_NMSE_RANGE
from transformer_theory.chapters.budget import BUDGET_TOLERANCE, budget_change
from transformer_theory.chapters.experiment import (Experiment, ExperimentRun, Results, RunResult,
                                                    applicable, best_over_seeds, experiment_run, infoflow_model,
                                                    validation_curve)
from transformer_theory.chapters.intrinsic_dimension import prediction
from transformer_theory.chapters.parameters import (TrainingParameters, defaults, int_lists, param, positive_ints,
                                                    seed_lists, setting, store)
from transformer_theory.training.store import RunStore

__all__ = ["CRITERIA", "DEFAULTS", "EXPERIMENT", "OPTIONAL_PARTS", "PREDICTION",
           "CalibrationParameters", "budget_check_table", "calibration_runs", "claims",
           "head_count_table", "head_count_verdicts", "predictions", "runs", "tables", "two_layer_head_count_table",
           "two_layer_verdict", "validation_curves"]

#: The calibration's criteria, fixed before its runs: ``head_count``: at every T, best NMSE at h = D at most
#: ``max_nmse`` and best(h = D − 1) / best(h = D) at least ``min_ratio``; ``two_layer``: best NMSE at h = D/2 at
#: most ``max_nmse`` and best(h = D/2 − 1) / best(h = D/2) at least ``min_ratio`` (best: over at least three seeds).
CRITERIA: dict[str, dict[str, float]] = {"head_count": {"max_nmse": 1.5e-4, "min_ratio": 10.0},
                                         "two_layer": {"max_nmse": 2e-5, "min_ratio": 10.0}}

#: The prediction, committed with the criteria before the runs. What had been seen: exploratory runs of the
#: same engine and recipe at T = 16, seed 0 (30 000 steps; one layer h = 3 1.2e-3, h = 4 2.7e-6; two layers
#: h = 1 8.1e-4, h = 2 3.9e-6).
PREDICTION = ("one layer: the criteria are met at every T of the book profile (8, 16, 32), the NMSE at h = D "
              "growing with T but staying below 1.5e-4; the budget check finds h = 3 sufficient (a plateau) and "
              "h = 4 still learning (doubling lowers it by more than 1.5x). Two layers: the criteria are met, "
              "h = 2 near the exploratory 4e-6.")


#: The parts a profile may leave out with an empty list (its runs not yet trained there): the budget check
#: (``double_heads``) and the two-layer head count (``tl_heads``); the chapter names the parts it leaves out.
OPTIONAL_PARTS = ("double_heads", "tl_heads")


@dataclass(frozen=True)
class CalibrationParameters(TrainingParameters):
    """The chapter's parameters, the names of its notebook's ``parameters`` cell (the profiles override them): the
    shared training settings (:class:`~transformer_theory.chapters.parameters.TrainingParameters`) and the
    calibration's own; no ``train_size``: every run draws fresh samples at every step. Every value is checked on
    construction (``ValueError`` naming the parameter)."""

    D: int = param(4, "D of the one-layer target sum_{i<=D} max_t a_i^T x(t) (P1 Table 2)")
    heads: Sequence[int] = param((1, 2, 3, 4, 5), "head counts h of the one-layer models")
    seq_lens: Sequence[int] = param((8, 16, 32), "sequence lengths T of the one-layer runs")
    head_dim: int = param(8, "per-head dimension of the one-layer models (E = head_dim * h)")
    ffn_width: int = setting("ffn_width", 32, "hidden width of each FFN of the one-layer models")
    steps: int = setting("steps", 30000, "AdamW steps of each one-layer run")
    seeds: Sequence[int] = setting("seeds", (0, 1, 2), "seeds of each one-layer configuration (the best of them is "
                                                       "reported)")
    double_heads: Sequence[int] = param((3, 4), "the budget check: one-layer head counts trained again with twice the "
                                                "steps (empty: none)")
    double_seq_len: int = param(16, "sequence length T of the budget check")
    tl_heads: Sequence[int] = param((1, 2, 3, 4, 5), "head counts h of the two-layer models, P1 Table 5 (empty: none)")
    tl_seq_len: int = param(16, "sequence length T of the two-layer runs")
    tl_embed_dim: int = param(32, "width E of the two-layer models")
    tl_ffn_width: int = param(64, "hidden width of each FFN of the two-layer models")
    tl_steps: int = param(30000, "AdamW steps of each two-layer run")
    tl_seeds: Sequence[int] = param((0, 1, 2), "seeds of each two-layer configuration")
    target_seed: int = param(0, "seed of the targets' random vectors")

    def __post_init__(self) -> None:
        super().__post_init__()
        positive_ints(self, "D", "head_dim", "double_seq_len", "tl_seq_len", "tl_embed_dim", "tl_ffn_width",
                      "tl_steps")
        int_lists(self, "heads", "seq_lens")
        for name in OPTIONAL_PARTS:  # an empty list leaves the part out, and the chapter says so
            if isinstance(getattr(self, name), (list, tuple)) and not getattr(self, name):
                store(self, name, ())
            else:
                int_lists(self, name)
        seed_lists(self, "seeds", "tl_seeds")
        seed_value(self.target_seed, "target_seed")
        if self.tl_heads and max(self.tl_heads) > self.tl_embed_dim:
            raise ValueError(f"tl_heads: {max(self.tl_heads)} heads of dimension tl_embed_dim // h need "
                             f"tl_embed_dim >= h, got tl_embed_dim = {self.tl_embed_dim}")


#: The chapter's defaults as its notebook's parameters cell holds them (lists, not tuples).
DEFAULTS: dict[str, Any] = defaults(CalibrationParameters)


def _run(p: CalibrationParameters, part: str, heads: tuple[int, ...], embed_dim: int, head_dim: int,
         ffn_width: int, T: int, seed: int, steps: int) -> ExperimentRun:
    s = p.settings()
    model = infoflow_model(s, heads, embed_dim, head_dim, ffn_width)
    tags = {"part": part, "D": p.D, "h": heads[0], "layers": len(heads), "T": T, "seed": seed, "steps": steps}
    args = {"D": p.D, "d": 4, "seed": p.target_seed}
    return ExperimentRun(tags, experiment_run(s, model, "max_retrieval", args, T, seed, steps))


def calibration_runs(p: CalibrationParameters) -> list[ExperimentRun]:
    """Every run of the calibration, tagged ``part`` (``"head_count"``, ``"double_budget"``, ``"two_layer"``),
    ``D``, ``h`` (heads per layer), ``layers``, ``T``, ``seed`` and ``steps``."""
    one = [_run(p, "head_count", (h,), p.head_dim * h, p.head_dim, p.ffn_width, T, seed, p.steps)
           for T in p.seq_lens for h in p.heads for seed in p.seeds]
    double = [_run(p, "double_budget", (h,), p.head_dim * h, p.head_dim, p.ffn_width, p.double_seq_len,
                   p.seeds[0], 2 * p.steps) for h in p.double_heads]
    two = [_run(p, "two_layer", (h, h), p.tl_embed_dim, p.tl_embed_dim // h, p.tl_ffn_width, p.tl_seq_len, seed,
                p.tl_steps) for h in p.tl_heads for seed in p.tl_seeds]
    return one + double + two


def runs(parameters: Mapping[str, Any]) -> list[ExperimentRun]:
    """The chapter's runs (:func:`calibration_runs`) for its complete ``parameters`` (a dict)."""
    return calibration_runs(CalibrationParameters(**parameters))


def _part(results: Results, part: str) -> list[RunResult]:
    return [r for r in results if r.tags["part"] == part]


def _mean_std(values: dict[Any, float | None]) -> tuple[float | None, float | None]:
    finite = [v for v in values.values() if v is not None]
    return (float(np.mean(finite)), float(np.std(finite))) if finite else (None, None)


def head_count_table(results: Results, p: CalibrationParameters) -> list[dict[str, Any]]:
    """One row per (T, h) of the one-layer runs in ``results``: ``T``, ``h``, ``D``,
    ``nmse`` (best over seeds), ``mean`` and ``std`` over seeds, ``seed_nmse``, P1 Table 2's ``paper_nmse`` and
    ``paper_std`` (mean and standard deviation; ``None`` at a T or D it lacks) and the calculator's
    :func:`~transformer_theory.chapters.intrinsic_dimension.prediction`."""
    rows = []
    for row in best_over_seeds(_part(results, "head_count"), ignore=("steps",)):
        h, T = row["h"], row["T"]
        paper = P1_SINGLE_LAYER_NMSE.get(h, {}).get(T, (None, None)) if p.D == 4 else (None, None)
        mean, std = _mean_std(row["seed_nmse"])
        rows.append({"T": T, "h": h, "D": p.D, "nmse": row["nmse"], "mean": mean, "std": std,
                     "seed_nmse": row["seed_nmse"], "paper_nmse": paper[0], "paper_std": paper[1],
                     **prediction(targets.max_retrieval(p.D), (h,), p.head_dim * h, T)})
    return sorted(rows, key=lambda r: (r["T"], r["h"]))


def _verdict(best: dict[int, float | None], at: int, bars: dict[str, float]) -> dict[str, Any]:
    """The NMSE at ``at`` heads, the ratio of ``at − 1`` heads to it and whether both meet ``bars``."""
    full, missing = best.get(at), best.get(at - 1)
    ratio = None if full is None or missing is None or full <= 0 else missing / full
    met = None if ratio is None else bool(full <= bars["max_nmse"] and ratio >= bars["min_ratio"])
    return {"nmse": full, "nmse_missing": missing, "ratio": ratio, **bars, "met": met}


def head_count_verdicts(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per T of :func:`head_count_table` rows: the best NMSE at h = D, the ratio best(h = D − 1) / best(h = D) and
    ``met`` (:data:`CRITERIA` ``head_count``; ``None`` where a cell is missing)."""
    out = []
    for T in sorted({r["T"] for r in rows}):
        cells = {r["h"]: r["nmse"] for r in rows if r["T"] == T}
        D = next(r["D"] for r in rows if r["T"] == T)
        out.append({"T": T, "D": D, **_verdict(cells, D, CRITERIA["head_count"])})
    return out


def two_layer_head_count_table(results: Results, p: CalibrationParameters) -> list[dict[str, Any]]:
    """One row per h of the two-layer runs in ``results``: ``h``, ``T``, ``nmse`` (best over seeds), ``mean``,
    ``std``, ``seed_nmse`` and ``paper_nmse``, P1 Table 5's (min, max) over its sequence lengths (``None`` for an
    h it lacks or D ≠ 4)."""
    rows = []
    for row in best_over_seeds(_part(results, "two_layer"), ignore=("steps",)):
        mean, std = _mean_std(row["seed_nmse"])
        rows.append({"h": row["h"], "T": row["T"], "nmse": row["nmse"], "mean": mean, "std": std,
                     "seed_nmse": row["seed_nmse"],
                     "paper_nmse": P1_TWO_LAYER_NMSE_RANGE.get(row["h"]) if p.D == 4 else None})
    return sorted(rows, key=lambda r: r["h"])


def two_layer_verdict(rows: Sequence[dict[str, Any]], p: CalibrationParameters) -> dict[str, Any]:
    """The two-layer criterion (:data:`CRITERIA` ``two_layer``) on :func:`two_layer_head_count_table` rows: the
    transition at L·h = D, i.e. h = D/2 heads per layer (``ValueError`` for an odd D)."""
    if p.D % 2:
        raise ValueError(f"the two-layer transition L*h = D needs an even D, got D = {p.D}")
    return {"h": p.D // 2, **_verdict({r["h"]: r["nmse"] for r in rows}, p.D // 2, CRITERIA["two_layer"])}


def budget_check_table(results: Results, p: CalibrationParameters) -> list[dict[str, Any]]:
    """One row per doubled cell: ``h``, ``T``, ``seed``, ``nmse`` at ``steps`` and ``nmse_double`` at twice
    as many, their quotient ``change`` and ``sufficient`` (``change`` < :data:`~transformer_theory.chapters.budget.BUDGET_TOLERANCE`; ``None`` where
    a value is missing)."""
    base = {(r.tags["h"], r.tags["T"], r.tags["seed"]): r.best_nmse for r in _part(results, "head_count")}
    rows = []
    for r in _part(results, "double_budget"):
        cell = (r.tags["h"], r.tags["T"], r.tags["seed"])
        once, twice = base.get(cell), r.best_nmse
        rows.append({"h": cell[0], "T": cell[1], "seed": cell[2], "nmse": once, "nmse_double": twice,
                     **budget_change(once, twice)})
    return sorted(rows, key=lambda r: (r["T"], r["h"]))


def validation_curves(results: Results, part: str, heads: Sequence[int], T: int | None = None) -> list[dict[str, Any]]:
    """The validation curves (:func:`~transformer_theory.chapters.experiment.validation_curve`, grouped by
    ``"h = …"``) of the runs of ``part`` with ``heads`` per layer (at ``T`` if given)."""
    return [validation_curve(r, f"h = {r.tags['h']}") for r in _part(results, part)
            if r.tags["h"] in heads and (T is None or r.tags["T"] == T)]


# ----------------------------------------------------------------------------------------------
# the chapter's protocol (:class:`~transformer_theory.chapters.experiment.Experiment`)
# ----------------------------------------------------------------------------------------------
def predictions(parameters: Mapping[str, Any]) -> dict[str, Any]:
    """What the chapter committed before its runs: ``criteria`` (:data:`CRITERIA`), ``budget_tolerance``
    (:data:`~transformer_theory.chapters.budget.BUDGET_TOLERANCE`) and ``prediction`` (:data:`PREDICTION`)."""
    return {"criteria": CRITERIA, "budget_tolerance": BUDGET_TOLERANCE, "prediction": PREDICTION}


def tables(results: Results, parameters: Mapping[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """The chapter's tables: ``head_count_table`` and ``head_count_verdicts`` (one layer), ``budget_check`` and
    ``two_layer_head_count_table``."""
    p = CalibrationParameters(**parameters)
    rows = head_count_table(results, p)
    return {"head_count_table": rows, "head_count_verdicts": head_count_verdicts(rows),
            "budget_check": budget_check_table(results, p),
            "two_layer_head_count_table": two_layer_head_count_table(results, p)}


def claims(results: Results, parameters: Mapping[str, Any], store: RunStore) -> dict[str, bool]:
    """The verdicts on the committed criteria: ``head_count_met_t<T>`` (:func:`head_count_verdicts`),
    ``budget_sufficient_h<h>_t<T>`` (:func:`budget_check_table`, seed ``seeds[0]``) and ``two_layer_met``
    (:func:`two_layer_verdict`); a verdict without a value (a part left out, a cell missing) is left out (no claim
    reads weights: ``store`` is unused)."""
    p = CalibrationParameters(**parameters)
    t = tables(results, parameters)
    return applicable({**{f"head_count_met_t{v['T']}": v["met"] for v in t["head_count_verdicts"]},
                       **{f"budget_sufficient_h{b['h']}_t{b['T']}": b["sufficient"] for b in t["budget_check"]},
                       "two_layer_met": two_layer_verdict(t["two_layer_head_count_table"], p)["met"]})


EXPERIMENT = Experiment("13_training_recipe", DEFAULTS, runs, predictions, tables, claims, OPTIONAL_PARTS)
