"""InfoFlow §4.1's head configurations and the recipes this book trains them with, shared by chapter 10 (which
retrains §4.1 on a from-scratch recipe, with a control beside it) and chapter 14 (which measures the recipes as
controls), and what chapter 10 predicted of them before its runs. A recipe is a set of changes to chapter 10's
training settings; two chapters that train the same recipe at the same D, T, seed and budget train the same run (the
store keys runs by their configuration).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from transformer_theory.checks import positive_int, unknown_name
from transformer_theory.chapters.experiment import ExperimentRun, experiment_run, infoflow_model

__all__ = ["CLIPPED_EVERY_D_PREDICTION", "CLIPPED_PREDICTION", "CONFIG_NAMES", "RECIPES", "RECIPE_MAX_FULL",
           "RECIPE_PREDICTION", "RECIPE_STATEMENTS", "head_configs", "recipe_cells", "recipe_runs", "term_stages"]

#: The column names of InfoFlow's table (§4.1), keyed by (h1 − D, h2 − D).
CONFIG_NAMES: dict[tuple[int, int], str] = {(0, 0): "(D,D)", (-1, 0): "(D-1,D)", (0, -1): "(D,D-1)"}

#: The recipes of §4.1 at D >= 3, each a set of changes to chapter 10's settings (``init``: the model's start,
#: ``ffn_kind``: the FFN, ``curriculum``: the fraction of the steps spent on a curriculum over the target's terms,
#: :func:`term_stages`, ``grad_clip``: each model's gradient norm bound; the other keys replace chapter 10's parameters
#: of the same names). ``random start`` is the
#: reference of the GeLU recipes (the wide FFN, chapter 14's best GeLU arm at D = 2); ``oracle attention`` starts
#: layer 1 at the mechanism; the gated FFN, a labelled departure from the papers' GeLU FFN, forms the products
#: x(s)^T A_i x(t) exactly with d units.
RECIPES: dict[str, dict[str, Any]] = {
    "random start": {"ffn_width_per_D": 128},
    "oracle attention": {"ffn_width_per_D": 128, "init": "oracle"},
    "gated FFN": {"ffn_width_per_D": 64, "ffn_kind": "gated"},
    "paper optimiser": {"ffn_width_per_D": 128, "lr": 1e-3, "weight_decay": 1e-2, "warmup": 0},
    "term curriculum": {"ffn_width_per_D": 64, "ffn_kind": "gated", "curriculum": 0.4},
    "term curriculum, GeLU FFN": {"ffn_width_per_D": 128, "curriculum": 0.4},
    "term curriculum, clipped": {"ffn_width_per_D": 64, "ffn_kind": "gated", "curriculum": 0.4, "grad_clip": 1.0},
}

#: Chapter 10's recipe part: its bar on the (D, D) NMSE of every cell, beside chapter 10's ratio bars ``MIN_RATIOS``
#: (chapter 14's ``CONTROL_BAR``).
RECIPE_MAX_FULL = 1e-3

#: Chapter 10's recipe part: its prediction, committed before its runs (except those at D = 3, T = 8, seed 0, which
#: chapter 14 had trained as controls). What had been seen: chapter 14's controls at D = 3, T = 8, 32 000 steps, seed 0: the
#: term curriculum (gated FFN) (3,3) 1.5e-5, ratio 336; oracle attention (3,3) 2.1e-5, ratio 132; both still learning
#: (half_gain >= 1.5). Exploratory, not book runs: the term curriculum at D = 3, 10 000 steps, ratio 22; at D = 2 from
#: a random start (6 000 steps) the gated FFN's ratio was 5.6. Nothing at D = 4 or T = 16 had been trained.
RECIPE_PREDICTION = ("on the term curriculum (best over the seeds) every cell meets chapter 10's ratio bar "
                     "(MIN_RATIOS: 10 at D = 2 and 3, 3 at D = 4) with (D,D) NMSE at most RECIPE_MAX_FULL = 1e-3; "
                     "oracle attention meets the same bars at every cell; at D = 2 the recipe's ratio is larger at "
                     "T = 16 than at T = 8; the doubling check finds the recipe's (D,D) cells at D >= 3 still learning "
                     "(a change of 1.5x or more).")

#: The prediction for the term curriculum with each model's gradient norm clipped (``term curriculum, clipped``),
#: committed before any of its runs was trained. What had been seen: chapter 10's term curriculum (gated FFN, not
#: clipped) at D = 4, T = 8, 32 000 steps, seed 0: (4,4) 0.22, (3,4) 0.35, (4,3) 0.36 (ratio 1.6), after its training
#: loss spiked from about 2e-3 to 3e5-1.5e7 near step 4 100 (inside stage 1 for (4,4), at the switch to stage 2 at
#: step 4 267 for the others) and recovered only slowly; at D = 2 and 3 the same recipe met the bars with no such
#: spike. Oracle attention at D = 4 was still training.
CLIPPED_PREDICTION = ("at D = 4, T = 8, 32 000 steps, seed 0, the term curriculum with each model's gradient norm "
                      "clipped at 1 meets chapter 10's bar at D = 4 (ratio >= MIN_RATIOS[4] = 3 and (D,D) NMSE <= "
                      "RECIPE_MAX_FULL = 1e-3), which the unclipped term curriculum misses; and the validation NMSE of "
                      "its (4,4) model stays at most 1 from step 1 000 on (no loss spike).")

#: The prediction for the clipped term curriculum at every cell of chapter 10's design, committed after
#: :data:`CLIPPED_PREDICTION` was observed at D = 4 and before its runs at D = 2 were trained. What had been seen: at
#: D = 4, T = 8, seed 0, ratio 133 and (4,4) 1.85e-5; at D = 3, T = 8, seed 0 its three models were at step 20 300 of
#: 32 000, and the progress bar had shown their best validation NMSE (the best of the three models) fall to 1.8e-4;
#: no ratio at D = 3 had been computed. The unclipped curriculum met the bars at D = 2 and 3 (ratios 1005 and 336).
CLIPPED_EVERY_D_PREDICTION = ("at D = 2, 3 and 4, T = 8, 32 000 steps, seed 0, the term curriculum with each model's "
                              "gradient norm clipped at 1 meets chapter 10's bar at every D (ratio >= MIN_RATIOS[D]: "
                              "10, 10, 3; (D,D) NMSE <= RECIPE_MAX_FULL = 1e-3): one from-scratch recipe for all "
                              "three.")

#: The statements of :data:`RECIPE_PREDICTION`, in order (the names its judgement gives them,
#: :func:`~transformer_theory.chapters.intrinsic_dimension_recipe.recipe_prediction_check`).
RECIPE_STATEMENTS = ("recipe_meets_bars", "control_meets_bars", "ratio_grows_with_T", "full_still_learning")


#: The keys of a recipe that are not chapter 10's parameters.
_MODEL_KEYS = ("init", "ffn_kind", "curriculum", "grad_clip")


def recipe_cells(name: str, cells: Any) -> tuple[tuple[int, int], ...]:
    """The [D, T] pairs of the parameter ``name`` as integer pairs, each D at least 2 (``ValueError`` naming the
    parameter and the pair otherwise; an empty list is allowed: the part is left out)."""
    if isinstance(cells, (str, bytes)) or not isinstance(cells, Sequence):
        raise ValueError(f"{name} must be a list of [D, T] pairs (empty: none), got {cells!r}")
    for i, cell in enumerate(cells):
        if isinstance(cell, (str, bytes)) or not isinstance(cell, Sequence) or len(cell) != 2:
            raise ValueError(f"{name}[{i}] must be a pair [D, T], got {cell!r}")
        if positive_int(f"{name}[{i}] D", cell[0]) < 2:
            raise ValueError(f"{name}[{i}]: D must be at least 2 (the configuration (D-1, D) needs a head), "
                             f"got {cell[0]}")
        positive_int(f"{name}[{i}] T", cell[1])
    return tuple((int(D), int(T)) for D, T in cells)


def head_configs(D: int) -> list[tuple[int, int]]:
    """(h1, h2) ∈ {(D, D), (D−1, D), (D, D−1)}: InfoFlow §4.1's head configurations for intrinsic dimension D."""
    D = positive_int("D", D)
    if D < 2:
        raise ValueError(f"D must be at least 2 (the configuration (D-1, D) needs a head), got {D}")
    return [(D + a, D + b) for a, b in CONFIG_NAMES]


