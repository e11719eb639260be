"""The runs of the ablation of InfoFlow's two-layer mechanism (§4.1, intrinsic dimension), the second part of what
it takes to train it: which change to chapter 10's recipe makes the full-head models find the mechanism.

Every arm trains the three head configurations (D, D), (D−1, D), (D, D−1) of chapter 10
(:func:`~transformer_theory.chapters.intrinsic_dimension.head_configs`) on
``Σ_{i≤D} max_{s,t} x(s)ᵀ A_i x(t)`` at one D and T, with the same budget (``steps``) and seeds, and changes one
setting of chapter 10's recipe (:data:`ARMS`). The arms and the criterion (:data:`CRITERION`) and the prediction
(:data:`PREDICTION`) were committed before any of their runs was trained.

The **budget check** trains the arms ``double_arms`` again with twice the budget (seeds ``double_seeds``): a cell's budget
is sufficient where doubling it changes its best NMSE by less than
:data:`~transformer_theory.chapters.calibration.BUDGET_TOLERANCE`; its prediction
(:data:`DOUBLING_PREDICTION`) was committed before its runs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields, replace
from typing import Any

from transformer_theory.checks import positive_int, unknown_name
from transformer_theory.chapters.calibration import BUDGET_TOLERANCE, budget_change
from transformer_theory.chapters.experiment import (Experiment, ExperimentRun, Results, applicable, best_over_seeds,
                                                    experiment_run, infoflow_model, seed_list, validation_curve)
from transformer_theory.chapters.intrinsic_dimension import CONFIG_NAMES
from transformer_theory.chapters.intrinsic_dimension import DEFAULTS as CHAPTER_10
from transformer_theory.chapters.intrinsic_dimension import (head_configs, model_retrieval_agreement, retrieval_summary,
                                                            separation_ratios)
from transformer_theory.chapters.parameters import param, setting
from transformer_theory.training.store import RunStore, trained_model

__all__ = ["ARMS", "CRITERION", "DEFAULTS", "DOUBLING_PREDICTION", "EXPERIMENT", "OPTIONAL_PARTS", "PREDICTION",
           "AblationParameters", "ablation_curves", "ablation_runs", "ablation_table", "arm_settings", "budget_check_table", "claims",
           "doubled", "doubling_check", "prediction_check", "predictions", "retrieved_terms", "runs", "tables"]

#: The recipe the arms change: chapter 10's settings (width ``embed_dim_per_D`` · D, per-head dimension
#: ``head_dim``, FFN ``ffn_width_per_D`` · D, AdamW with ``lr``, ``weight_decay``, ``warmup``, ``batch_size``).
RECIPE: dict[str, Any] = {k: CHAPTER_10[k] for k in ("embed_dim_per_D", "head_dim", "ffn_width_per_D", "lr",
                                                     "weight_decay", "warmup", "batch_size")}

#: The arms: each changes the settings named here and keeps the rest of :data:`RECIPE`.
ARMS: dict[str, dict[str, Any]] = {
    "baseline": {},
    "wide FFN": {"ffn_width_per_D": 128},
    "wide heads": {"head_dim": 32},
    "wide residual": {"embed_dim_per_D": 32},
    "lower lr": {"lr": 1e-3},
    "long warm-up": {"warmup": 2000},
    "no weight decay": {"weight_decay": 0.0},
    "large batch": {"batch_size": 1024},
}

#: An arm "helps" when, at the same budget, its ratio (the better missing-head NMSE over the (D, D) NMSE, each
#: the best over the seeds) is at least ``min_gain`` times the baseline's and its (D, D) NMSE is lower than the
#: baseline's.
CRITERION: dict[str, float] = {"min_gain": 2.0}

#: The prediction, committed with the arms before their runs. What had been seen: exploratory runs at D = 2, T = 8,
#: 40 000 steps, seed 0 (chapter 10's recipe: ratio 5.8; FFN width 256 = 128 per D: ratio 32; tokens normalised to
#: norm 2: ratio 1.7).
PREDICTION = ("the wide FFN helps (the layer-1 FFN must form the products x(s)^T A_i x(t)); no other arm helps "
              "by the criterion, and the large batch and the lower learning rate lower the ratio at this budget.")

#: The budget check's prediction, committed before its runs. What had been seen at 16 000 steps: the (D, D) models
#: of every arm fell 1.4-3x over the second half of their schedules; chapter 10's recipe at 40 000 steps (seed 0,
#: exploratory) reached (D, D) 1.4e-3, ratio 5.8, and the wide FFN 1.5e-4, ratio 32.
DOUBLING_PREDICTION = ("both doubled arms were still learning: doubling the budget lowers their (D, D) NMSE by more "
                       "than the tolerance 1.5x; at twice the budget the wide FFN helps by the criterion against the "
                       "baseline at twice the budget.")


@dataclass(frozen=True)
class AblationParameters:
    """The ablation's parameters: the arms (names of :data:`ARMS`), D, T, the budget and the seeds (the other
    training settings are chapter 10's)."""

    arms: Sequence[str] = param(tuple(ARMS), "the arms to train, each a change to chapter 10's recipe")
    D: int = param(2, "D of the target sum_{i<=D} max_{s,t} x(s)^T A_i x(t) (at least 2)")
    seq_len: int = param(8, "sequence length T")
    steps: int = setting("steps", 16000, "AdamW steps of each run (the budget)")
    seeds: Sequence[int] = setting("seeds")
    double_arms: Sequence[str] = param(("baseline", "wide FFN"), "the budget check: arms trained again with twice the "
                                                                 "steps (empty: none)")
    double_seeds: Sequence[int] = param((0,), "seeds of the budget check (among seeds)")

    def __post_init__(self) -> None:
        if isinstance(self.arms, (str, bytes)) or not isinstance(self.arms, Sequence) or not self.arms:
            raise ValueError(f"arms must be a non-empty list of arm names, got {self.arms!r}")
        unknown = [a for a in self.arms if a not in ARMS]
        if unknown:
            raise unknown_name("arm", unknown[0], ARMS, "arms: ")
        object.__setattr__(self, "arms", tuple(self.arms))
        if isinstance(self.double_arms, (str, bytes)) or not isinstance(self.double_arms, Sequence):
            raise ValueError(f"double_arms must be a list of arm names (empty: no budget check), "
                             f"got {self.double_arms!r}")
        outside = [a for a in self.double_arms if a not in self.arms]
        if outside:
            raise ValueError(f"double_arms: {outside[0]!r} is not one of the arms {list(self.arms)}; the budget check "
                             f"compares an arm with itself at twice the budget (double_arms = [] skips it)")
        object.__setattr__(self, "double_arms", tuple(self.double_arms))
        head_configs(positive_int("D", self.D))
        positive_int("seq_len", self.seq_len)
        positive_int("steps", self.steps)
        object.__setattr__(self, "seeds", tuple(seed_list("seeds", self.seeds)))
        object.__setattr__(self, "double_seeds", tuple(seed_list("double_seeds", self.double_seeds)))
        if not set(self.double_seeds) <= set(self.seeds):
            raise ValueError(f"double_seeds: {list(self.double_seeds)} must be among the seeds {list(self.seeds)}; the "
                             f"budget check compares a seed's run with itself at twice the budget")


