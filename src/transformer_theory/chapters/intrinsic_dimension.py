"""The runs of chapter 10: InfoFlow's intrinsic-dimension experiment and the single-layer head count it recovers.

* **Intrinsic dimension** (InfoFlow §4.1): ``F(X) = Σ_{i≤D} max_{s,t} x(s)ᵀ A_i x(t)``, d = 4
  (:func:`~transformer_theory.infoflow.targets.pairwise_max`), two layers with
  (h1, h2) ∈ {(D, D), (D−1, D), (D, D−1)} for each D. InfoFlow predicts that only (D, D) is efficient: the
  inner maxima need D retrievals per token in layer 1, the outer ones D retrievals at the CLS token in layer 2.
  Heads are narrow (per-head dimension ``head_dim``, width ``E = embed_dim_per_D · D``), so a missing head
  cannot be made up for by a wide one.
* **Longer schedule** (this book's own test): the §4.1 configurations of the D that carry a bar (``ls_D_values``)
  trained with a schedule of ``ls_steps`` steps (four times the book profile's ``steps``) and seeds ``ls_seeds``, the
  D of ``ls_check_D`` also with the seeds ``ls_check_seeds``: the separation ratio under a longer schedule.
* **Head count, one layer** (the predecessor P1, Table 2; InfoFlow recovers its bound): ``Σ_{i≤4} max_t
  a_iᵀ x(t)`` (:func:`~transformer_theory.infoflow.targets.max_retrieval`, D = 4), one layer with h heads of
  dimension ``hc_head_dim`` (E = ``hc_head_dim`` · h), at a few sequence lengths. Predicted efficient iff h ≥ D.
* **Sequence length** (this book's own test): the §4.1 configurations of one D (``sl_D``) at several T
  (``sl_seq_lens``), to see whether the gap between (D, D) and a missing head grows with T, as the calculator's
  aggregation exponent ``max(2, Td/E − 1)`` says it should (InfoFlow trains at T = 64, the book profile at 16).

Every part uses the InfoFlow/P1 model of :func:`~transformer_theory.chapters.experiment.infoflow_model`; the
parameters below are the chapter's ``parameters`` cell (the profiles override them). The tables a chapter shows
are :func:`nmse_table`, :func:`sequence_length_table` and :func:`head_count_table`, with the papers' numbers
(:mod:`transformer_theory.infoflow.reference`) and InfoFlow's prediction for each row.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import torch

from transformer_theory.infoflow import targets
from transformer_theory.infoflow.architecture import Architecture
from transformer_theory.infoflow.prediction import predict
from transformer_theory.infoflow.reference import INTRINSIC_DIMENSION_NMSE, P1_SINGLE_LAYER_NMSE
from transformer_theory.checks import positive_int, seed_value, unknown_name
from transformer_theory.infoflow.trees import Tree
from transformer_theory.models.transformer import Transformer
from transformer_theory.training.ensemble import initial_model
from transformer_theory.training.store import RunStore, trained_model
from transformer_theory.chapters.experiment import (Experiment, ExperimentRun, Results, RunResult, applicable,
                                                    best_over_seeds, claim_name, experiment_run, infoflow_model)
from transformer_theory.chapters.budget import doubled
from transformer_theory.chapters.recipes import (CONFIG_NAMES, RECIPE_MAX_FULL, RECIPE_PREDICTION, RECIPES,
                                                 head_configs, recipe_cells, recipe_runs, term_stages)
from transformer_theory.chapters.parameters import (TrainingParameters, defaults, double_seed_list, int_lists, param,
                                                    positive_ints, seed_lists, setting)

__all__ = ["DEFAULTS", "EXPERIMENT", "MIN_RATIOS", "PAIRWISE_PARTS", "RETRIEVAL_THRESHOLD", "claim_verdicts", "claims",
           "head_count_runs", "head_count_table", "intrinsic_dimension_runs", "IntrinsicDimensionParameters",
           "long_schedule_runs", "model_retrieval_agreement", "nmse_table", "prediction", "prediction_table",
           "predictions", "ratio_rises_with_length", "ratios_during_training", "recipe_part_runs",
           "retrieval_agreement", "retrieval_summary", "retrieval_table", "runs", "separation_ratios",
           "sequence_length_runs", "sequence_length_table", "tables"]

#: The chapter's criteria, fixed before any run was read (the issue's bars): for each D, both configurations
#: that miss a head reach at least this many times the best validation NMSE of (D, D) (book profile). For
#: D = 5 and 6 nothing is required: the ratio reached is reported.
MIN_RATIOS: dict[int, float] = {2: 10.0, 3: 10.0, 4: 3.0}

#: A head "does" a retrieval of InfoFlow's mechanism when its most-attended token is the mechanism's token for at
#: least this fraction of queries (:func:`retrieval_summary`). Set after one exploratory D = 2 model (8000 steps,
#: not a book run), before the book-profile models were examined.
RETRIEVAL_THRESHOLD = 0.8

@dataclass(frozen=True)
class IntrinsicDimensionParameters(TrainingParameters):
    """The chapter's parameters (the book profile's sizes; ``params/*.yaml`` holds the others), the names of its
    notebook's ``parameters`` cell: the intrinsic-dimension runs, the sequence-length runs (prefix ``sl_``; every other
    setting is the intrinsic-dimension runs'), the longer schedule (prefix ``ls_``) and the head-count runs (prefix
    ``hc_``). No ``train_size``: the intrinsic-dimension runs draw fresh samples every step. Every value is checked on
    construction (``ValueError`` naming the parameter)."""

    steps: int = setting("steps", 16000, "AdamW steps of each intrinsic-dimension and sequence-length run")
    seeds: Sequence[int] = setting("seeds", doc="seeds of each intrinsic-dimension and sequence-length configuration")
    D_values: Sequence[int] = param((2, 3, 4, 5, 6), "intrinsic dimensions D of the target (at least 2)")
    seq_len: int = param(16, "sequence length T of the intrinsic-dimension runs")
    head_dim: int = param(16, "per-head query/key dimension")
    embed_dim_per_D: int = param(16, "width of the residual stream per unit of D (E = embed_dim_per_D * D)")
    ffn_width_per_D: int = param(32, "hidden width of each FFN per unit of D")
    target_seed: int = param(0, "seed of the targets' random matrices A_i and vectors a_i")
    sl_D: int = param(2, "D of the sequence-length runs (at least 2)")
    sl_seq_lens: Sequence[int] = param((8, 16, 32), "sequence lengths T of the sequence-length runs")
    ls_D_values: Sequence[int] = param((2, 3, 4), "D values of the longer schedule (at least 2)")
    ls_steps: int = param(64000, "AdamW steps of each longer-schedule run")
    ls_seeds: Sequence[int] = param((0,), "seeds of each longer-schedule configuration")
    ls_check_D: Sequence[int] = param((2,), "D values of the longer schedule also trained with ls_check_seeds")
    ls_check_seeds: Sequence[int] = param((1,), "the further seeds of the D values of ls_check_D")
    hc_D: int = param(4, "D of the single-layer head-count target sum_i max_t a_i^T x(t)")
    hc_heads: Sequence[int] = param((1, 2, 3, 4, 5), "head counts h of the single-layer head-count runs")
    hc_seq_lens: Sequence[int] = param((16,), "sequence lengths T of the head-count runs")
    hc_head_dim: int = param(8, "per-head dimension of the head-count models (E = hc_head_dim * h)")
    hc_ffn_width: int = param(32, "hidden width of each FFN of the head-count models")
    hc_steps: int = param(3000, "AdamW steps of each head-count run")
    hc_train_size: int = param(100_000, "training samples of each head-count run, drawn once")
    hc_seeds: Sequence[int] = param((0,), "seeds of each head-count configuration")
    rc_recipe: str = param("term curriculum", "the from-scratch recipe of the recipe part (a name of recipes.RECIPES)")
    rc_control: str = param("oracle attention", "the recipe trained beside it as its control (empty: none)")
    rc_papers_ffn: str = param("term curriculum, GeLU FFN",
                               "the recipe with the papers' GeLU FFN beside it (empty: none)")
    rc_cells: Sequence[Sequence[int]] = param(((2, 8), (3, 8), (4, 8), (2, 16)),
                                              "the [D, T] pairs of the recipe part (empty: no recipe part)")
    rc_candidate: str = param("term curriculum, clipped",
                              "a candidate recipe trained at rc_candidate_cells (empty: none)")
    rc_candidate_cells: Sequence[Sequence[int]] = param(((2, 8), (3, 8), (4, 8)),
                                                        "the [D, T] pairs of the candidate (empty: none)")
    rc_candidate_seeds: Sequence[int] = param((0, 1), "seeds of each configuration of the candidate")
    rc_steps: int = param(32000, "AdamW steps of each recipe-part run")
    rc_seeds: Sequence[int] = param((0, 1), "seeds of each recipe-part configuration")
    rc_double_seeds: Sequence[int] = param((0,), "seeds of the recipe's doubling check, at twice rc_steps (empty: none)")

    def __post_init__(self) -> None:
        super().__post_init__()
        positive_ints(self, "seq_len", "head_dim", "embed_dim_per_D", "ffn_width_per_D", "ls_steps", "hc_D",
                      "hc_head_dim", "hc_ffn_width", "hc_steps", "hc_train_size")
        if positive_int("sl_D", self.sl_D) < 2:
            raise ValueError(f"sl_D must be at least 2 (the configuration (D-1, D) needs a head), got {self.sl_D}")
        int_lists(self, "D_values", "ls_D_values", "ls_check_D", low=2)  # (D-1, D) needs a head
        int_lists(self, "sl_seq_lens", "hc_heads", "hc_seq_lens")
        seed_lists(self, "seeds", "ls_seeds", "ls_check_seeds", "hc_seeds")
        seed_value(self.target_seed, "target_seed")
        for D in self.ls_check_D:
            if D not in self.ls_D_values:
                raise ValueError(f"ls_check_D: {D} is not one of ls_D_values {list(self.ls_D_values)}")
        self._check_recipe_part()

    @property
    def recipes(self) -> tuple[str, str, str]:
        """``rc_recipe``, ``rc_papers_ffn``, ``rc_control``: the recipe part's recipes (empty: not trained)."""
        return self.rc_recipe, self.rc_papers_ffn, self.rc_control

    def _check_recipe_part(self) -> None:
        for name in ("rc_recipe", "rc_control", "rc_papers_ffn", "rc_candidate"):
            value = getattr(self, name)
            if not isinstance(value, str) or (value not in RECIPES and (value or name == "rc_recipe")):
                raise unknown_name("recipe", value, RECIPES, f"{name}: ")
        object.__setattr__(self, "rc_cells", recipe_cells("rc_cells", self.rc_cells))
        object.__setattr__(self, "rc_candidate_cells", recipe_cells("rc_candidate_cells", self.rc_candidate_cells))
        positive_ints(self, "rc_steps")
        seed_lists(self, "rc_seeds", "rc_candidate_seeds")
        double_seed_list(self, "rc_seeds", "rc_double_seeds")
        for name, cells in [(n, self.rc_cells) for n in filter(None, self.recipes)] + [
                (self.rc_candidate, self.rc_candidate_cells)] * bool(self.rc_candidate):
            for D, _ in cells if "curriculum" in RECIPES[name] else ():
                term_stages(D, self.rc_steps, RECIPES[name]["curriculum"], "rc_steps")


#: The chapter's defaults as its notebook's parameters cell holds them (lists, not tuples).
DEFAULTS: dict[str, Any] = defaults(IntrinsicDimensionParameters)

#: The parts of the chapter that train InfoFlow's §4.1 configurations: their D values and steps (parameter names).
PAIRWISE_PARTS: dict[str, tuple[str, str]] = {"intrinsic_dimension": ("D_values", "steps"),
                                              "long_schedule": ("ls_D_values", "ls_steps")}

def prediction(tree: Tree, heads: Sequence[int], embed_dim: int, seq_len: int) -> dict[str, Any]:
    """The calculator's prediction (:func:`~transformer_theory.infoflow.predict`, chapter 06) for ``tree``.

    Args:
        tree: The target.
        heads: The head count of each layer.
        embed_dim: The residual width E.
        seq_len: The sequence length T.

    Returns:
        ``predicted_efficient``, ``predicted_exponent`` (k of ``M ~ ε^{-k}``), ``predicted_formula`` and
        ``bottleneck`` (the calculator's reason for the first missing head, ``""`` if none).
    """
    p = predict(tree, Architecture(list(heads), embed_dim, tree.input_dim), seq_len)
    return {"predicted_efficient": bool(p.efficient), "predicted_exponent": p.exponent,
            "predicted_formula": p.formula, "bottleneck": p.bottleneck.reason if p.bottleneck else ""}


def _params(values: IntrinsicDimensionParameters | Mapping[str, Any] | None) -> IntrinsicDimensionParameters:
    """``values`` if they are the checked parameters, else the defaults overridden by the dict ``values`` (a
    notebook's ``parameters``), checked."""
    if isinstance(values, IntrinsicDimensionParameters):
        return values
    return IntrinsicDimensionParameters(**EXPERIMENT.parameters(None if values is None else dict(values)))


def _pairwise_runs(p: IntrinsicDimensionParameters, part: str, D: int, T: int, steps: int | None = None,
                   seeds: Sequence[int] | None = None) -> list[ExperimentRun]:
    """The three head configurations of ``D`` at ``T``, every seed of ``seeds`` (default ``p.seeds``), ``steps``
    steps (default ``p.steps``): width ``E = embed_dim_per_D · D``, FFN width ``ffn_width_per_D · D``, per-head
    dimension ``head_dim``, tagged ``part``, ``D``, ``h1``, ``h2``, ``T``, ``seed``."""
    runs, s = [], p.settings()
    E, width = p.embed_dim_per_D * D, p.ffn_width_per_D * D
    for h1, h2 in head_configs(D):
        model = infoflow_model(s, (h1, h2), E, p.head_dim, width)
        for seed in p.seeds if seeds is None else seeds:
            tags = {"part": part, "D": D, "h1": h1, "h2": h2, "T": T, "seed": seed}
            args = {"D": D, "d": 4, "seed": p.target_seed}
            runs.append(ExperimentRun(tags, experiment_run(s, model, "pairwise_max", args, T, seed, steps)))
    return runs


def intrinsic_dimension_runs(p: IntrinsicDimensionParameters | Mapping[str, Any]) -> list[ExperimentRun]:
    """The §4.1 runs for the parameters ``p`` (or a dict of them): every D of ``D_values``, head configuration and
    seed at T = ``seq_len``, tagged ``part`` = ``"intrinsic_dimension"``."""
    p = _params(p)
    return [run for D in p.D_values for run in _pairwise_runs(p, "intrinsic_dimension", D, p.seq_len)]


def sequence_length_runs(p: IntrinsicDimensionParameters | Mapping[str, Any]) -> list[ExperimentRun]:
    """The same runs for D = ``sl_D`` at every T of ``sl_seq_lens``, tagged ``part`` = ``"sequence_length"`` (a run
    at the intrinsic-dimension runs' D and T is the same run, trained once)."""
    p = _params(p)
    return [run for T in p.sl_seq_lens for run in _pairwise_runs(p, "sequence_length", p.sl_D, T)]


def long_schedule_runs(p: IntrinsicDimensionParameters | Mapping[str, Any]) -> list[ExperimentRun]:
    """The same runs for every D of ``ls_D_values`` at T = ``seq_len`` with ``ls_steps`` steps and seeds ``ls_seeds``
    (and ``ls_check_seeds`` for the D of ``ls_check_D``), tagged ``part`` = ``"long_schedule"``."""
    p = _params(p)
    runs = []
    for D in p.ls_D_values:
        checked = [s for s in p.ls_check_seeds if s not in p.ls_seeds] if D in p.ls_check_D else []
        seeds = list(p.ls_seeds) + checked
        runs += _pairwise_runs(p, "long_schedule", D, p.seq_len, p.ls_steps, seeds)
    return runs


def head_count_runs(p: IntrinsicDimensionParameters | Mapping[str, Any]) -> list[ExperimentRun]:
    """The single-layer head-count runs (P1 Table 2's setting): ``hc_heads`` × ``hc_seq_lens`` × ``hc_seeds``,
    width ``E = hc_head_dim · h``, ``hc_steps`` steps on ``hc_train_size`` samples, tagged ``part`` =
    ``"head_count"``, ``D``, ``h``, ``T``, ``seed``."""
    p = _params(p)
    runs, s = [], p.settings()
    D, n = p.hc_D, p.hc_head_dim
    hc = {**s, "steps": p.hc_steps, "train_size": p.hc_train_size}
    for T in p.hc_seq_lens:
        for h in p.hc_heads:
            model = infoflow_model(s, (h,), n * h, n, p.hc_ffn_width)
            for seed in p.hc_seeds:
                tags = {"part": "head_count", "D": D, "h": h, "T": T, "seed": seed}
                args = {"D": D, "d": 4, "seed": p.target_seed}
                runs.append(ExperimentRun(tags, experiment_run(hc, model, "max_retrieval", args, T, seed)))
    return runs


def recipe_part_runs(p: IntrinsicDimensionParameters | Mapping[str, Any]) -> list[ExperimentRun]:
    """The recipe part: the three head configurations of every [D, T] of ``rc_cells`` on each recipe of
    ``p.recipes``, seeds ``rc_seeds``, and of ``rc_candidate_cells`` on ``rc_candidate``, seeds ``rc_candidate_seeds``
    (:func:`~transformer_theory.chapters.recipes.recipe_runs`, ``rc_steps`` steps), tagged ``part`` = ``"recipe"``
    and ``arm``; then the doubling check: the recipe's and the candidate's runs of the seeds ``rc_double_seeds`` at
    twice the steps (:func:`~transformer_theory.chapters.budget.doubled`). Chapter 14 trains the same recipes as
    controls: a run of both is trained once."""
    p = _params(p)
    cells = [(D, T, name, p.rc_seeds) for D, T in p.rc_cells for name in filter(None, p.recipes)] + [
        (D, T, p.rc_candidate, p.rc_candidate_seeds) for D, T in p.rc_candidate_cells if p.rc_candidate]
    runs = [run for D, T, name, seeds in cells
            for run in recipe_runs(p.settings(), name, D, T, p.rc_steps, seeds, {"part": "recipe"})]
    return runs + doubled(runs, lambda t: t["arm"] in (p.rc_recipe, p.rc_candidate) and t["seed"] in p.rc_double_seeds)


def runs(parameters: Mapping[str, Any]) -> list[ExperimentRun]:
    """Every run of the chapter for its complete ``parameters`` (a dict), the cheap ones first: the head count, the
    intrinsic dimension, the sequence length, the longer schedule, the recipe part."""
    p = IntrinsicDimensionParameters(**parameters)
    return (head_count_runs(p) + intrinsic_dimension_runs(p) + sequence_length_runs(p) + long_schedule_runs(p)
            + recipe_part_runs(p))


#: The run builder of each part of :data:`PAIRWISE_PARTS`.
_PART_RUNS = {"intrinsic_dimension": intrinsic_dimension_runs, "long_schedule": long_schedule_runs}


def _part_name(part: str) -> str:
    if part not in PAIRWISE_PARTS:
        raise ValueError(f"part must be one of {', '.join(PAIRWISE_PARTS)}, got {part!r}")
    return part


def prediction_table(parameters: IntrinsicDimensionParameters | Mapping[str, Any] | None = None,
                     part: str = "intrinsic_dimension") -> list[dict[str, Any]]:
    """Before any run: InfoFlow's numbers and the calculator's :func:`prediction` at the trained width and T.

    Args:
        parameters: The chapter's parameters, or overrides of its defaults (``None``: the defaults).
        part: A part of :data:`PAIRWISE_PARTS`, whose D values are tabulated.

    Returns:
        One row per (D, h1, h2): ``D``, ``h1``, ``h2``, ``config`` (:data:`CONFIG_NAMES`), ``E``, ``T``,
        ``paper_nmse`` (§4.1 at T = 64; ``None`` where the paper has no cell), ``predicted_*`` and
        ``bottleneck``.
    """
    p = _params(parameters)
    rows = []
    for D in getattr(p, PAIRWISE_PARTS[_part_name(part)][0]):
        E = p.embed_dim_per_D * D
        for h1, h2 in head_configs(D):
            name = CONFIG_NAMES[(h1 - D, h2 - D)]
            rows.append({"D": D, "h1": h1, "h2": h2, "config": name, "E": E, "T": p.seq_len,
                         "paper_nmse": INTRINSIC_DIMENSION_NMSE.get(D, {}).get(name),
                         **prediction(targets.pairwise_max(D), (h1, h2), E, p.seq_len)})
    return rows


def _part(results: Results, part: str) -> list[RunResult]:
    return [r for r in results if r.tags["part"] == part]


def nmse_table(results: Results, parameters: IntrinsicDimensionParameters | Mapping[str, Any] | None = None,
               part: str = "intrinsic_dimension") -> list[dict[str, Any]]:
    """:func:`prediction_table` with the measurement.

    Args:
        results: The runs of :func:`~transformer_theory.chapters.registry.run_experiment`.
        parameters: The chapter's parameters, or overrides of its defaults (``None``: the defaults).
        part: A part of :data:`PAIRWISE_PARTS`: the runs of ``results`` tabulated.

    Returns:
        The rows of :func:`prediction_table` with ``nmse`` (best validation NMSE, the minimum over seeds;
        ``None`` if no seed has one) and ``seed_nmse`` (each seed's best).
    """
    measured = {(r["D"], r["h1"], r["h2"]): r for r in best_over_seeds(_part(results, _part_name(part)))}
    rows = []
    for row in prediction_table(parameters, part):
        got = measured.get((row["D"], row["h1"], row["h2"]), {"nmse": None, "seed_nmse": {}})
        rows.append({**row, "nmse": got["nmse"], "seed_nmse": got["seed_nmse"]})
    return rows


def separation_ratios(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The separation ratio of each D.

    Args:
        rows: The rows of :func:`nmse_table` (the three configurations of each D).

    Returns:
        One row per D: ``D``, ``nmse_full`` and ``nmse_missing`` (the smaller NMSE of the two configurations
        that miss a head), ``ratio`` (their quotient, missing over full; ``None`` if a value is missing),
        InfoFlow's ``paper_ratio`` (same quotient of §4.1's table), the chapter's ``bar`` (:data:`MIN_RATIOS`,
        ``None`` for D without one) and ``met`` (``ratio >= bar``; ``None`` without a bar or a ratio).
    """
    out = []
    for D in sorted({r["D"] for r in rows}):
        cells = {r["config"]: r for r in rows if r["D"] == D}

        def quotient(key: str) -> float | None:
            full = cells["(D,D)"][key]
            missing = [cells[c][key] for c in ("(D-1,D)", "(D,D-1)")]
            if full is None or full <= 0 or any(m is None for m in missing):
                return None
            return min(missing) / full

        ratio, bar = quotient("nmse"), MIN_RATIOS.get(D)
        out.append({"D": D, "nmse_full": cells["(D,D)"]["nmse"],
                    "nmse_missing": min((cells[c]["nmse"] for c in ("(D-1,D)", "(D,D-1)")
                                         if cells[c]["nmse"] is not None), default=None),
                    "ratio": ratio, "paper_ratio": quotient("paper_nmse"), "bar": bar,
                    "met": None if bar is None or ratio is None else ratio >= bar})
    return out


def sequence_length_table(results: Results,
                          parameters: IntrinsicDimensionParameters | Mapping[str, Any] | None = None,
                          ) -> list[dict[str, Any]]:
    """The sequence-length part: one row per T of ``sl_seq_lens``.

    Args:
        results: The runs of :func:`~transformer_theory.chapters.registry.run_experiment`
            (none: the calculator's part alone, before any run).
        parameters: The chapter's parameters, or overrides of its defaults (``None``: the defaults).

    Returns:
        Rows with ``T``, ``D``, ``E``, ``nmse`` and ``seed_nmse`` per configuration name, ``nmse_full``,
        ``nmse_missing`` and ``ratio`` as in :func:`separation_ratios`, and ``exponents``, the calculator's
        exponent k of each configuration at that T (1 for (D, D), aggregation's ``max(2, Td/E − 1)`` for a
        missing head).
    """
    p = _params(parameters)
    D = p.sl_D
    E = p.embed_dim_per_D * D
    measured = {(r["T"], r["h1"], r["h2"]): r for r in best_over_seeds(_part(results, "sequence_length"))}
    rows = []
    for T in sorted(set(p.sl_seq_lens)):
        cells = []
        for h1, h2 in head_configs(D):
            got = measured.get((T, h1, h2), {"nmse": None, "seed_nmse": {}})
            cells.append({"D": D, "config": CONFIG_NAMES[(h1 - D, h2 - D)], "nmse": got["nmse"], "paper_nmse": None,
                          "seed_nmse": got["seed_nmse"], **prediction(targets.pairwise_max(D), (h1, h2), E, T)})
        ratio = separation_ratios(cells)[0]
        rows.append({"T": T, "D": D, "E": E, "nmse": {c["config"]: c["nmse"] for c in cells},
                     "seed_nmse": {c["config"]: c["seed_nmse"] for c in cells},
                     "nmse_full": ratio["nmse_full"], "nmse_missing": ratio["nmse_missing"], "ratio": ratio["ratio"],
                     "exponents": {c["config"]: c["predicted_exponent"] for c in cells}})
    return rows


def ratio_rises_with_length(rows: Sequence[dict[str, Any]]) -> dict[str, bool | None]:
    """The sequence-length part's criterion, fixed before its runs were trained: for each pair of consecutive T of
    :func:`sequence_length_table` rows, whether the ratio rises strictly (``None`` where a ratio is missing). The
    prediction counts as observed when every value is true."""
    ordered = sorted(rows, key=lambda r: r["T"])
    return {f"{a['T']}->{b['T']}": None if a["ratio"] is None or b["ratio"] is None else b["ratio"] > a["ratio"]
            for a, b in zip(ordered, ordered[1:])}


def ratios_during_training(results: Results, parameters: IntrinsicDimensionParameters | Mapping[str, Any] | None = None,
                           fractions: Sequence[float] = (0.25, 0.5, 0.75, 1.0),
                           part: str = "intrinsic_dimension") -> list[dict[str, Any]]:
    """The :func:`separation_ratios` ratio of each D of ``part`` as it stood at ``fractions`` of the schedule.

    Args:
        results: The runs of :func:`~transformer_theory.chapters.registry.run_experiment`.
        parameters: The chapter's parameters, or overrides of its defaults (``None``: the defaults).
        fractions: Fractions of the part's ``steps``, in (0, 1]; at each, every run's best validation NMSE up
            to step ``fraction · steps`` counts (1.0: the reported ratio).
        part: A part of :data:`PAIRWISE_PARTS`.

    Returns:
        Rows ``D``, ``fraction``, ``step``, ``ratio`` (``None`` where a configuration has no validation NMSE by
        then).
    """
    steps = getattr(_params(parameters), PAIRWISE_PARTS[_part_name(part)][1])
    out = []
    for fraction in fractions:
        if not 0 < fraction <= 1:
            raise ValueError(f"fractions must lie in (0, 1], got {fraction!r}")
        until = fraction * steps
        cut = []
        for r in _part(results, part):
            h = r.record.history
            seen = [v for step, v in zip(h.step, h.val_nmse) if step <= until and v is not None]
            cut.append(RunResult(r.tags, replace(r.record, best_nmse=min(seen) if seen else None)))
        out += [{"D": s["D"], "fraction": fraction, "step": int(until), "ratio": s["ratio"]}
                for s in separation_ratios(nmse_table(cut, parameters, part))]
    return out


def retrieval_agreement(layer1: np.ndarray, layer2: np.ndarray, A: np.ndarray, X: np.ndarray) -> list[dict[str, Any]]:
    """How often each head attends most to the token that InfoFlow's mechanism retrieves (§4.1, the account of
    chapter 06): for term i, in layer 1 every token s finds ``argmax_t x(s)ᵀA_i x(t)`` (orientation ``"A"``; or
    every token t finds ``argmax_s``, orientation ``"A^T"``), in layer 2 the CLS token finds the token whose inner
    maximum is largest (``argmax_s max_t x(s)ᵀA_i x(t)``, or ``argmax_t max_s`` for ``"A^T"``).

    Args:
        layer1: The first layer's attention weights (B, h, S, S), with S = T + 1 (the CLS token last; it is
            left out as a query and as a key).
        layer2: The CLS row of the second layer's attention weights (B, h, S).
        A: The target's matrices A_i (D, d, d).
        X: The inputs (B, T, d).

    Returns:
        One row per (layer, head, term, orientation) with ``agreement``, the fraction of queries whose
        most-attended token is the mechanism's.
    """
    B, T, _ = X.shape
    if layer1.shape[0] != B or layer1.shape[-1] != T + 1 or layer2.shape[0] != B or layer2.shape[-1] != T + 1:
        raise ValueError(f"attention shapes {layer1.shape}, {layer2.shape} do not match {B} inputs of {T} tokens "
                         "plus CLS")
    scores = np.einsum("bsd,ide,bte->bist", X, A, X)  # x(s)ᵀ A_i x(t)
    attended1 = layer1[:, :, :T, :T].argmax(-1)  # (B, h, T): each token's most-attended token
    attended2 = layer2[:, :, :T].argmax(-1)  # (B, h)
    rows = []
    for i in range(len(A)):
        for orientation, S in (("A", scores[:, i]), ("A^T", scores[:, i].transpose(0, 2, 1))):
            partner, outer = S.argmax(-1), S.max(-1).argmax(-1)  # (B, T), (B,)
            for head in range(attended1.shape[1]):
                rows.append({"layer": 1, "head": head, "term": i, "orientation": orientation,
                             "agreement": float(np.mean(attended1[:, head] == partner))})
            for head in range(attended2.shape[1]):
                rows.append({"layer": 2, "head": head, "term": i, "orientation": orientation,
                             "agreement": float(np.mean(attended2[:, head] == outer))})
    return rows


def model_retrieval_agreement(model: Transformer, A: np.ndarray, X: np.ndarray) -> list[dict[str, Any]]:
    """:func:`retrieval_agreement` of a trained two-layer model (CLS-only last layer) on inputs ``X``."""
    with torch.no_grad():
        trace = model.eval().trace(torch.from_numpy(X).to(next(model.parameters()).dtype))
    return retrieval_agreement(trace.attention[0].double().numpy(), trace.attention[1][..., 0, :].double().numpy(),
                               A, X)


def retrieval_summary(rows: Sequence[dict[str, Any]], threshold: float = RETRIEVAL_THRESHOLD) -> dict[str, Any]:
    """How many of the mechanism's retrievals a model's heads do.

    Args:
        rows: The rows of :func:`retrieval_agreement`.
        threshold: The agreement at which a head does a retrieval.

    Returns:
        ``layer1`` and ``layer2``: per term, the best agreement of any head in that layer (over both
        orientations); ``learned``: the number of terms whose best head reaches ``threshold`` in both layers
        (one head cannot reach it for two terms whose tokens differ).
    """
    terms = sorted({r["term"] for r in rows})
    best = {(layer, i): max(r["agreement"] for r in rows if r["layer"] == layer and r["term"] == i)
            for layer in (1, 2) for i in terms}
    return {"layer1": [best[1, i] for i in terms], "layer2": [best[2, i] for i in terms],
            "learned": sum(best[1, i] >= threshold and best[2, i] >= threshold for i in terms)}


def retrieval_table(parameters: IntrinsicDimensionParameters | Mapping[str, Any] | None, store: RunStore,
                    n_samples: int = 1024, seed: int = 0, part: str = "intrinsic_dimension") -> list[dict[str, Any]]:
    """:func:`retrieval_summary` of every full-head (D, D) run whose weights are kept, trained and at its
    initialisation.

    Args:
        parameters: The chapter's parameters, or overrides of its defaults (``None``: the defaults).
        store: The run store; runs whose weights it does not keep are left out.
        n_samples: The number of fresh inputs.
        seed: The seed of those inputs.
        part: A part of :data:`PAIRWISE_PARTS`.

    Returns:
        Rows ``D``, ``seed``, ``learned``, ``layer1``, ``layer2`` (the trained model) and ``init_layer1``,
        ``init_layer2`` (at its initialisation).
    """
    part, rows = _part_name(part), []
    for run in _PART_RUNS[part](_params(parameters)):
        t, config = run.tags, run.config
        if (t["h1"], t["h2"]) != (t["D"], t["D"]) or store.weights(config) is None:
            continue
        tree = config.tree()
        X = tree.sample_inputs(positive_int("n_samples", n_samples), config.seq_len, seed_value(seed))
        A = tree.params["A"]
        trained = retrieval_summary(model_retrieval_agreement(trained_model(config, store), A, X))
        initial = retrieval_summary(model_retrieval_agreement(initial_model(config), A, X))
        rows.append({"D": t["D"], "seed": t["seed"], **trained,
                     "init_layer1": initial["layer1"], "init_layer2": initial["layer2"]})
    return rows


def head_count_table(results: Results,
                     parameters: IntrinsicDimensionParameters | Mapping[str, Any] | None = None,
                     ) -> list[dict[str, Any]]:
    """The single-layer head count beside P1 Table 2.

    Args:
        results: The runs of :func:`~transformer_theory.chapters.registry.run_experiment`.
        parameters: The chapter's parameters, or overrides of its defaults (``None``: the defaults).

    Returns:
        One row per (T, h) of the head-count runs, sorted: ``T``, ``h``, ``D``, ``nmse`` (minimum over seeds),
        ``seed_nmse``, ``paper_nmse`` and ``paper_std`` (P1 Table 2, mean and standard deviation over seeds;
        ``None`` at a T or D the table lacks) and the calculator's :func:`prediction`.
    """
    p = _params(parameters)
    rows = []
    for row in best_over_seeds(_part(results, "head_count")):
        D, h, T = row["D"], row["h"], row["T"]
        mean, std = P1_SINGLE_LAYER_NMSE.get(h, {}).get(T, (None, None)) if D == 4 else (None, None)
        rows.append({"T": T, "h": h, "D": D, "nmse": row["nmse"], "seed_nmse": row["seed_nmse"],
                     "paper_nmse": mean, "paper_std": std,
                     **prediction(targets.max_retrieval(D), (h,), p.hc_head_dim * h, T)})
    return sorted(rows, key=lambda r: (r["T"], r["h"]))


# ----------------------------------------------------------------------------------------------
# the chapter's protocol (:class:`~transformer_theory.chapters.experiment.Experiment`)
# ----------------------------------------------------------------------------------------------
def predictions(parameters: Mapping[str, Any]) -> dict[str, Any]:
    """What the chapter fixed before its runs: ``criterion`` (``min_ratios``, :data:`MIN_RATIOS`;
    ``retrieval_threshold``, :data:`RETRIEVAL_THRESHOLD`; ``recipe_max_full``, :data:`RECIPE_MAX_FULL`), the
    calculator's ``predictions`` (:func:`prediction_table`) and the recipe part's ``recipe_prediction``
    (:data:`RECIPE_PREDICTION`)."""
    return {"criterion": {"min_ratios": MIN_RATIOS, "retrieval_threshold": RETRIEVAL_THRESHOLD,
                          "recipe_max_full": RECIPE_MAX_FULL},
            "predictions": prediction_table(IntrinsicDimensionParameters(**parameters)),
            "recipe_prediction": RECIPE_PREDICTION}


def tables(results: Results, parameters: Mapping[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """The chapter's tables: ``nmse_table`` and ``separation_ratios`` (the intrinsic-dimension runs),
    ``sequence_length_table``, ``long_schedule_table`` and ``long_schedule_ratios``, and ``head_count_table``."""
    p = IntrinsicDimensionParameters(**parameters)
    rows, long_rows = nmse_table(results, p), nmse_table(results, p, "long_schedule")
    return {"nmse_table": rows, "separation_ratios": separation_ratios(rows),
            "sequence_length_table": sequence_length_table(results, p), "long_schedule_table": long_rows,
            "long_schedule_ratios": separation_ratios(long_rows), "head_count_table": head_count_table(results, p)}


def claims(results: Results, parameters: Mapping[str, Any], store: RunStore) -> dict[str, bool]:
    """The chapter's verdicts on its fixed criteria: ``criterion_met_d<D>`` (:func:`separation_ratios` against
    :data:`MIN_RATIOS`, for each D with a bar), ``sequence_length_rises_<T>_<T'>`` (:func:`ratio_rises_with_length`)
    and ``sequence_length_observed`` (it rises at every step), ``long_schedule_criterion_met_d<D>`` (the same bars on
    the longer schedule); a verdict without a value is left out (no claim reads weights: ``store`` is unused)."""
    t = tables(results, parameters)
    return claim_verdicts(t["separation_ratios"], ratio_rises_with_length(t["sequence_length_table"]),
                          t["long_schedule_ratios"])


def claim_verdicts(ratios: Sequence[Mapping[str, Any]], rising: Mapping[str, bool | None],
                   long_ratios: Sequence[Mapping[str, Any]]) -> dict[str, bool]:
    """:func:`claims` from :func:`separation_ratios` (main part, longer schedule), :func:`ratio_rises_with_length`."""
    return applicable({**{f"criterion_met_d{s['D']}": s["met"] for s in ratios},
                       **{claim_name("sequence_length_rises", pair): v for pair, v in rising.items()},
                       "sequence_length_observed": all(v is True for v in rising.values()),
                       **{f"long_schedule_criterion_met_d{s['D']}": s["met"] for s in long_ratios}})


#: Parameters a profile may set to an empty list (the part is left out).
OPTIONAL_PARTS = ("rc_cells", "rc_candidate_cells", "rc_double_seeds")

EXPERIMENT = Experiment("10_intrinsic_dimension", DEFAULTS, runs, predictions, tables, claims, OPTIONAL_PARTS)
