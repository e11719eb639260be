"""The runs of the ablation of InfoFlow's two-layer mechanism (§4.1, intrinsic dimension), the second part of what
it takes to train it: which change to chapter 10's recipe makes the full-head models find the mechanism.

Every arm trains the three head configurations (D, D), (D−1, D), (D, D−1) of chapter 10
(:func:`~transformer_theory.chapters.recipes.head_configs`) on
``Σ_{i≤D} max_{s,t} x(s)ᵀ A_i x(t)`` at one D and T, with the same budget (``steps``) and seeds, and changes one
setting of chapter 10's recipe (:data:`ARMS`). The arms and the criterion (:data:`CRITERION`) and the prediction
(:data:`PREDICTION`) were committed before any of their runs was trained.

The **controls** (``controls``) separate what the family can represent from what training finds, at D = 2, 3 and 4
(``control_Ds``), each trained ``control_steps`` steps (:data:`CONTROLS`; their prediction :data:`CONTROL_PREDICTION`
was committed before their runs): layer 1 set at the mechanism (``oracle attention``), the bilinear FFN, the
optimiser the summaries give, and a curriculum over the target's terms.

The **budget check** trains the arms ``double_arms`` again with twice the budget (seeds ``double_seeds``): a cell's budget
is sufficient where doubling it changes its best NMSE by less than
:data:`~transformer_theory.chapters.budget.BUDGET_TOLERANCE`; its prediction
(:data:`DOUBLING_PREDICTION`) was committed before its runs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields, replace
from typing import Any

from transformer_theory.checks import positive_int, unknown_name
from transformer_theory.chapters.budget import BUDGET_TOLERANCE, budget_change
from transformer_theory.chapters.experiment import (Experiment, ExperimentRun, Results, applicable,
                                                    experiment_run, infoflow_model, int_list, seed_list,
                                                    validation_curve)
from transformer_theory.chapters.intrinsic_dimension import DEFAULTS as CHAPTER_10
from transformer_theory.chapters.intrinsic_dimension import model_retrieval_agreement, retrieval_summary
from transformer_theory.chapters.intrinsic_dimension_recipe import recipe_row
from transformer_theory.chapters.recipes import CONFIG_NAMES, head_configs, recipe_runs, term_stages
# the controls are the book's §4.1 recipes (chapter 10 retrains §4.1 on one of them)
from transformer_theory.chapters.recipes import RECIPES as CONTROLS
from transformer_theory.chapters.parameters import param, setting
from transformer_theory.training.store import RunStore, trained_model

__all__ = ["ARMS", "CONTROLS", "CONTROL_BAR", "CONTROL_PREDICTION", "CONTROL_REFERENCE", "CRITERION", "DEFAULTS",
           "DOUBLING_PREDICTION", "EXPERIMENT", "GELU_CURRICULUM_PREDICTION", "OPTIONAL_PARTS", "PREDICTION",
           "AblationParameters", "ablation_curves",
           "ablation_runs", "ablation_table", "arm_settings", "budget_check_table", "claims", "control_prediction_check",
           "control_rows", "control_runs", "gelu_curriculum_check",
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


#: Each control is judged at equal budget against the control it changes one thing of.
CONTROL_REFERENCE: dict[str, str] = {"oracle attention": "random start", "gated FFN": "random start",
                                     "paper optimiser": "random start", "term curriculum": "gated FFN",
                                     "term curriculum, GeLU FFN": "random start",
                                     "term curriculum, clipped": "term curriculum"}

#: The bars of the controls (§4.1's sharp transition, as this book judges it): a control "represents" the
#: mechanism at D when its (D, D) NMSE is at most ``max_full`` and its ratio at least ``min_ratio``.
CONTROL_BAR: dict[str, float] = {"max_full": 1e-3, "min_ratio": 10.0}

#: The controls' prediction, committed before their runs. What had been seen (exploratory, seed 0, D = 3, T = 8,
#: 6 000-12 000 steps): layer 1 at the mechanism then trained, (3,3) 2.0e-4 (GeLU) and 3.8e-5 (gated, (2,3) 8.5e-3);
#: random start 1.0e-2 (GeLU), 8.5e-3 (gated); the term curriculum with the gated FFN 3.2e-4, ratio 22, against
#: 4.7e-3 for 12 000 steps on the full target.
CONTROL_PREDICTION = ("oracle attention meets the bar (D,D) <= 1e-3 and ratio >= 10 at every D trained; random start "
                      "misses the ratio bar at D >= 3; the gated FFN lowers (D,D) below random start's at every D; "
                      "the term curriculum helps by the criterion against the gated FFN at D = 3 and meets the bar "
                      "there; the paper optimiser does not help by the criterion.")


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
    controls: Sequence[str] = param(tuple(CONTROLS), "the §4.1 controls to train, names of CONTROLS (empty: none)")
    control_Ds: Sequence[int] = param((2, 3, 4), "the D values of the controls (each at least 2)")
    control_seq_len: int = param(8, "sequence length T of the controls")
    control_steps: int = param(32000, "AdamW steps of each control run")
    control_seeds: Sequence[int] = param((0, 1), "seeds of the controls")

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
        if isinstance(self.controls, (str, bytes)) or not isinstance(self.controls, Sequence):
            raise ValueError(f"controls must be a list of control names (empty: no controls), got {self.controls!r}")
        unknown = [c for c in self.controls if c not in CONTROLS]
        if unknown:
            raise unknown_name("control", unknown[0], CONTROLS, "controls: ")
        object.__setattr__(self, "controls", tuple(self.controls))
        object.__setattr__(self, "control_Ds", tuple(int_list("control_Ds", self.control_Ds, low=2)))
        positive_int("control_seq_len", self.control_seq_len)
        positive_int("control_steps", self.control_steps)
        object.__setattr__(self, "control_seeds", tuple(seed_list("control_seeds", self.control_seeds)))
        for name in self.controls:
            if "curriculum" in CONTROLS[name]:
                for D in self.control_Ds:
                    term_stages(D, self.control_steps, CONTROLS[name]["curriculum"], "control_steps")
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


def control_runs(p: AblationParameters) -> list[ExperimentRun]:
    """The controls' runs, tagged ``part`` = ``"control"``, ``arm`` (the control's name), ``D``, ``h1``, ``h2``,
    ``T`` and ``seed``: the three head configurations of each D of ``control_Ds`` at ``control_seq_len``, trained
    ``control_steps`` steps with the seeds ``control_seeds`` (fresh samples every step)."""
    return [run for D in p.control_Ds for name in p.controls
            for run in recipe_runs(CHAPTER_10, name, D, p.control_seq_len, p.control_steps, p.control_seeds,
                                   {"part": "control"})]


def ablation_runs(p: AblationParameters) -> list[ExperimentRun]:
    """Every arm's three head configurations and seeds, tagged ``part`` = ``"ablation"``, ``arm``, ``D``, ``h1``,
    ``h2``, ``T`` and ``seed`` (fresh samples every step, as in chapter 10); then the budget check's runs
    (``part`` = ``"double_budget"``): the arms ``double_arms`` at the seeds ``double_seeds`` with twice ``steps``."""
    return ([run for arm in p.arms for run in _arm_runs(p, arm, "ablation", p.seeds, p.steps)]
            + [run for arm in p.double_arms for run in _arm_runs(p, arm, "double_budget", p.double_seeds, 2 * p.steps)]
            + control_runs(p))


def doubled(p: AblationParameters) -> AblationParameters:
    """The parameters of the budget check's runs as an ablation of their own: the arms ``double_arms``, twice the
    steps, the seeds ``double_seeds``."""
    return replace(p, arms=p.double_arms or p.arms, steps=2 * p.steps, seeds=p.double_seeds, double_arms=(),
                   controls=())


def runs(parameters: Mapping[str, Any]) -> list[ExperimentRun]:
    """The chapter's runs (:func:`ablation_runs`) for its complete ``parameters`` (a dict)."""
    return ablation_runs(AblationParameters(**parameters))