#: The experiment's defaults (lists, as a notebook's parameters cell holds them).
DEFAULTS: dict[str, Any] = {f.name: list(v) if isinstance(v := getattr(AblationParameters(), f.name), tuple) else v
                            for f in fields(AblationParameters)}


def arm_settings(arm: str) -> dict[str, Any]:
    """Chapter 10's training settings with the arm's changes (``ValueError`` for an unknown arm)."""
    if arm not in ARMS:
        raise unknown_name("arm", arm, ARMS)
    return {**{k: v for k, v in CHAPTER_10.items() if k != "train_size"}, **ARMS[arm]}


def _arm_runs(p: AblationParameters, arm: str, part: str, seeds: Sequence[int], steps: int) -> list[ExperimentRun]:
    s = arm_settings(arm)
    E, width = s["embed_dim_per_D"] * p.D, s["ffn_width_per_D"] * p.D
    runs = []
    for h1, h2 in head_configs(p.D):
        model = infoflow_model(s, (h1, h2), E, s["head_dim"], width)
        for seed in seeds:
            tags = {"part": part, "arm": arm, "D": p.D, "h1": h1, "h2": h2, "T": p.seq_len, "seed": seed}
            args = {"D": p.D, "d": 4, "seed": s["target_seed"]}
            runs.append(ExperimentRun(tags, experiment_run(s, model, "pairwise_max", args, p.seq_len, seed, steps)))
    return runs


