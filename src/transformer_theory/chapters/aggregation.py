"""Specific-position aggregation and the cost law of coupled decoding (InfoFlow Theorem 3 and §4.4,
chapter ``09_aggregation_cost``).

Two parts, one run list:

* ``attention`` -- InfoFlow §4.4: ``x(1) + x(2) + x(3)`` (a vector in R^2,
  :func:`~transformer_theory.infoflow.targets.specific_positions`), T = 10, tokens ``N(0, I_2)``, one layer
  with one head and learned absolute positional encoding; the CLS token's attention over the positions
  (:func:`cls_attention`) is what the paper shows.
* ``cost_law`` -- ours (a reconstruction: the paper's text shows no such experiment): a different smooth
  readout of each of the first T0 positions (:func:`~transformer_theory.infoflow.targets.coupled_positions`)
  with one head of a narrow model (E = ``cost_embed_dim``), so the head mixes T0 tokens into one E-dimensional
  state, for several widths N of the encoder and the FFN (the parameters the cost law counts). The calculator's
  exponents and the criterion for "observed" are committed before the training results (:data:`CRITERION`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from transformer_theory.checks import seed_value
from transformer_theory.fitting import log_log_slope
from transformer_theory.infoflow import targets
from transformer_theory.infoflow.architecture import Architecture
from transformer_theory.infoflow.prediction import predict
from transformer_theory.models.config import TransformerConfig
from transformer_theory.models.transformer import Transformer
from transformer_theory.chapters.budget import doubled, split_doubled
from transformer_theory.chapters.experiment import (BEST_NMSE_STATISTIC, Experiment, ExperimentRun,
                                                    Results, best_over_seeds, experiment_run, infoflow_model)
from transformer_theory.chapters.parameters import (TrainingParameters, defaults, double_seed_list, int_lists, param,
                                                    positive_ints, seed_lists, setting)
from transformer_theory.chapters.predictions import calculator_document, write_committed
from transformer_theory.training.store import RunStore, trained_model

#: The token dimension d of both parts' targets.
TOKEN_DIM = 2


@dataclass(frozen=True)
class AggregationParameters(TrainingParameters):
    """The chapter's parameters, the names of its notebook's ``parameters`` cell (the profiles override them); every
    value is checked on construction (``ValueError`` naming the parameter). No ``train_size``: this chapter draws
    fresh samples at every step."""

    positions: Sequence[int] = param((1, 2, 3), "the positions whose tokens the attention part sums (1-based)")
    seq_len: int = param(10, "sequence length T of the attention part")
    embed_dim: int = param(16, "width E of the residual stream of the attention part")
    head_dim: int = param(16, "per-head query/key dimension of the attention part")
    steps: int = setting("steps", 3000, "AdamW steps of each attention-part run")
    seeds: Sequence[int] = setting("seeds")
    cost_seq_len: int = param(16, "sequence length T of the cost-law part")
    cost_T0s: Sequence[int] = param((1, 2, 4, 8, 16), "numbers T0 of coupled positions of the cost-law part")
    cost_embed_dim: int = param(4, "width E of the cost-law models (one narrow head)")
    cost_widths: Sequence[int] = param((4, 8, 16, 32, 64), "widths N of the encoder and the FFN in the cost-law part")
    cost_steps: int = param(4000, "AdamW steps of each cost-law run")
    cost_seeds: Sequence[int] = param((0,), "seeds of each cost-law configuration")
    target_seed: int = param(0, "seed of the targets' random parameters")
    ffn_width: int = setting("ffn_width", doc="hidden width of each FFN of the attention part")
    double_seeds: Sequence[int] = param((), "cost-law seeds whose runs with T0 d > E (the coupled ones) are trained "
                                            "again at twice the steps for the doubling check (empty: none)")

    def __post_init__(self) -> None:
        super().__post_init__()
        positive_ints(self, "seq_len", "embed_dim", "head_dim", "cost_seq_len", "cost_embed_dim", "cost_steps")
        int_lists(self, "positions", "cost_T0s", "cost_widths")
        seed_lists(self, "seeds", "cost_seeds")
        double_seed_list(self, among="cost_seeds")
        seed_value(self.target_seed, "target_seed")


#: The chapter's defaults as its notebook's parameters cell holds them (lists, not tuples).
DEFAULTS: dict[str, Any] = defaults(AggregationParameters)

#: The observation criteria, fixed before any training of this chapter (committed with the predictions).
CRITERION: dict[str, Any] = {
    "statistic": BEST_NMSE_STATISTIC,
    "attention_range": [0.25, 0.42],
    "attention_elsewhere": 0.05,
    "attention_spread": 0.05,
    "attention_if": ("the CLS attention of the trained one-head model (the seed with the best NMSE), averaged over "
                     "the validation samples, is within attention_range at each position of P and at most "
                     "attention_elsewhere at every other input position, and its standard deviation over the "
                     "samples is at most attention_spread at every input position (content independent)"),
    "exponent_gap": 1.0,
    "nmse_if": ("at every width, for every pair of aggregated-set sizes T0 whose predicted exponents differ by at "
                "least exponent_gap, the larger exponent has the larger best NMSE"),
    "slope_if": ("for every such pair, the larger exponent has the flatter slope (the least-squares slope of "
                 "log10 best NMSE against log10 of the parameters of the encoder, FFN and readout, over the "
                 "widths)"),
    "cost_law_if": "the cost law is observed iff nmse_if and slope_if both hold",
}

#: Where the predictions are committed, relative to the repository root.
PREDICTIONS_FILE = Path("results") / "book" / "09_aggregation_cost_predictions.json"


def attention_model(p: dict[str, Any]) -> TransformerConfig:
    """The one-head model with positional encoding of the §4.4 experiment (encoder width, FFN width from ``p``)."""
    return infoflow_model(p, (1,), p["embed_dim"], p["head_dim"], p["ffn_width"], d=2, max_len=p["seq_len"],
                          readout_dim=2)


def cost_model(p: dict[str, Any], width: int) -> TransformerConfig:
    """The narrow one-head model of the cost law: E = ``cost_embed_dim``, encoder and FFN of width ``width``."""
    E = p["cost_embed_dim"]
    return infoflow_model(p, (1,), E, E, width, d=2, max_len=p["cost_seq_len"], encoder_width=width)


def aggregation_runs(p: AggregationParameters) -> list[ExperimentRun]:
    """The chapter's runs, tagged ``part`` (``attention`` or ``cost_law``), ``T``, ``seed`` and, for the cost
    law, ``T0`` and ``width``; then the doubling check's (:func:`~transformer_theory.chapters.budget.doubled`: the
    coupled cost-law runs, T0 d > E, of the seeds ``double_seeds`` at twice the steps, ``part`` ``double_budget``)."""
    out = []
    s = p.settings()
    for seed in p.seeds:
        run = experiment_run(s, attention_model(s), "specific_positions",
                             {"P": list(p.positions), "d": TOKEN_DIM}, p.seq_len, seed)
        out.append(ExperimentRun({"part": "attention", "T": p.seq_len, "seed": seed}, run, weights=True))
    for width in p.cost_widths:
        for T0 in p.cost_T0s:
            for seed in p.cost_seeds:
                args = {"T0": T0, "d": TOKEN_DIM, "seed": p.target_seed}
                run = experiment_run(s, cost_model(s, width), "coupled_positions", args, p.cost_seq_len, seed,
                                     steps=p.cost_steps)
                out.append(ExperimentRun({"part": "cost_law", "T": p.cost_seq_len, "T0": T0, "width": width,
                                          "seed": seed}, run))
    return out + doubled(out, lambda tags: tags["part"] == "cost_law" and tags["T0"] * TOKEN_DIM > p.cost_embed_dim
                         and tags["seed"] in p.double_seeds)


def runs(parameters: Mapping[str, Any]) -> list[ExperimentRun]:
    """The chapter's runs (:func:`aggregation_runs`) for its complete ``parameters`` (a dict)."""
    return aggregation_runs(AggregationParameters(**parameters))