def retrieved_terms(p: AblationParameters, arm: str, store: RunStore, n_samples: int = 1024) -> int | None:
    """The most terms of the target that a (D, D) model of ``arm`` retrieves in both layers
    (:func:`~transformer_theory.chapters.intrinsic_dimension.retrieval_summary`, over the seeds whose weights
    ``store`` keeps; ``None`` if none does), on ``n_samples`` fresh inputs."""
    learned = []
    for run in ablation_runs(replace(p, arms=(arm,), double_arms=(), controls=())):
        if (run.tags["h1"], run.tags["h2"]) != (p.D, p.D) or store.weights(run.config) is None:
            continue
        tree = run.config.tree()
        X = tree.sample_inputs(positive_int("n_samples", n_samples), p.seq_len, 0)
        agreement = model_retrieval_agreement(trained_model(run.config, store), tree.params["A"], X)
        learned.append(retrieval_summary(agreement)["learned"])
    return max(learned) if learned else None


def _arm_row(results: Results, part: str, arm: str, D: int, T: int, steps: int, seeds: Sequence[int],
             setting: str) -> dict[str, Any]:
    return {"arm": arm, "setting": setting, **recipe_row(results, part, arm, D, T, steps, seeds)}


def _judge(row: dict[str, Any], reference: dict[str, Any] | None) -> None:
    """``gain`` (the row's ratio over its reference's) and ``helps`` (:data:`CRITERION`), in place."""
    ok = reference is not None and reference["ratio"] and row["ratio"] is not None
    row["gain"] = row["ratio"] / reference["ratio"] if ok else None
    row["helps"] = (None if row["gain"] is None or reference is row
                    else bool(row["gain"] >= CRITERION["min_gain"] and row["nmse_full"] < reference["nmse_full"]))