def ablation_runs(p: AblationParameters) -> list[ExperimentRun]:
    """Every arm's three head configurations and seeds, tagged ``part`` = ``"ablation"``, ``arm``, ``D``, ``h1``,
    ``h2``, ``T`` and ``seed`` (fresh samples every step, as in chapter 10); then the budget check's runs
    (``part`` = ``"double_budget"``): the arms ``double_arms`` at the seeds ``double_seeds`` with twice ``steps``."""
    return ([run for arm in p.arms for run in _arm_runs(p, arm, "ablation", p.seeds, p.steps)]
            + [run for arm in p.double_arms for run in _arm_runs(p, arm, "double_budget", p.double_seeds, 2 * p.steps)])


def doubled(p: AblationParameters) -> AblationParameters:
    """The parameters of the budget check's runs as an ablation of their own: the arms ``double_arms``, twice the
    steps, the seeds ``double_seeds``."""
    return replace(p, arms=p.double_arms or p.arms, steps=2 * p.steps, seeds=p.double_seeds, double_arms=())


def runs(parameters: Mapping[str, Any]) -> list[ExperimentRun]:
    """The chapter's runs (:func:`ablation_runs`) for its complete ``parameters`` (a dict)."""
    return ablation_runs(AblationParameters(**parameters))


def retrieved_terms(p: AblationParameters, arm: str, store: RunStore, n_samples: int = 1024) -> int | None:
    """The most terms of the target that a (D, D) model of ``arm`` retrieves in both layers
    (:func:`~transformer_theory.chapters.intrinsic_dimension.retrieval_summary`, over the seeds whose weights
    ``store`` keeps; ``None`` if none does), on ``n_samples`` fresh inputs."""
    learned = []
    for run in ablation_runs(replace(p, arms=(arm,), double_arms=())):
        if (run.tags["h1"], run.tags["h2"]) != (p.D, p.D) or store.weights(run.config) is None:
            continue
        tree = run.config.tree()
        X = tree.sample_inputs(positive_int("n_samples", n_samples), p.seq_len, 0)
        agreement = model_retrieval_agreement(trained_model(run.config, store), tree.params["A"], X)
        learned.append(retrieval_summary(agreement)["learned"])
    return max(learned) if learned else None


