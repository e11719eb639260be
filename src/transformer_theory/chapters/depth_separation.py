"""InfoFlow Theorem 1 (depth separation, Yu et al. 2026, arXiv 2605.17930) as a training experiment: the runs
of chapter 07 and the tables it draws from them.

Target: the minimum pairwise dot product ``min_{s≠t} x(s)ᵀx(t)`` of Gaussian tokens in d = 4
(:func:`~transformer_theory.infoflow.targets.min_pairwise_dot`). Theorem 1 (as the abstract states it): every
one-layer transformer needs ``Ω(ε^{-k})`` parameters with k linear in T, while two layers with one head each
need ``O(ε^{-1})``. The experiment trains one layer with h ∈ ``one_layer_heads`` heads against two layers with
``two_layer_heads`` = (1, 1), over the sequence lengths ``seq_lens`` at FFN width ``ffn_width``, and over the
FFN widths ``ffn_widths`` at ``width_seq_len`` (there the one-layer models with ``width_one_layer_heads``
heads). The paper's text shows no such experiment: it is this project's own (see the book's page on how it
reconstructs the papers), and every size below is ours.

Training data are a fixed set of ``train_size`` i.i.d. samples (InfoFlow §4 as summarised: tens to hundreds of
thousands), reshuffled every epoch, and the NMSE is measured on held-out samples, so over-fitting would show.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from transformer_theory.checks import positive_int
from transformer_theory.infoflow import targets
from transformer_theory.infoflow.architecture import Architecture
from transformer_theory.infoflow.prediction import predict
from transformer_theory.models.transformer import Transformer
from transformer_theory.chapters.budget import doubled, split_doubled
from transformer_theory.chapters.experiment import (Experiment, ExperimentRun, Results,
                                                    best_over_seeds, experiment_run, infoflow_model)
from transformer_theory.chapters.parameters import (TrainingParameters, defaults, double_seed_list, int_lists, param,
                                                    positive_ints, seed_lists, setting)
from transformer_theory.training.store import RunStore

__all__ = ["DEFAULTS", "EXPERIMENT", "MIN_RATIO", "TARGET", "TARGET_ARGS", "DepthSeparationParameters", "claims",
           "depth_separation_runs", "nmse_table", "prediction", "predictions", "runs", "separation", "tables"]

#: The chapter's criterion, fixed before any run was read: at the largest T the two-layer NMSE is at least this
#: many times lower than the best one-layer NMSE (best validation NMSE over seeds; the book profile).
MIN_RATIO = 5.0

TARGET = "min_pairwise_dot"
TARGET_ARGS: dict[str, Any] = {"d": 4}


@dataclass(frozen=True)
class DepthSeparationParameters(TrainingParameters):
    """The chapter's parameters (the book profile's sizes; see ``params/*.yaml`` for the others), the names of its
    notebook's ``parameters`` cell; every value is checked on construction (``ValueError`` naming the parameter)."""

    steps: int = setting("steps", 3000)
    train_size: int = setting("train_size")
    seeds: Sequence[int] = setting("seeds")
    ffn_width: int = setting("ffn_width", doc="hidden width of each FFN in the sequence-length runs")
    seq_lens: Sequence[int] = param((8, 16, 32), "sequence lengths T of the depth comparison (at least 2)")
    one_layer_heads: Sequence[int] = param((1, 2, 4), "head counts of the one-layer models")
    two_layer_heads: Sequence[int] = param((1, 1), "heads of the two layers of the two-layer model")
    embed_dim: int = param(32, "width E of the residual stream")
    head_dim: int = param(8, "per-head query/key dimension")
    ffn_widths: Sequence[int] = param((16, 32, 64, 128), "FFN widths of the width sweep")
    width_seq_len: int = param(16, "sequence length T of the width sweep (at least 2)")
    width_one_layer_heads: Sequence[int] = param((4,), "head counts of the one-layer models in the width sweep")
    double_seeds: Sequence[int] = param((), "seeds whose runs at FFN width ffn_width are trained again at twice the "
                                            "steps for the doubling check (empty: none)")

    def __post_init__(self) -> None:
        super().__post_init__()
        positive_ints(self, "embed_dim", "head_dim")
        seed_lists(self, "seeds")
        int_lists(self, "seq_lens", low=2)  # min over s ≠ t needs two tokens
        int_lists(self, "one_layer_heads", "two_layer_heads", "ffn_widths", "width_one_layer_heads")
        double_seed_list(self)
        if len(self.two_layer_heads) != 2:
            raise ValueError(f"two_layer_heads must give the heads of two layers, got {list(self.two_layer_heads)!r}")
        if positive_int("width_seq_len", self.width_seq_len) < 2:
            raise ValueError(f"width_seq_len must be at least 2 (min over s ≠ t), got {self.width_seq_len!r}")


#: The chapter's defaults as its notebook's parameters cell holds them (lists, not tuples).
DEFAULTS: dict[str, Any] = defaults(DepthSeparationParameters)


def depth_separation_runs(p: DepthSeparationParameters) -> list[ExperimentRun]:
    """The runs for the parameters ``p``, tagged ``layers``, ``heads``, ``T``, ``ffn_width``, ``seed``: every
    configuration at every T of ``seq_lens`` (width ``ffn_width``), then the width sweep at ``width_seq_len``; a
    run of both lists appears once; then the doubling check's runs (:func:`~transformer_theory.chapters.budget.doubled`:
    the runs at width ``ffn_width`` of the seeds ``double_seeds`` at twice the steps, tagged ``part``)."""
    s = p.settings()
    one, two = [[h] for h in p.one_layer_heads], list(p.two_layer_heads)
    width_one = [[h] for h in p.width_one_layer_heads]
    grid = [(T, p.ffn_width, heads) for T in p.seq_lens for heads in [*one, two]]
    grid += [(p.width_seq_len, w, heads) for w in p.ffn_widths for heads in [*width_one, two]]
    runs, seen = [], set()
    for T, width, heads in grid:
        if (T, width, tuple(heads)) in seen:
            continue
        seen.add((T, width, tuple(heads)))
        model = infoflow_model(s, heads, p.embed_dim, p.head_dim, width)
        for seed in p.seeds:
            tags = {"layers": len(heads), "heads": list(heads), "T": T, "ffn_width": width, "seed": seed}
            runs.append(ExperimentRun(tags, experiment_run(s, model, TARGET, TARGET_ARGS, T, seed)))
    return runs + doubled(runs, lambda tags: tags["seed"] in p.double_seeds and tags["ffn_width"] == p.ffn_width)


def runs(parameters: Mapping[str, Any]) -> list[ExperimentRun]:
    """The chapter's runs (:func:`depth_separation_runs`) for its complete ``parameters`` (a dict)."""
    return depth_separation_runs(DepthSeparationParameters(**parameters))


def prediction(heads: Sequence[int], seq_len: int, embed_dim: int) -> dict[str, Any]:
    """The calculator's prediction (:func:`~transformer_theory.infoflow.predict`, chapter 06) for the target.

    Args:
        heads: The head count of each layer.
        seq_len: The sequence length T.
        embed_dim: The residual width E.

    Returns:
        ``predicted_efficient``, ``predicted_exponent`` (k of ``M ~ ε^{-k}``), ``predicted_regime`` and
        ``predicted_formula``.
    """
    tree = getattr(targets, TARGET)(**TARGET_ARGS)
    p = predict(tree, Architecture(list(heads), embed_dim, tree.input_dim), seq_len)
    return {"predicted_efficient": p.efficient, "predicted_exponent": p.exponent, "predicted_regime": p.regime,
            "predicted_formula": p.formula}


def nmse_table(results: Results, parameters: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """One row per configuration of ``results``, with the calculator's prediction beside the measurement.

    Args:
        results: The runs of :func:`~transformer_theory.chapters.registry.run_experiment` for ``parameters`` (the
            doubling check's are left out).
        parameters: Overrides of the chapter's defaults (``None``: the defaults).

    Returns:
        Rows with ``layers``, ``heads``, ``T``, ``ffn_width``, the model's ``parameters``, ``nmse`` (the best
        validation NMSE over seeds), ``seed_nmse`` (each seed's best), ``train_loss`` (the best seed's mean
        training loss over the evaluation interval that ended at its best validation NMSE: the MSE of the
        standardised target, about the NMSE on the training data) and the calculator's :func:`prediction`.
    """
    p = EXPERIMENT.parameters(parameters)
    results = split_doubled(results)[0]  # the doubling check's runs are compared apart
    train_loss: dict[tuple, float | None] = {}
    for r in results:
        history, best_step = r.record.history, r.record.best_step
        at = history.step.index(best_step) if best_step is not None else None
        train_loss[(_configuration(r.tags), r.tags["seed"])] = None if at is None else history.train_loss[at]
    rows = best_over_seeds(results)
    for row in rows:
        model = infoflow_model(p, row["heads"], p["embed_dim"], p["head_dim"], row["ffn_width"])
        seeds = [s for s, v in row["seed_nmse"].items() if v is not None]
        best_seed = min(seeds, key=row["seed_nmse"].get) if seeds else None
        row.update(parameters=Transformer(model).num_parameters(),
                   train_loss=train_loss[(_configuration(row), best_seed)] if seeds else None,
                   **prediction(row["heads"], row["T"], model.width))
    return rows


def _configuration(tags: dict[str, Any]) -> tuple:
    return tags["layers"], tuple(tags["heads"]), tags["T"], tags["ffn_width"]


def separation(rows: Sequence[dict[str, Any]], seq_len: int, ffn_width: int) -> dict[str, Any]:
    """The depth separation at one sequence length and FFN width (the claim of the chapter is
    ``ratio >= MIN_RATIO`` at the largest T).

    Args:
        rows: The rows of :func:`nmse_table`.
        seq_len: The sequence length T to compare at.
        ffn_width: The FFN width to compare at.

    Returns:
        ``T``, ``ffn_width``, ``one_layer_heads`` and ``one_layer_nmse`` (the best one-layer row),
        ``two_layer_nmse`` and ``ratio`` = one-layer / two-layer NMSE.

    Raises:
        ValueError: a configuration is missing or diverged.
    """
    here = [r for r in rows if r["T"] == seq_len and r["ffn_width"] == ffn_width]
    one = [r for r in here if r["layers"] == 1]
    two = [r for r in here if r["layers"] == 2]
    if not one or len(two) != 1:
        raise ValueError(f"T = {seq_len}, ffn_width = {ffn_width}: need one-layer rows and one two-layer row, got "
                         f"{len(one)} and {len(two)}")
    if any(r["nmse"] is None for r in here):
        raise ValueError(f"T = {seq_len}, ffn_width = {ffn_width}: a configuration has no finite NMSE (diverged)")
    best = min(one, key=lambda r: r["nmse"])
    two_nmse = two[0]["nmse"]
    return {"T": seq_len, "ffn_width": ffn_width, "one_layer_heads": best["heads"][0], "one_layer_nmse": best["nmse"],
            "two_layer_nmse": two_nmse, "ratio": best["nmse"] / two_nmse if two_nmse > 0 else float("inf")}


# ----------------------------------------------------------------------------------------------
# the chapter's protocol (:class:`~transformer_theory.chapters.experiment.Experiment`)
# ----------------------------------------------------------------------------------------------
def predictions(parameters: Mapping[str, Any]) -> dict[str, Any]:
    """What the chapter fixed before its runs: ``criterion`` (``min_ratio``, :data:`MIN_RATIO`) and the
    calculator's ``predictions`` (:func:`prediction`) for every configuration (``layers``, ``heads``) and T."""
    configurations = [[h] for h in parameters["one_layer_heads"]] + [list(parameters["two_layer_heads"])]
    rows = [{"layers": len(heads), "heads": heads, "T": T, "E": parameters["embed_dim"],
             **prediction(heads, T, parameters["embed_dim"])}
            for T in parameters["seq_lens"] for heads in configurations]
    return {"criterion": {"min_ratio": MIN_RATIO}, "predictions": rows}


def tables(results: Results, parameters: Mapping[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """The chapter's tables: ``nmse_table`` (:func:`nmse_table`) and ``separations`` (:func:`separation` at every T
    of ``seq_lens``, FFN width ``ffn_width``)."""
    rows = nmse_table(results, dict(parameters))
    return {"nmse_table": rows,
            "separations": [separation(rows, T, parameters["ffn_width"]) for T in parameters["seq_lens"]]}


def claims(results: Results, parameters: Mapping[str, Any], store: RunStore) -> dict[str, bool]:
    """The chapter's claim: ``separation_at_largest_t``, the one-layer over two-layer NMSE ratio at the largest T
    at least :data:`MIN_RATIO` (no claim reads weights: ``store`` is unused)."""
    largest = separation(nmse_table(results, dict(parameters)), max(parameters["seq_lens"]), parameters["ffn_width"])
    return {"separation_at_largest_t": bool(largest["ratio"] >= MIN_RATIO)}


EXPERIMENT = Experiment("07_depth_separation", DEFAULTS, runs, predictions, tables, claims)