def control_rows(results: Results, p: AblationParameters) -> list[dict[str, Any]]:
    """One row per control (``controls``) and D (``control_Ds``), in the columns of :func:`ablation_table`, judged
    against its reference (:data:`CONTROL_REFERENCE`, ``versus``) at the same D and budget; ``meets_bar``: its (D, D)
    NMSE and ratio meet :data:`CONTROL_BAR` (``None`` where a value is missing)."""
    rows = []
    for D in p.control_Ds:
        at_D = {name: _arm_row(results, "control", name, D, p.control_seq_len, p.control_steps, p.control_seeds,
                               ", ".join(f"{k} = {v}" for k, v in CONTROLS[name].items()))
                for name in p.controls}
        for name, row in at_D.items():
            row["versus"] = CONTROL_REFERENCE.get(name)
            _judge(row, at_D.get(row["versus"]))
            row["meets_bar"] = (None if row["ratio"] is None else
                                bool(row["nmse_full"] <= CONTROL_BAR["max_full"]
                                     and row["ratio"] >= CONTROL_BAR["min_ratio"]))
            row["retrieved_terms"] = None
            rows.append(row)
    return rows


def ablation_table(results: Results, p: AblationParameters, store: RunStore | None = None,
                   part: str = "ablation") -> list[dict[str, Any]]:
    """One row per arm of the runs of ``part`` at the seeds of ``p`` (the budget check's: ``"double_budget"`` with
    :func:`doubled` parameters), then (for ``part`` = ``"ablation"``) the controls' rows (:func:`control_rows`):
    ``arm``, ``setting`` (what it changes), ``D``, ``T``, ``steps``, ``seeds``, ``nmse_full``, ``nmse_missing``,
    ``ratio`` (as :func:`~transformer_theory.chapters.intrinsic_dimension.separation_ratios`), ``half_gain`` (of the
    best (D, D) seed: still learning at 1.5 or more), ``versus`` (the row it is judged against), ``gain`` (ratio over
    that row's; ``None`` without it), ``helps`` (:data:`CRITERION`), ``meets_bar`` (controls only, else ``None``)
    and ``retrieved_terms`` (:func:`retrieved_terms` with ``store``; ``None`` without one, and for the controls)."""
    rows = [{**_arm_row(results, part, arm, p.D, p.seq_len, p.steps, p.seeds,
                        ", ".join(f"{k} = {v}" for k, v in ARMS[arm].items()) or "chapter 10"),
             "retrieved_terms": None if store is None else retrieved_terms(p, arm, store)} for arm in p.arms]
    base = next((r for r in rows if r["arm"] == "baseline"), None)
    for r in rows:
        r["versus"] = None if base is None else "baseline"
        _judge(r, base)
        r["meets_bar"] = None
    return rows + (control_rows(results, p) if part == "ablation" else [])