def ablation_table(results: Results, p: AblationParameters, store: RunStore | None = None,
                   part: str = "ablation") -> list[dict[str, Any]]:
    """One row per arm of the runs of ``part`` at the seeds of ``p`` (the budget check's: ``"double_budget"`` with
    :func:`doubled` parameters): ``arm``, ``setting`` (what it changes), ``D``, ``T``, ``steps``, ``seeds``, ``nmse_full``,
    ``nmse_missing``, ``ratio`` (as :func:`~transformer_theory.chapters.intrinsic_dimension.separation_ratios`),
    ``gain`` (ratio over the baseline's; ``None`` without a baseline), ``helps`` (:data:`CRITERION`) and
    ``retrieved_terms`` (:func:`retrieved_terms` with ``store``; ``None`` without one)."""
    rows = []
    for arm in p.arms:
        measured = {(r["h1"], r["h2"]): r for r in best_over_seeds([
            r for r in results if r.tags["part"] == part and r.tags["arm"] == arm and r.tags["seed"] in p.seeds])}
        cells = [{"D": p.D, "config": CONFIG_NAMES[(h1 - p.D, h2 - p.D)], "paper_nmse": None,
                  "nmse": measured.get((h1, h2), {}).get("nmse")} for h1, h2 in head_configs(p.D)]
        ratio = separation_ratios(cells)[0]
        rows.append({"arm": arm, "setting": ", ".join(f"{k} = {v}" for k, v in ARMS[arm].items()) or "chapter 10",
                     "D": p.D, "T": p.seq_len, "steps": p.steps, "seeds": list(p.seeds),
                     "nmse_full": ratio["nmse_full"], "nmse_missing": ratio["nmse_missing"], "ratio": ratio["ratio"],
                     "retrieved_terms": None if store is None else retrieved_terms(p, arm, store)})
    base = next((r for r in rows if r["arm"] == "baseline"), None)
    for r in rows:
        ok = base is not None and base["ratio"] and r["ratio"] is not None
        r["gain"] = r["ratio"] / base["ratio"] if ok else None
        r["helps"] = (None if r["gain"] is None or r["arm"] == "baseline"
                      else bool(r["gain"] >= CRITERION["min_gain"] and r["nmse_full"] < base["nmse_full"]))
    return rows


def ablation_curves(results: Results, p: AblationParameters) -> list[dict[str, Any]]:
    """The validation curves (:func:`~transformer_theory.chapters.experiment.validation_curve`, grouped by arm) of
    the (D, D) runs: whether an arm's full-head models were still learning when its budget ran out."""
    return [validation_curve(r, r.tags["arm"]) for r in results
            if r.tags["part"] == "ablation" and r.tags["arm"] in p.arms and (r.tags["h1"], r.tags["h2"]) == (p.D, p.D)]


def budget_check_table(results: Results, p: AblationParameters) -> list[dict[str, Any]]:
    """One row per doubled cell (arm, head configuration, seed of `double_seeds`): ``arm``, ``config``, ``nmse`` at ``steps``,
    ``nmse_double`` at twice as many, their quotient ``change`` and ``sufficient`` (``change`` <
    :data:`~transformer_theory.chapters.calibration.BUDGET_TOLERANCE`; ``None`` where a value is missing)."""
    once = {(r.tags["arm"], r.tags["h1"], r.tags["h2"], r.tags["seed"]): r.best_nmse for r in results
            if r.tags["part"] == "ablation"}
    rows = []
    for r in results:
        tags = r.tags
        if tags["part"] != "double_budget":
            continue
        before, after = once.get((tags["arm"], tags["h1"], tags["h2"], tags["seed"])), r.best_nmse
        rows.append({"arm": tags["arm"], "config": CONFIG_NAMES[(tags["h1"] - p.D, tags["h2"] - p.D)],
                     "seed": tags["seed"], "nmse": before, "nmse_double": after, **budget_change(before, after)})
    return rows


def prediction_check(rows: Sequence[Mapping[str, Any]]) -> dict[str, bool | None]:
    """:data:`PREDICTION`'s three statements judged on the rows of :func:`ablation_table`: ``wide_ffn_helps``,
    ``no_other_arm_helps`` and ``batch_and_lr_lower_the_ratio`` (the large batch's and the lower learning rate's
    ratios below the baseline's), each ``None`` where an arm it needs is not in the rows; ``held``: all three."""
    by_arm = {r["arm"]: r for r in rows}
    base = by_arm.get("baseline")
    checks: dict[str, bool | None] = {
        "wide_ffn_helps": by_arm["wide FFN"]["helps"] if "wide FFN" in by_arm else None,
        "no_other_arm_helps": (None if base is None else
                               not any(r["helps"] for arm, r in by_arm.items() if arm not in ("baseline", "wide FFN"))),
        "batch_and_lr_lower_the_ratio": (
            None if base is None or not {"large batch", "lower lr"} <= set(by_arm) else
            all(by_arm[a]["ratio"] is not None and by_arm[a]["ratio"] < base["ratio"]
                for a in ("large batch", "lower lr"))),
    }
    checks["held"] = None if None in checks.values() else all(checks.values())
    return checks