def decoder_parameters(config: TransformerConfig) -> int:
    """Parameters of the encoder, the FFNs and the readout: what the cost law counts (the predecessor's
    Theorem 2 counts the FFN weights of the encoder and of the output map)."""
    model = Transformer(config)
    parts = [model.encoder, model.readout, *(block.ff for block in model.blocks)]
    return sum(p.numel() for part in parts if part is not None for p in part.parameters())


# ----------------------------------------------------------------------------------------------
# predictions (chapter 06's calculator) and the committed criteria
# ----------------------------------------------------------------------------------------------
def calculator_predictions(p: dict[str, Any], gamma: float = 1.0) -> list[dict[str, Any]]:
    """The calculator's prediction for the §4.4 model and for every aggregated-set size of the cost law.

    Args:
        p: The chapter's parameters as a dict (:data:`DEFAULTS` overridden).
        gamma: The FFN's approximation exponent (:func:`~transformer_theory.infoflow.predict`).

    Returns:
        One row per case: ``part``, ``T0``, ``T``, ``E``, ``efficient``, ``exponent`` k (``M ~ eps^-k``),
        ``slope`` (the ``-2/k`` it implies for log NMSE against log M, NMSE ~ eps^2), ``regime`` and
        ``formula``.
    """
    rows = []
    cases = [("attention", targets.specific_positions(tuple(p["positions"]), d=2), p["embed_dim"], p["seq_len"],
              len(p["positions"]))]
    cases += [("cost_law", targets.coupled_positions(T0, d=2, seed=p["target_seed"]), p["cost_embed_dim"],
               p["cost_seq_len"], T0) for T0 in p["cost_T0s"]]
    for part, tree, E, T, T0 in cases:
        pred = predict(tree, Architecture((1,), E, 2, positional=True), T, gamma=gamma)
        rows.append({"part": part, "T0": T0, "T": T, "E": E, "efficient": pred.efficient,
                     "exponent": round(pred.exponent, 6), "slope": round(-2.0 / pred.exponent, 6),
                     "regime": pred.regime, "formula": pred.formula})
    return rows


