"""The triangle-center experiment (InfoFlow §4.2, chapter ``11_triangle_center``): its runs, its criteria and
the tables the chapter draws from them.

Target ``min_{t1,t2,t3} ||x(t1) + x(t2) + x(t3)||`` (:func:`~transformer_theory.infoflow.targets.triangle_center`),
tokens ``x(t) ~ N(0, 2 I_2)`` with norms clamped to [0.2, 4]; two-layer models (h1, h2) with width E and
per-head dimension ``E / h1`` (the paper's E = n h): (2, 2) with E = 24, (4, 4) with E = 24 and (4, 4) with
E = 48, at every sequence length T. The paper's sizes are known; its steps, batch, seeds and data size are
not (ours: a fixed training set, the target computed once, one budget at every T; the budget check trains every
configuration and T again at the smaller ``reference_steps``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from transformer_theory.checks import boolean
from transformer_theory.infoflow import targets
from transformer_theory.infoflow.architecture import Architecture
from transformer_theory.infoflow.prediction import predict
from transformer_theory.infoflow.reference import TRIANGLE_CENTER_NMSE
from transformer_theory.infoflow.stats import comparison_capacity, comparison_stats
from transformer_theory.models.config import TransformerConfig
from transformer_theory.models.transformer import Transformer
from transformer_theory.training.config import RunConfig
from transformer_theory.training.store import RunStore
from transformer_theory.chapters.budget import doubled, split_doubled
from transformer_theory.chapters.experiment import (Experiment, ExperimentRun, Results, applicable,
                                                    best_over_seeds, claim_name, half_gains, infoflow_model)
from transformer_theory.chapters.parameters import (TrainingParameters, defaults, double_seed_list, int_lists, int_rows,
                                                    param, positive_ints, reference_step_list, seed_lists, setting,
                                                    store)

__all__ = ["DEFAULTS", "EQUAL_BUDGET_PREDICTION", "EXPERIMENT", "LEARNED_MAX_NMSE", "NEAR_ONE_MIN_NMSE",
           "OPTIONAL_PARTS", "STILL_LEARNING", "TriangleCenterParameters", "budget_table", "calculator_predictions",
           "claims", "comparison_growth", "equal_budget_observed", "judge", "model", "nmse_table", "paper_key",
           "predictions", "runs", "tables", "triangle_center_runs"]

#: The chapter's criteria, fixed before any run was read (the issue's bars): at the shortest T every configuration
#: learns (best validation NMSE at most this; the paper reports 0.07 to 0.09 at T = 8) ...
LEARNED_MAX_NMSE = 0.3
#: ... and at the largest T every configuration is near the trivial predictor (NMSE at least this; the paper
#: reports 0.985 at T = 64).
NEAR_ONE_MIN_NMSE = 0.7

#: The prediction for the runs at one budget at every T (``steps`` = 6000 and ``train_size`` = 50 000), committed
#: before any of them was trained (:func:`equal_budget_observed` judges it). What had been seen: at T = 8, 6000 steps,
#: the three configurations reached 0.14 to 0.17; at T = 16, 32 and 64 with 500 steps and 20 000 samples, 0.94 to
#: 0.98.
EQUAL_BUDGET_PREDICTION = ("at one budget of 6 000 steps and 50 000 samples at every T, every configuration's best "
                           "NMSE rises with T, stays at least NEAR_ONE_MIN_NMSE = 0.7 at T = 64, and is above 0.3 at "
                           "T = 16: the chapter's criteria hold when the budget no longer changes with T.")

#: A cell is still learning when its best NMSE fell by this factor or more over the second half of its schedule
#: (``half_gain``), or changed by this factor between ``reference_steps`` and ``steps`` (the book's budget rule).
STILL_LEARNING = 1.5

#: The list parameter that may be empty: ``reference_steps`` (no budget check).
OPTIONAL_PARTS = ("reference_steps",)

def model(h1: int, h2: int, E: int, p: dict[str, Any]) -> TransformerConfig:
    """The InfoFlow model on d = 2 tokens: heads (h1, h2), width E, per-head dimension E / h1, no PE.

    Args:
        h1: The heads of layer 1.
        h2: The heads of layer 2.
        E: The residual width, a multiple of ``h1``.
        p: The chapter's parameters as a dict (``ffn_width``, ``encoder_width``).

    Raises:
        ValueError: ``E`` is not a multiple of ``h1``.
    """
    if E % h1:
        raise ValueError(f"configs: E = {E} is not a multiple of h1 = {h1} (per-head dimension E / h1)")
    return infoflow_model(p, (h1, h2), E, E // h1, p["ffn_width"], d=2)


#: The configuration (h1, h2, E) whose NMSE the claim puts beside the paper's (the first of InfoFlow §4.2's table).
PAPER_CONFIG = (2, 2, 24)


@dataclass(frozen=True)
class TriangleCenterParameters(TrainingParameters):
    """The chapter's parameters, the names of its notebook's ``parameters`` cell (the profiles override them); every
    value is checked on construction (``ValueError`` naming the parameter)."""

    seq_lens: Sequence[int] = param((8, 16, 32, 64), "sequence lengths T")
    configs: Sequence[Sequence[int]] = param(((2, 2, 24), (4, 4, 24), (4, 4, 48)),
                                             "[h1, h2, E] model configurations (InfoFlow §4.2; E a multiple of h1)")
    steps: int = setting("steps", 6000, "AdamW steps of each run, at every sequence length")
    squared: bool = param(False, "square the norm: min ||x(t1) + x(t2) + x(t3)||^2 (one summary's form)")
    seeds: Sequence[int] = setting("seeds", (0,))
    train_size: int = setting("train_size", 50_000, "training samples of each run, drawn once (the target costs T^3 "
                                                    "comparisons a sample)")
    reference_steps: Sequence[int] = param((500,), "the budget check: every run again at these steps (empty: none)")
    reference_train_size: int = param(20_000, "training samples of each budget-check run")
    ffn_width: int = setting("ffn_width")
    double_seeds: Sequence[int] = param((), "seeds whose runs of the paper's configuration (h1, h2, E) = (2, 2, 24) "
                                            "longer than the shortest T are trained again at twice the steps for the "
                                            "doubling check (empty: none)")

    def __post_init__(self) -> None:
        super().__post_init__()
        positive_ints(self, "reference_train_size")
        reference_step_list(self)
        boolean("squared", self.squared)
        int_lists(self, "seq_lens")
        seed_lists(self, "seeds")
        double_seed_list(self)
        int_rows(self, "configs", "[h1, h2, E] triples", length=3)
        for h1, h2, E in self.configs:
            model(h1, h2, E, self.settings())  # E a multiple of h1 (per-head dimension E / h1)


#: The chapter's defaults as its notebook's parameters cell holds them (lists, not tuples).
DEFAULTS: dict[str, Any] = defaults(TriangleCenterParameters)


def triangle_center_runs(p: TriangleCenterParameters) -> list[ExperimentRun]:
    """Every (configuration, T, seed) run at ``steps`` on ``train_size`` samples, then the budget check's (the same
    at each of ``reference_steps`` on ``reference_train_size``), tagged ``h1, h2, E, T, steps, seed``; then the
    doubling check's (:func:`~transformer_theory.chapters.budget.doubled`: the runs at ``steps`` of
    :data:`PAPER_CONFIG` longer than the shortest T, seeds ``double_seeds``, at twice the steps, ``part``
    ``double_budget``; their ``steps`` tag names the budget they double)."""
    s = p.settings()
    budgets = [(p.steps, p.train_size), *((n, p.reference_train_size) for n in p.reference_steps)]
    out = []
    for steps, train_size in budgets:
        for T in p.seq_lens:
            for h1, h2, E in p.configs:
                for seed in p.seeds:
                    run = RunConfig(model=model(h1, h2, E, s), target="triangle_center",
                                    target_args={"squared": p.squared}, seq_len=T, steps=steps,
                                    batch_size=p.batch_size, lr=p.lr, warmup=p.warmup,
                                    weight_decay=p.weight_decay, train_size=train_size, val_size=p.val_size,
                                    eval_every=p.eval_every, seed=seed)
                    out.append(ExperimentRun({"h1": h1, "h2": h2, "E": E, "T": T, "steps": steps, "seed": seed}, run))
    return out + doubled(out, lambda tags: (tags["h1"], tags["h2"], tags["E"]) == PAPER_CONFIG and tags["steps"] == p.steps
                         and tags["T"] > min(p.seq_lens) and tags["seed"] in p.double_seeds)


def runs(parameters: Mapping[str, Any]) -> list[ExperimentRun]:
    """The chapter's runs (:func:`triangle_center_runs`) for its complete ``parameters`` (a dict)."""
    return triangle_center_runs(TriangleCenterParameters(**parameters))