def doubling_check(budget: Sequence[Mapping[str, Any]],
                   doubled_rows: Sequence[Mapping[str, Any]]) -> dict[str, bool | None]:
    """:data:`DOUBLING_PREDICTION`'s statements judged on the budget check: ``both_still_learning`` (every doubled
    (D, D) cell of :func:`budget_check_table` changed by at least
    :data:`~transformer_theory.chapters.calibration.BUDGET_TOLERANCE`; ``None`` with fewer than two such cells or a
    missing value) and ``wide_ffn_helps_doubled`` (the wide FFN helps in :func:`ablation_table` of the :func:`doubled`
    parameters, ``doubled_rows``; ``None`` without it); ``held``: both."""
    full_changes = [r["change"] for r in budget if r["config"] == "(D,D)"]
    by_doubled = {r["arm"]: r for r in doubled_rows}
    check: dict[str, bool | None] = {
        "both_still_learning": (None if len(full_changes) < 2 or None in full_changes
                                else all(c >= BUDGET_TOLERANCE for c in full_changes)),
        "wide_ffn_helps_doubled": by_doubled["wide FFN"]["helps"] if "wide FFN" in by_doubled else None}
    check["held"] = None if None in check.values() else all(check.values())
    return check


# ----------------------------------------------------------------------------------------------
# the chapter's protocol (:class:`~transformer_theory.chapters.experiment.Experiment`)
# ----------------------------------------------------------------------------------------------
def predictions(parameters: Mapping[str, Any]) -> dict[str, Any]:
    """What the chapter committed before its runs: ``arms`` (:data:`ARMS`), ``criterion`` (:data:`CRITERION`),
    ``prediction`` (:data:`PREDICTION`) and ``doubling_prediction`` (:data:`DOUBLING_PREDICTION`)."""
    return {"arms": ARMS, "criterion": CRITERION, "prediction": PREDICTION, "doubling_prediction": DOUBLING_PREDICTION}


def tables(results: Results, parameters: Mapping[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """The chapter's tables without the retrieval probe (it reads weights): ``ablation_table``, ``budget_check`` and
    ``doubled_table`` (:func:`ablation_table` of the :func:`doubled` parameters; empty without a budget check)."""
    p = AblationParameters(**parameters)
    return {"ablation_table": ablation_table(results, p), "budget_check": budget_check_table(results, p),
            "doubled_table": ablation_table(results, doubled(p), part="double_budget") if p.double_arms else []}


def claims(results: Results, parameters: Mapping[str, Any], store: RunStore) -> dict[str, bool]:
    """The committed predictions' statements judged: :func:`prediction_check` (``wide_ffn_helps``,
    ``no_other_arm_helps``, ``batch_and_lr_lower_the_ratio``, ``prediction_held``) and :func:`doubling_check`
    (``both_still_learning``, ``wide_ffn_helps_doubled``, ``doubling_prediction_held``); a statement without a
    verdict is left out (no claim reads weights: ``store`` is unused)."""
    t = tables(results, parameters)
    check, doubling = prediction_check(t["ablation_table"]), doubling_check(t["budget_check"], t["doubled_table"])
    return applicable({**{k: v for k, v in check.items() if k != "held"}, "prediction_held": check["held"],
                       **{k: v for k, v in doubling.items() if k != "held"},
                       "doubling_prediction_held": doubling["held"]})


#: The list parameters a profile may leave empty: ``double_arms`` (no budget check).
OPTIONAL_PARTS = ("double_arms",)

EXPERIMENT = Experiment("14_mechanism_ablation", DEFAULTS, runs, predictions, tables, claims, OPTIONAL_PARTS)