def predictions_document(p: dict[str, Any]) -> dict[str, Any]:
    """What is committed before the training results (:data:`PREDICTIONS_FILE`), without the provenance."""
    return calculator_document("09", "specific positions, cost law of coupled decoding", p,
                               ("positions", "seq_len", "embed_dim", "cost_seq_len", "cost_T0s", "cost_embed_dim",
                                "cost_widths", "target_seed"), CRITERION, calculator_predictions(p))


def write_predictions(path: str | Path | None = None) -> Path:
    """Write :func:`predictions_document` for the chapter's defaults (its book sizes) with the git commit and
    versions, atomically, to ``path`` (default :data:`PREDICTIONS_FILE` in the repository)."""
    return write_committed(predictions_document(DEFAULTS), PREDICTIONS_FILE, path)


def cost_law_observed(nmse: dict[int, dict[int, float]], params: dict[int, int], exponent: dict[int, float],
                      criterion: dict[str, Any] = CRITERION) -> dict[str, Any]:
    """The committed cost-law criterion.

    Args:
        nmse: ``nmse[T0][width]``, the best validation NMSEs.
        params: ``params[width]``, the counted parameters (:func:`decoder_parameters`).
        exponent: ``exponent[T0]``, the predicted exponents.
        criterion: The committed criteria (:data:`CRITERION`).

    Returns:
        ``slopes`` (T0 -> the log-log slope over the widths), ``pairs`` (the ``[T0, T0']`` compared),
        ``nmse_ordered``, ``slopes_ordered`` and ``observed`` (both).
    """
    slopes = {T0: log_log_slope([params[w] for w in sorted(row)], [row[w] for w in sorted(row)])
              for T0, row in nmse.items()}
    pairs = [(a, b) for a in nmse for b in nmse if exponent[b] - exponent[a] >= criterion["exponent_gap"]]
    widths = sorted(set.intersection(*(set(row) for row in nmse.values())))
    nmse_ok = all(nmse[b][w] > nmse[a][w] for a, b in pairs for w in widths)
    slope_ok = all(slopes[b] > slopes[a] for a, b in pairs)
    return {"slopes": slopes, "pairs": [list(p) for p in pairs], "nmse_ordered": nmse_ok, "slopes_ordered": slope_ok,
            "observed": nmse_ok and slope_ok}