def paper_key(h1: int, h2: int, E: int) -> str:
    """The configuration's key in :data:`~transformer_theory.infoflow.reference.TRIANGLE_CENTER_NMSE`."""
    return f"({h1},{h2}),E={E}"


def calculator_predictions(parameters: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """Chapter 06's verdict for every configuration and T.

    Args:
        parameters: Overrides of the chapter's defaults (``None``: the defaults).

    Returns:
        One row per configuration and T: ``h1, h2, E, T``, the model's ``parameters``, ``predicted_efficient``,
        ``predicted_exponent`` (k of ``M ~ eps^{-k}``) and ``predicted_formula``.
    """
    p = EXPERIMENT.parameters(parameters)
    tree = targets.triangle_center(p["squared"])
    rows = []
    for h1, h2, E in p["configs"]:
        size = Transformer(model(h1, h2, E, p)).num_parameters()
        for T in p["seq_lens"]:
            pred = predict(tree, Architecture((h1, h2), E, 2), T)
            rows.append({"h1": h1, "h2": h2, "E": E, "T": T, "parameters": size,
                         "predicted_efficient": pred.efficient, "predicted_exponent": pred.exponent,
                         "predicted_formula": pred.formula})
    return rows


def nmse_table(results: Results, parameters: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """One row per (configuration, T) of the runs at ``steps`` in ``results``, beside the paper's NMSE.

    Args:
        results: The runs of :func:`~transformer_theory.chapters.registry.run_experiment` for ``parameters``.
        parameters: Overrides of the chapter's defaults (``None``: the defaults).

    Returns:
        Rows sorted by configuration and T: ``h1, h2, E, T, steps``, ``nmse`` (best validation NMSE over seeds),
        ``seed_nmse``, ``half_gain`` (of the best seed's run, :func:`~.experiment.half_gains`), ``paper_nmse``
        (InfoFlow §4.2 as summarised; ``None`` where the paper has no value) and the model's ``parameters``.
    """
    results = split_doubled(results)[0]  # the doubling check is compared apart
    p = EXPERIMENT.parameters(parameters)
    main = [r for r in results if r.tags["steps"] == p["steps"]]
    half_gain = {_cell(g): g["half_gain"] for g in half_gains(main, ("h1", "h2", "E", "T"))}
    rows = best_over_seeds(main)
    for row in rows:
        h1, h2, E = row["h1"], row["h2"], row["E"]
        row.update(half_gain=half_gain[_cell(row)],
                   paper_nmse=TRIANGLE_CENTER_NMSE.get(row["T"], {}).get(paper_key(h1, h2, E)),
                   parameters=Transformer(model(h1, h2, E, p)).num_parameters())
    return sorted(rows, key=lambda r: (r["h1"], r["h2"], r["E"], r["T"]))


def _cell(tags: dict[str, Any]) -> tuple[int, int, int, int]:
    return tags["h1"], tags["h2"], tags["E"], tags["T"]


def budget_table(results: Results, parameters: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """The budget check: each (configuration, T) at ``steps`` beside the same at each of ``reference_steps``.

    Args:
        results: The runs of :func:`~transformer_theory.chapters.registry.run_experiment` for ``parameters``.
        parameters: Overrides of the chapter's defaults (``None``: the defaults).

    Returns:
        One row per configuration, T and reference budget, sorted by configuration and T: ``h1, h2, E, T``,
        ``reference_steps``, ``reference_nmse``, ``nmse`` (at ``steps``; best over seeds), ``change`` (the larger
        over the smaller, ``None`` if either diverged) and ``settled`` (``change`` under :data:`STILL_LEARNING`).
    """
    results = split_doubled(results)[0]  # the doubling check is compared apart
    p = EXPERIMENT.parameters(parameters)
    best = {(_cell(r), r["steps"]): r["nmse"] for r in best_over_seeds(results)}
    rows = []
    for (cell, steps), reference in best.items():
        if steps == p["steps"] or (cell, p["steps"]) not in best:
            continue
        nmse = best[(cell, p["steps"])]
        change = max(nmse, reference) / min(nmse, reference) if nmse and reference else None
        rows.append({**dict(zip(("h1", "h2", "E", "T"), cell)), "reference_steps": steps, "reference_nmse": reference,
                     "nmse": nmse, "change": change, "settled": change is not None and change < STILL_LEARNING})
    return sorted(rows, key=lambda r: (r["h1"], r["h2"], r["E"], r["T"], r["reference_steps"]))


def equal_budget_observed(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """:data:`EQUAL_BUDGET_PREDICTION` on the rows of :func:`nmse_table` (one budget at every T).

    Returns:
        ``configs`` (per :func:`paper_key`: ``rises``, the best NMSE strictly increasing in T; ``near_one``, at
        least :data:`NEAR_ONE_MIN_NMSE` at the largest T; ``above_at_second``, above :data:`LEARNED_MAX_NMSE` at
        the second-shortest T) and ``observed``, when every configuration meets all three.

    Raises:
        ValueError: fewer than three sequence lengths, or a configuration without a finite NMSE at one of them.
    """
    by_config: dict[str, dict[int, float | None]] = {}
    for r in rows:
        by_config.setdefault(paper_key(r["h1"], r["h2"], r["E"]), {})[r["T"]] = r["nmse"]
    out: dict[str, Any] = {"configs": {}}
    for key, nmse in by_config.items():
        lengths = sorted(nmse)
        if len(lengths) < 3:
            raise ValueError(f"configuration {key}: the prediction needs three sequence lengths or more, got {lengths}")
        if any(nmse[T] is None for T in lengths):
            raise ValueError(f"configuration {key}: no finite NMSE at T = {[T for T in lengths if nmse[T] is None]}")
        values = [nmse[T] for T in lengths]
        out["configs"][key] = {"rises": all(b > a for a, b in zip(values, values[1:])),
                               "near_one": values[-1] >= NEAR_ONE_MIN_NMSE,
                               "above_at_second": values[1] > LEARNED_MAX_NMSE}
    out["observed"] = all(all(c.values()) for c in out["configs"].values())
    return out


def comparison_growth(seq_lens: Sequence[int], configs: Sequence[Sequence[int]]) -> list[dict[str, Any]]:
    """The target's comparisons against those a fixed model performs (InfoFlow §4.2).

    Args:
        seq_lens: The sequence lengths T.
        configs: ``(h1, h2, E)`` triples.

    Returns:
        One row per T: ``comparison_number`` (chapter 06's ``comparison_stats``: ``T^3 + T^2 + T``, the triples
        and the two outer minima), ``triples`` (``T^3``), and per configuration, with its :func:`paper_key`,
        ``"capacity <key>"`` (the comparisons its attention performs, ``comparison_capacity``:
        ``sum_l h_l (T+1)^2``) and ``"ratio <key>"`` (comparison number over capacity).
    """
    tree = targets.triangle_center()
    rows = []
    for T in seq_lens:
        number = comparison_stats(tree, T).number
        row: dict[str, Any] = {"T": T, "comparison_number": number, "triples": T ** 3}
        for h1, h2, E in configs:
            capacity = comparison_capacity(Architecture((h1, h2), E, 2), T)
            row[f"capacity {paper_key(h1, h2, E)}"] = capacity
            row[f"ratio {paper_key(h1, h2, E)}"] = number / capacity
        rows.append(row)
    return rows


def judge(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The chapter's criteria on the rows of :func:`nmse_table`.

    Returns:
        ``shortest_T``, ``largest_T``, ``configs`` (per :func:`paper_key`: ``learned``, best NMSE at the shortest
        T at most :data:`LEARNED_MAX_NMSE`, and ``near_one``, at the largest T at least
        :data:`NEAR_ONE_MIN_NMSE`) and ``observed``, when every configuration meets both.

    Raises:
        ValueError: no rows, a single T, or a configuration without a finite NMSE at the shortest or largest T
            (missing or diverged).
    """
    if not rows:
        raise ValueError("rows is empty: nothing to judge")
    shortest, largest = min(r["T"] for r in rows), max(r["T"] for r in rows)
    if shortest == largest:
        raise ValueError(f"need two sequence lengths or more, got only T = {shortest}")
    by_config: dict[str, dict[int, float | None]] = {}
    for r in rows:
        by_config.setdefault(paper_key(r["h1"], r["h2"], r["E"]), {})[r["T"]] = r["nmse"]
    out: dict[str, Any] = {"shortest_T": shortest, "largest_T": largest, "configs": {}}
    for key, nmse in by_config.items():
        for T in (shortest, largest):
            if nmse.get(T) is None:
                raise ValueError(f"configuration {key}: no finite NMSE at T = {T} (missing or diverged)")
        out["configs"][key] = {"learned": nmse[shortest] <= LEARNED_MAX_NMSE,
                               "near_one": nmse[largest] >= NEAR_ONE_MIN_NMSE}
    out["observed"] = all(c["learned"] and c["near_one"] for c in out["configs"].values())
    return out


# ----------------------------------------------------------------------------------------------
# the chapter's protocol (:class:`~transformer_theory.chapters.experiment.Experiment`)
# ----------------------------------------------------------------------------------------------
def predictions(parameters: Mapping[str, Any]) -> dict[str, Any]:
    """What the chapter fixed before its runs: ``criterion`` (:data:`LEARNED_MAX_NMSE`, :data:`NEAR_ONE_MIN_NMSE`),
    the calculator's ``predictions`` (:func:`calculator_predictions`) and ``equal_budget_prediction``
    (:data:`EQUAL_BUDGET_PREDICTION`)."""
    return {"criterion": {"learned_max_nmse": LEARNED_MAX_NMSE, "near_one_min_nmse": NEAR_ONE_MIN_NMSE},
            "predictions": calculator_predictions(dict(parameters)),
            "equal_budget_prediction": EQUAL_BUDGET_PREDICTION}


def tables(results: Results, parameters: Mapping[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """The chapter's tables: ``nmse_table`` (:func:`nmse_table`), ``budget_check`` (:func:`budget_table`) and
    ``comparison_growth`` (:func:`comparison_growth`)."""
    return {"nmse_table": nmse_table(results, dict(parameters)), "budget_check": budget_table(results, dict(parameters)),
            "comparison_growth": comparison_growth(parameters["seq_lens"], parameters["configs"])}


def claims(results: Results, parameters: Mapping[str, Any], store: RunStore) -> dict[str, bool]:
    """The chapter's criteria (:func:`judge`): ``observed`` (every configuration meets both), and per configuration
    ``learned_<key>`` (at the shortest T) and ``near_one_<key>`` (at the largest), ``<key>`` its :func:`paper_key`
    as a name; ``equal_budget_prediction`` (:func:`equal_budget_observed`, with three lengths or more) and
    ``settled_longer_t`` (the budget check: every cell longer than the shortest T changed by less than
    :data:`STILL_LEARNING`; with ``reference_steps``). No claim reads weights: ``store`` is unused."""
    rows = nmse_table(results, dict(parameters))
    judged = judge(rows)
    check = [r for r in budget_table(results, dict(parameters)) if r["T"] > judged["shortest_T"]]
    return applicable({"observed": judged["observed"],
                       **{claim_name(verdict, key): c[verdict] for key, c in judged["configs"].items()
                          for verdict in ("learned", "near_one")},
                       "equal_budget_prediction": equal_budget_observed(rows)["observed"]
                       if len(parameters["seq_lens"]) >= 3 else None,
                       "settled_longer_t": all(r["settled"] for r in check) if check else None})


EXPERIMENT = Experiment("11_triangle_center", DEFAULTS, runs, predictions, tables, claims, OPTIONAL_PARTS)