def term_stages(D: int, steps: int, fraction: float, name: str = "steps") -> tuple[int, ...]:
    """A curriculum over the D terms: ``fraction`` of the ``steps`` on the leading terms, split evenly between the
    D − 1 stages before the full target (``RunConfig.term_stages``: the steps at which each stage ends); ``name`` is
    the parameter that gave ``steps``, for the message when they are too few."""
    if not 0 < fraction < 1:
        raise ValueError(f"curriculum fraction must lie in (0, 1), got {fraction!r}")
    stages = tuple(round(steps * fraction * k / (D - 1)) for k in range(1, D))
    if len(set(stages)) != len(stages) or stages[0] < 1:
        raise ValueError(f"{name}: {steps} steps are too few for a curriculum over {D} terms")
    return stages


def recipe_runs(settings: Mapping[str, Any], name: str, D: int, T: int, steps: int, seeds: tuple[int, ...] | list[int],
                tags: Mapping[str, Any]) -> list[ExperimentRun]:
    """The three head configurations of ``D`` at ``T`` on the recipe ``name``, every seed of ``seeds``, ``steps``
    steps, fresh samples every step.

    Args:
        settings: Chapter 10's parameters (``embed_dim_per_D``, ``head_dim``, ``ffn_width_per_D``, ``target_seed``
            and the shared training settings), which the recipe changes.
        name: A recipe of :data:`RECIPES`.
        D: The intrinsic dimension (at least 2).
        T: The sequence length.
        steps: The budget; a curriculum's stages are fractions of it.
        seeds: The seeds.
        tags: Tags of every run, beside ``arm`` (the recipe), ``D``, ``h1``, ``h2``, ``T`` and ``seed``.
    """
    if name not in RECIPES:
        raise unknown_name("recipe", name, RECIPES)
    changes = RECIPES[name]
    s = {**{k: v for k, v in settings.items() if k != "train_size"},
         **{k: v for k, v in changes.items() if k not in _MODEL_KEYS}}
    E, width = s["embed_dim_per_D"] * D, s["ffn_width_per_D"] * D
    stages = term_stages(D, steps, changes["curriculum"]) if "curriculum" in changes else ()
    runs = []
    for h1, h2 in head_configs(D):
        model = replace(infoflow_model(s, (h1, h2), E, s["head_dim"], width), ffn_kind=changes.get("ffn_kind", "mlp"))
        for seed in seeds:
            config = replace(experiment_run(s, model, "pairwise_max", {"D": D, "d": 4, "seed": s["target_seed"]}, T,
                                            seed, steps), init=changes.get("init", "random"), term_stages=stages,
                             grad_clip=changes.get("grad_clip"))
            runs.append(ExperimentRun({**tags, "arm": name, "D": D, "h1": h1, "h2": h2, "T": T, "seed": seed}, config))
    return runs