def attention_observed(mean: np.ndarray, std: np.ndarray, positions: list[int],
                       criterion: dict[str, Any] = CRITERION) -> bool:
    """The committed attention criterion.

    Args:
        mean: The CLS attention at each of the T input positions, averaged over the samples.
        std: Its standard deviation over the samples.
        positions: P, the 1-based positions the target reads.
        criterion: The committed criteria (:data:`CRITERION`).
    """
    lo, hi = criterion["attention_range"]
    inside = np.zeros(len(mean), dtype=bool)
    inside[[q - 1 for q in positions]] = True
    return bool(np.all((mean[inside] >= lo) & (mean[inside] <= hi)) and np.all(mean[~inside] <= criterion[
        "attention_elsewhere"]) and np.all(std <= criterion["attention_spread"]))


def cls_attention(model: Transformer, X: np.ndarray) -> np.ndarray:
    """The CLS token's attention weights in the last layer (InfoFlow §4.4's heat map).

    Args:
        model: A model with a CLS readout.
        X: Inputs (B, T, d).

    Returns:
        (B, h, T + 1): over the T input positions and, last, the CLS token itself.
    """
    if model.config.readout_dim is None:
        raise ValueError("model: the CLS attention needs a model with a CLS readout")
    with torch.no_grad():
        trace = model.trace(torch.as_tensor(np.asarray(X), dtype=next(model.parameters()).dtype))
    return trace.attention[-1][..., -1, :].double().numpy()


def attention_summary(results: Results, parameters: dict[str, Any] | None, store: RunStore, n_samples: int = 2048,
                      seed: int = 0) -> dict[str, Any]:
    """The CLS attention of the trained §4.4 model with the best NMSE (over the ``attention`` runs).

    Args:
        results: The runs of :func:`~transformer_theory.chapters.registry.run_experiment`.
        parameters: Overrides of the chapter's defaults (``None``: the defaults).
        store: The run store that keeps the attention runs' weights.
        n_samples: The number of fresh inputs.
        seed: The seed of those inputs.

    Returns:
        ``weights`` (n_samples, T) over the input positions, their ``mean`` and ``std`` over the samples,
        ``to_cls`` (the mean weight on the CLS token itself), ``observed`` (:func:`attention_observed`), the
        run's ``seed`` and ``nmse``.

    Raises:
        ValueError: no attention run has a finite NMSE.
    """
    results = split_doubled(results)[0]  # the doubling check is compared apart
    p = EXPERIMENT.parameters(parameters)
    configs = {r.config.key: r.config for r in EXPERIMENT.runs(p) if r.tags["part"] == "attention"}
    trained = [r for r in results if r.tags["part"] == "attention" and r.best_nmse is not None]
    if not trained:
        raise ValueError("results hold no attention run with a finite NMSE")
    best = min(trained, key=lambda r: r.best_nmse)
    model = trained_model(configs[best.record.key], store)
    tree = targets.specific_positions(tuple(p["positions"]), d=2)
    X = tree.sample_inputs(n_samples, p["seq_len"], np.random.default_rng(seed))
    w = cls_attention(model, X)[:, 0, :]  # (n, T + 1): one head
    inputs = w[:, : p["seq_len"]]
    mean, std = inputs.mean(axis=0), inputs.std(axis=0)
    return {"seed": best.tags["seed"], "nmse": best.best_nmse, "weights": inputs, "mean": mean, "std": std,
            "to_cls": float(w[:, -1].mean()), "observed": attention_observed(mean, std, list(p["positions"]))}