def ablation_curves(results: Results, p: AblationParameters) -> list[dict[str, Any]]:
    """The validation curves (:func:`~transformer_theory.chapters.experiment.validation_curve`, grouped by arm) of
    the (D, D) runs: whether an arm's full-head models were still learning when its budget ran out."""
    return [validation_curve(r, r.tags["arm"]) for r in results
            if r.tags["part"] == "ablation" and r.tags["arm"] in p.arms and (r.tags["h1"], r.tags["h2"]) == (p.D, p.D)]


def budget_check_table(results: Results, p: AblationParameters) -> list[dict[str, Any]]:
    """One row per doubled cell (arm, head configuration, seed of `double_seeds`): ``arm``, ``config``, ``nmse`` at ``steps``,
    ``nmse_double`` at twice as many, their quotient ``change`` and ``sufficient`` (``change`` <
    :data:`~transformer_theory.chapters.budget.BUDGET_TOLERANCE`; ``None`` where a value is missing)."""
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
    by_arm = {r["arm"]: r for r in rows if r["arm"] in ARMS}
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


#: The prediction for the term curriculum with the papers' GeLU FFN (``term curriculum, GeLU FFN``), committed after
#: its runs had started and before any of them was read. What had been seen: the term curriculum with the gated FFN at
#: D = 3 (ratio 336, meeting the bar); oracle attention with the GeLU FFN at D = 3 (2.1e-5, ratio 132: the GeLU family
#: holds the mechanism once found); exploratory, layer 1 at the mechanism with the GeLU FFN reached 2.0e-4 in 6 000
#: steps against 3.8e-5 with the gated FFN.
GELU_CURRICULUM_PREDICTION = ("the term curriculum with the GeLU FFN helps by the criterion against random start at "
                              "every D trained, and meets the bar at D = 3.")


def gelu_curriculum_check(rows: Sequence[Mapping[str, Any]]) -> dict[str, bool | None]:
    """:data:`GELU_CURRICULUM_PREDICTION` judged on the control rows of :func:`ablation_table`: ``helps`` (against
    random start at every D where both are trained), ``meets_bar_at_3`` and ``held`` (both), each ``None`` where a row
    or value it needs is missing."""
    by = {(r["arm"], r["D"]): r for r in rows if r["arm"] in CONTROLS}
    name = "term curriculum, GeLU FFN"
    helps = [by[name, D]["helps"] for arm, D in by if arm == name and ("random start", D) in by]
    at_3 = by.get((name, 3), {}).get("meets_bar")
    check = {"helps": None if not helps or None in helps else all(helps), "meets_bar_at_3": at_3}
    check["held"] = None if None in check.values() else all(check.values())
    return check