def cost_law_table(results: Results, parameters: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """One row per (T0, width) of the ``cost_law`` runs of ``results``.

    Args:
        results: The runs of :func:`~transformer_theory.chapters.registry.run_experiment`.
        parameters: Overrides of the chapter's defaults (``None``: the defaults).

    Returns:
        Rows sorted by T0 and width: ``T``, ``T0``, ``width``, ``nmse`` (best over seeds), ``seed_nmse``, the
        counted ``parameters`` (:func:`decoder_parameters`) and the calculator's ``predicted_exponent``.
    """
    results = split_doubled(results)[0]  # the doubling check is compared apart
    p = EXPERIMENT.parameters(parameters)
    exponent = {r["T0"]: r["exponent"] for r in calculator_predictions(p) if r["part"] == "cost_law"}
    rows = best_over_seeds([r for r in results if r.tags["part"] == "cost_law"], ignore=("part",))
    for row in rows:
        row.update(parameters=decoder_parameters(cost_model(p, row["width"])), predicted_exponent=exponent[row["T0"]])
    return sorted(rows, key=lambda r: (r["T0"], r["width"]))


def cost_law(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The committed cost-law criterion (:func:`cost_law_observed`) on the rows of :func:`cost_law_table`.

    Returns:
        :func:`cost_law_observed`'s result with ``predicted_slopes`` (T0 -> ``-2/k``) beside the measured ones.

    Raises:
        ValueError: a run diverged, or no pair of T0 is compared (the criterion would hold vacuously).
    """
    if any(r["nmse"] is None for r in rows):
        raise ValueError(f"cost law: runs without a finite NMSE: {[(r['T0'], r['width']) for r in rows if r['nmse'] is None]}")
    nmse: dict[int, dict[int, float]] = {}
    for r in rows:
        nmse.setdefault(r["T0"], {})[r["width"]] = r["nmse"]
    exponent = {r["T0"]: r["predicted_exponent"] for r in rows}
    params = {r["width"]: r["parameters"] for r in rows}
    judged = cost_law_observed(nmse, params, exponent)
    if not judged["pairs"]:
        raise ValueError(f"cost law: no two T0 whose predicted exponents differ by {CRITERION['exponent_gap']} "
                         f"or more ({exponent}): nothing to compare")
    judged["predicted_slopes"] = {T0: -2.0 / k for T0, k in exponent.items()}
    return judged


# ----------------------------------------------------------------------------------------------
# the chapter's protocol (:class:`~transformer_theory.chapters.experiment.Experiment`)
# ----------------------------------------------------------------------------------------------
def predictions(parameters: Mapping[str, Any]) -> dict[str, Any]:
    """What the chapter commits before its runs (:func:`predictions_document`): its parameters, the criteria
    (:data:`CRITERION`) and the calculator's predictions (:func:`calculator_predictions`)."""
    return predictions_document(dict(parameters))


def tables(results: Results, parameters: Mapping[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """The chapter's table of the cost-law runs: ``cost_law_table`` (:func:`cost_law_table`; the attention part
    reads weights, :func:`attention_summary`)."""
    return {"cost_law_table": cost_law_table(results, dict(parameters))}


def claims(results: Results, parameters: Mapping[str, Any], store: RunStore) -> dict[str, bool]:
    """The committed criteria's verdicts: ``attention_observed`` (:func:`attention_summary` of the best attention
    run, its weights read from ``store``, on 2048 inputs of seed ``seeds[0]``) and ``cost_law_observed``
    (:func:`cost_law`)."""
    p = dict(parameters)
    attention = attention_summary(results, p, store, n_samples=2048, seed=p["seeds"][0])
    return {"attention_observed": bool(attention["observed"]),
            "cost_law_observed": bool(cost_law(cost_law_table(results, p))["observed"])}


EXPERIMENT = Experiment("09_aggregation_cost", DEFAULTS, runs, predictions, tables, claims)


if __name__ == "__main__":  # pragma: no cover - the command that writes the committed predictions
    print(write_predictions())