def control_prediction_check(rows: Sequence[Mapping[str, Any]]) -> dict[str, bool | None]:
    """:data:`CONTROL_PREDICTION`'s statements judged on the control rows of :func:`ablation_table`, each ``None``
    where a control or value it needs is missing: ``oracle_meets_bar`` (at every D trained),
    ``random_start_misses_ratio`` (ratio below :data:`CONTROL_BAR`'s at every D >= 3), ``gated_lowers_full`` (the
    gated FFN's (D, D) below random start's at every D), ``curriculum_helps_at_3`` (the term curriculum helps against
    the gated FFN at D = 3 and meets the bar), ``paper_optimiser_does_not_help``; ``held``: all of them."""
    controls = [r for r in rows if r["arm"] in CONTROLS]
    by = {(r["arm"], r["D"]): r for r in controls}
    Ds = sorted({r["D"] for r in controls})

    def every(arm: str, test, where=lambda D: True) -> bool | None:
        chosen = [by[arm, D] for D in Ds if (arm, D) in by and where(D)]
        values = [test(r) for r in chosen]
        return None if not values or None in values else all(values)

    def lower(r: Mapping[str, Any]) -> bool | None:
        ref = by.get(("random start", r["D"]))
        return None if ref is None or None in (r["nmse_full"], ref["nmse_full"]) else r["nmse_full"] < ref["nmse_full"]

    curriculum = by.get(("term curriculum", 3))
    check: dict[str, bool | None] = {
        "oracle_meets_bar": every("oracle attention", lambda r: r["meets_bar"]),
        "random_start_misses_ratio": every("random start", lambda r: None if r["ratio"] is None
                                           else r["ratio"] < CONTROL_BAR["min_ratio"], lambda D: D >= 3),
        "gated_lowers_full": every("gated FFN", lower),
        "curriculum_helps_at_3": (None if curriculum is None or None in (curriculum["helps"], curriculum["meets_bar"])
                                  else curriculum["helps"] and curriculum["meets_bar"]),
        "paper_optimiser_does_not_help": every("paper optimiser", lambda r: None if r["helps"] is None
                                               else not r["helps"]),
    }
    check["held"] = None if None in check.values() else all(check.values())
    return check


def doubling_check(budget: Sequence[Mapping[str, Any]],
                   doubled_rows: Sequence[Mapping[str, Any]]) -> dict[str, bool | None]:
    """:data:`DOUBLING_PREDICTION`'s statements judged on the budget check: ``both_still_learning`` (every doubled
    (D, D) cell of :func:`budget_check_table` changed by at least
    :data:`~transformer_theory.chapters.budget.BUDGET_TOLERANCE`; ``None`` with fewer than two such cells or a
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
    ``prediction`` (:data:`PREDICTION`), ``doubling_prediction`` (:data:`DOUBLING_PREDICTION`), ``controls``
    (:data:`CONTROLS`), ``control_reference``, ``control_bar`` and ``control_prediction`` (:data:`CONTROL_PREDICTION`)."""
    return {"arms": ARMS, "criterion": CRITERION, "prediction": PREDICTION, "doubling_prediction": DOUBLING_PREDICTION,
            "controls": CONTROLS, "control_reference": CONTROL_REFERENCE, "control_bar": CONTROL_BAR,
            "control_prediction": CONTROL_PREDICTION}


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
    control = control_prediction_check(t["ablation_table"])
    return applicable({**{k: v for k, v in check.items() if k != "held"}, "prediction_held": check["held"],
                       **{k: v for k, v in doubling.items() if k != "held"},
                       "doubling_prediction_held": doubling["held"],
                       **{k: v for k, v in control.items() if k != "held"}, "control_prediction_held": control["held"]})


#: The list parameters a profile may leave empty: ``double_arms`` (no budget check) and ``controls`` (no control).
OPTIONAL_PARTS = ("double_arms", "controls")

EXPERIMENT = Experiment("14_mechanism_ablation", DEFAULTS, runs, predictions, tables, claims, OPTIONAL_PARTS)
