"""Max-position retrieval (InfoFlow Theorem 2 and §4.3, chapter ``08_max_position_retrieval``).

Three parts, one run list:

* ``one_layer`` -- ``b^T x(t_k)`` with ``t_k`` the position of the k-th largest ``q^T x(t)``
  (:func:`~transformer_theory.infoflow.targets.kth_largest`, d = 4), one layer with one head, for k in
  ``ks`` and every T: Theorem 2 (as summarised) says only k = 1 is cheap.
* ``two_layer`` -- the same target for k = ``two_layer_k`` with two layers (one head each): chapter 06's
  calculator predicts it efficient (the k-th largest as a pointer chase, a reconstruction); the prediction
  and the criterion for "observed" are committed before the training results (:data:`CRITERION`,
  :func:`predictions`).
* ``probe`` -- two-layer models with several head counts on InfoFlow §4.1's target
  ``sum_i max_{s,t} x(s)^T A_i x(t)`` for the linear probe of §4.3 (:func:`retrieval_probe`): the token of
  the largest layer-1 attention score can be read off the state after attention, the second-largest one
  cannot. The paper does not say which task its probe used; §4.1's is our choice.

Steps, widths, seeds and fresh samples every step (``train_size=None``) are ours.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from transformer_theory.checks import positive_real, seed_value
from transformer_theory.infoflow import targets
from transformer_theory.infoflow.architecture import Architecture
from transformer_theory.infoflow.prediction import predict
from transformer_theory.models.transformer import Transformer
from transformer_theory.training.ensemble import init_model
from transformer_theory.chapters.budget import doubled, split_doubled
from transformer_theory.chapters.experiment import (BEST_NMSE_STATISTIC, Experiment, ExperimentRun,
                                                    Results, applicable, best_over_seeds, experiment_run,
                                                    infoflow_model)
from transformer_theory.chapters.parameters import (TrainingParameters, defaults, double_seed_list, int_lists, int_rows,
                                                    param, positive_ints, seed_lists, setting)
from transformer_theory.chapters.predictions import calculator_document, write_committed
from transformer_theory.training.store import RunStore, trained_model

@dataclass(frozen=True)
class MaxPositionParameters(TrainingParameters):
    """The chapter's parameters, the names of its notebook's ``parameters`` cell (the profiles override them); every
    value is checked on construction (``ValueError`` naming the parameter). No ``train_size``: this chapter draws
    fresh samples at every step."""

    seq_lens: Sequence[int] = param((8, 16, 32, 64), "sequence lengths T of the retrieval runs")
    ks: Sequence[int] = param((1, 2, 3), "ranks k: the position of the k-th largest score is retrieved (one layer, "
                                         "one head)")
    embed_dim: int = param(8, "width E of the residual stream of the retrieval models")
    head_dim: int = param(8, "per-head query/key dimension of the retrieval models")
    two_layer_k: int = param(2, "rank k retrieved by the two-layer model (one head per layer)")
    steps: int = setting("steps", 5000)
    seeds: Sequence[int] = setting("seeds")
    target_seed: int = param(0, "seed of the target's random parameters")
    probe_D: int = param(2, "D of the probe's target, sum_i max_{s,t} x(s)^T A_i x(t) (InfoFlow §4.1)")
    probe_seq_len: int = param(16, "sequence length T of the probe")
    probe_heads: Sequence[Sequence[int]] = param(((2, 2), (1, 2), (2, 1), (1, 1)),
                                                 "head counts per layer of the probe's models")
    probe_embed_dim: int = param(32, "width E of the probe's models")
    probe_head_dim: int = param(16, "per-head query/key dimension of the probe's models")
    probe_steps: int = param(8000, "AdamW steps of each probe run")
    probe_seeds: Sequence[int] = param((0,), "seeds of each probe model")
    ffn_width: int = setting("ffn_width")
    double_seeds: Sequence[int] = param((), "seeds whose one-layer k >= 2 runs are trained again at twice the steps "
                                            "for the doubling check (empty: none)")

    def __post_init__(self) -> None:
        super().__post_init__()
        positive_ints(self, "embed_dim", "head_dim", "two_layer_k", "probe_D", "probe_seq_len", "probe_embed_dim",
                      "probe_head_dim", "probe_steps")
        int_lists(self, "seq_lens", "ks")
        int_rows(self, "probe_heads", "head counts per layer")
        seed_lists(self, "seeds", "probe_seeds")
        double_seed_list(self)
        seed_value(self.target_seed, "target_seed")


#: The chapter's defaults as its notebook's parameters cell holds them (lists, not tuples).
DEFAULTS: dict[str, Any] = defaults(MaxPositionParameters)

#: The observation criteria, fixed before any training of this chapter (committed with the predictions).
CRITERION: dict[str, Any] = {
    "statistic": BEST_NMSE_STATISTIC,
    "max_growth": 4.0,
    "top1_threshold": 0.05,
    "separation": 5.0,
    "two_layer_threshold": 0.1,
    "two_layer_vs_one_layer": 0.5,
    "top1_if": ("one layer, k = 1 stays low: its best NMSE at the largest T is at most top1_threshold and at most "
                "max_growth times its best NMSE at the smallest T"),
    "kth_if": ("one layer, every k >= 2 degrades: its best NMSE at the largest T exceeds its best NMSE at the "
               "smallest T and is at least separation times the k = 1 NMSE at the largest T"),
    "two_layer_efficient_if": ("two layers, k = two_layer_k: observed efficient iff its best NMSE at the largest T "
                               "is at most two_layer_threshold, at most max_growth times its best NMSE at the "
                               "smallest T, and at most two_layer_vs_one_layer times the one-layer NMSE of the "
                               "same k at the largest T; otherwise observed inefficient"),
    "agrees_if": "the two-layer configuration agrees iff observed efficient == predicted efficient",
    "probe_argmax_ratio": 0.84,
    "probe_second_ratio": 0.9,
    "probe_if": ("every probed configuration has a layer-1 head whose argmax recovery-error ratio (trained / "
                 "initialisation) is at most probe_argmax_ratio (the largest ratio the paper reports), and every "
                 "such head has a second-largest ratio of at least probe_second_ratio"),
}

#: Where the predictions are committed, relative to the repository root.
PREDICTIONS_FILE = Path("results") / "book" / "08_max_position_retrieval_predictions.json"


def max_position_runs(p: MaxPositionParameters) -> list[ExperimentRun]:
    """The chapter's runs, tagged ``part`` (``one_layer``, ``two_layer``, ``probe``), ``layers``, ``heads``,
    ``k`` (or ``D``), ``T`` and ``seed``; then the doubling check's (:func:`~transformer_theory.chapters.budget.doubled`:
    the one-layer k >= 2 runs of the seeds ``double_seeds`` at twice the steps, ``part`` ``double_budget``)."""
    out = []
    s = p.settings()
    kth = [("one_layer", [1], k) for k in p.ks] + [("two_layer", [1, 1], p.two_layer_k)]
    for T in p.seq_lens:
        for part, heads, k in kth:
            model = infoflow_model(s, heads, p.embed_dim, p.head_dim, s["ffn_width"])
            for seed in p.seeds:
                run = experiment_run(s, model, "kth_largest", {"k": k, "d": 4, "seed": p.target_seed}, T, seed)
                out.append(ExperimentRun({"part": part, "layers": len(heads), "heads": heads, "k": k, "T": T,
                                          "seed": seed}, run))
    for heads in p.probe_heads:
        model = infoflow_model(s, heads, p.probe_embed_dim, p.probe_head_dim, s["ffn_width"])
        for seed in p.probe_seeds:
            args = {"D": p.probe_D, "d": 4, "seed": p.target_seed}
            run = experiment_run(s, model, "pairwise_max", args, p.probe_seq_len, seed, steps=p.probe_steps)
            out.append(ExperimentRun({"part": "probe", "layers": 2, "heads": list(heads), "D": p.probe_D,
                                      "T": p.probe_seq_len, "seed": seed}, run, weights=True))
    return out + doubled(out, lambda tags: tags["part"] == "one_layer" and tags["k"] >= 2
                         and tags["seed"] in p.double_seeds)


def runs(parameters: Mapping[str, Any]) -> list[ExperimentRun]:
    """The chapter's runs (:func:`max_position_runs`) for its complete ``parameters`` (a dict)."""
    return max_position_runs(MaxPositionParameters(**parameters))


# ----------------------------------------------------------------------------------------------
# predictions (chapter 06's calculator) and the committed criteria
# ----------------------------------------------------------------------------------------------
def calculator_predictions(p: dict[str, Any], gamma: float = 1.0) -> list[dict[str, Any]]:
    """The calculator's prediction for every k-th largest configuration of ``p``.

    Args:
        p: The chapter's parameters as a dict (:data:`DEFAULTS` overridden).
        gamma: The FFN's approximation exponent (:func:`~transformer_theory.infoflow.predict`).

    Returns:
        One row per (layers, k, T): ``part``, ``layers``, ``heads``, ``k``, ``T``, ``E``, ``efficient``,
        ``exponent``, ``regime``, ``formula`` and ``reason``.
    """
    rows = []
    E = p["embed_dim"]
    for part, heads, k in [("one_layer", (1,), k) for k in p["ks"]] + [("two_layer", (1, 1), p["two_layer_k"])]:
        tree = targets.kth_largest(k, d=4, seed=p["target_seed"])
        for T in p["seq_lens"]:
            pred = predict(tree, Architecture(heads, E, 4), T, gamma=gamma)
            rows.append({"part": part, "layers": len(heads), "heads": list(heads), "k": k, "T": T, "E": E,
                         "efficient": pred.efficient, "exponent": round(pred.exponent, 6), "regime": pred.regime,
                         "formula": pred.formula, "reason": pred.reason})
    return rows


def predictions_document(p: dict[str, Any]) -> dict[str, Any]:
    """What is committed before the training results (:data:`PREDICTIONS_FILE`), without the provenance."""
    return calculator_document("08", "k-th largest retrieval, one and two layers", p,
                               ("seq_lens", "ks", "embed_dim", "head_dim", "two_layer_k", "target_seed"), CRITERION,
                               calculator_predictions(p))


def write_predictions(path: str | Path | None = None) -> Path:
    """Write :func:`predictions_document` for the chapter's defaults (its book sizes) with the git commit and
    versions, atomically, to ``path`` (default :data:`PREDICTIONS_FILE` in the repository)."""
    return write_committed(predictions_document(DEFAULTS), PREDICTIONS_FILE, path)


def nmse_table(results: Results, parameters: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """One row per k-th largest configuration and T of ``results`` (the probe runs left out).

    Args:
        results: The runs of :func:`~transformer_theory.chapters.registry.run_experiment`.
        parameters: Overrides of the chapter's defaults (``None``: the defaults).

    Returns:
        Rows sorted by layers, k and T: ``part``, ``layers``, ``k``, ``T``, ``nmse`` (best validation NMSE over
        seeds), ``seed_nmse`` and the calculator's ``predicted_efficient`` and ``predicted_exponent``
        (:func:`calculator_predictions`).
    """
    results = split_doubled(results)[0]  # the doubling check is compared apart
    p = EXPERIMENT.parameters(parameters)
    predicted = {(r["part"], r["k"], r["T"]): r for r in calculator_predictions(p)}
    rows = best_over_seeds([r for r in results if r.tags["part"] != "probe"], ignore=("heads",))
    for row in rows:
        pred = predicted[(row["part"], row["k"], row["T"])]
        row.update(predicted_efficient=pred["efficient"], predicted_exponent=pred["exponent"])
    return sorted(rows, key=lambda r: (r["layers"], r["k"], r["T"]))


def judge_table(rows: Sequence[dict[str, Any]], two_layer_k: int) -> dict[str, Any]:
    """:func:`judge` on the rows of :func:`nmse_table`.

    Args:
        rows: The rows of :func:`nmse_table`.
        two_layer_k: The k of the two-layer runs.

    Returns:
        :func:`judge`'s verdicts with ``two_layer_predicted_efficient`` and ``agrees``: the two-layer verdict
        equals the committed prediction.

    Raises:
        ValueError: a configuration has no finite NMSE, the two-layer runs are missing, or the two-layer
            prediction changes with T.
    """
    nmse = {}
    for r in rows:
        if r["nmse"] is None:
            raise ValueError(f"{r['part']} k = {r['k']}, T = {r['T']}: no finite NMSE (diverged)")
        nmse.setdefault((r["part"], r["k"]), {})[r["T"]] = r["nmse"]
    one_layer = {k: v for (part, k), v in nmse.items() if part == "one_layer"}
    if ("two_layer", two_layer_k) not in nmse:
        raise ValueError(f"rows: no two-layer runs for k = {two_layer_k}")
    judged = judge(one_layer, nmse[("two_layer", two_layer_k)], two_layer_k)
    predicted = {r["predicted_efficient"] for r in rows if r["part"] == "two_layer"}
    if len(predicted) != 1:
        raise ValueError(f"the two-layer prediction changes with T ({predicted}): the criterion compares one verdict")
    judged["two_layer_predicted_efficient"] = predicted.pop()
    judged["agrees"] = judged["two_layer_observed_efficient"] == judged["two_layer_predicted_efficient"]
    return judged


def probe_table(results: Results, parameters: dict[str, Any] | None, store: RunStore, n_samples: int = 4096,
                seed: int = 0) -> list[dict[str, Any]]:
    """:func:`probe_ratios` of every trained probe run of ``results`` against the same model at its
    initialisation.

    Args:
        results: The runs of :func:`~transformer_theory.chapters.registry.run_experiment`.
        parameters: Overrides of the chapter's defaults (``None``: the defaults).
        store: The run store that keeps the probe runs' weights.
        n_samples: The number of fresh inputs of the probe target.
        seed: The seed of those inputs.

    Returns:
        One row per run and layer-1 head: the run's ``heads``, ``seed`` and ``nmse`` and the head's
        :func:`probe_ratios` row.

    Raises:
        ValueError: ``results`` hold no probe run.
    """
    p = EXPERIMENT.parameters(parameters)
    probes = {r.config.key: r.config for r in EXPERIMENT.runs(p) if r.tags["part"] == "probe"}
    tree = targets.pairwise_max(p["probe_D"], d=4, seed=p["target_seed"])
    X = tree.sample_inputs(n_samples, p["probe_seq_len"], np.random.default_rng(seed))
    rows = []
    for r in results:
        if r.tags["part"] != "probe":
            continue
        run = probes[r.record.key]
        for row in probe_ratios(trained_model(run, store), init_model(run.model, run.seed).eval(), X):
            rows.append({"heads": list(r.tags["heads"]), "seed": r.tags["seed"], "nmse": r.best_nmse, **row})
    if not rows:
        raise ValueError("results hold no probe run")
    return rows


def _growth(nmse_by_T: dict[int, float]) -> float:
    return nmse_by_T[max(nmse_by_T)] / nmse_by_T[min(nmse_by_T)]


def judge(one_layer: dict[int, dict[int, float]], two_layer: dict[int, float], two_layer_k: int,
          criterion: dict[str, Any] = CRITERION) -> dict[str, Any]:
    """The committed criteria applied to best validation NMSEs.

    Args:
        one_layer: ``one_layer[k][T]``, the one-layer runs' best NMSE (k = 1 and k = ``two_layer_k`` needed).
        two_layer: ``two_layer[T]``, the two-layer runs' best NMSE.
        two_layer_k: The k of the two-layer runs.
        criterion: The committed criteria (:data:`CRITERION`).

    Returns:
        ``top1_stays_low``, ``kth_degrades`` (k -> whether the one-layer k >= 2 degraded) and
        ``two_layer_observed_efficient``.

    Raises:
        ValueError: fewer than two sequence lengths, a non-positive NMSE, a missing k, or a two-layer largest T
            other than the one-layer one.
    """
    c = criterion
    for name, table in [*((f"one-layer k = {k}", v) for k, v in one_layer.items()), ("two-layer", two_layer)]:
        if len(table) < 2:
            raise ValueError(f"{name}: the criterion compares at least two sequence lengths, got {sorted(table)}")
        for T, v in table.items():
            positive_real(f"{name} best NMSE at T = {T}", v)
    for k in (1, two_layer_k):
        if k not in one_layer:
            raise ValueError(f"one_layer: the criterion needs the one-layer k = {k} runs")
    top, T_max = one_layer[1], max(one_layer[1])
    if max(two_layer) != T_max:
        raise ValueError(f"two_layer: its largest T = {max(two_layer)} differs from the one-layer runs' {T_max}")
    top1 = top[T_max] <= c["top1_threshold"] and _growth(top) <= c["max_growth"]
    kth = {k: _growth(v) > 1 and v[T_max] >= c["separation"] * top[T_max] for k, v in one_layer.items() if k >= 2}
    last = two_layer[T_max]
    efficient = (last <= c["two_layer_threshold"] and _growth(two_layer) <= c["max_growth"]
                 and last <= c["two_layer_vs_one_layer"] * one_layer[two_layer_k][T_max])
    return {"top1_stays_low": top1, "kth_degrades": kth, "two_layer_observed_efficient": efficient}


def probe_observed(rows: list[dict[str, Any]], criterion: dict[str, Any] = CRITERION) -> bool:
    """The committed probe criterion.

    Args:
        rows: :func:`probe_table` rows (one per run and layer-1 head, with ``heads``).
        criterion: The committed criteria (:data:`CRITERION`).

    Returns:
        Whether every configuration has a head whose ``argmax_ratio`` is at most ``probe_argmax_ratio`` and every
        such head has a ``second_ratio`` of at least ``probe_second_ratio``.

    Raises:
        ValueError: ``rows`` is empty.
    """
    configs: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        configs.setdefault(str(r["heads"]), []).append(r)
    if not configs:
        raise ValueError("rows: no probed configuration")
    for heads in configs.values():
        good = [r for r in heads if r["argmax_ratio"] <= criterion["probe_argmax_ratio"]]
        if not good or any(r["second_ratio"] < criterion["probe_second_ratio"] for r in good):
            return False
    return True


# ----------------------------------------------------------------------------------------------
# the linear probe of InfoFlow §4.3
# ----------------------------------------------------------------------------------------------
def _relative_error(features: np.ndarray, y: np.ndarray, n_fit: int) -> float:
    """Least-squares affine map fitted on the first ``n_fit`` rows; on the others, the mean squared residual
    over the variance of ``y`` (1 = no better than the mean)."""
    A = np.hstack([features, np.ones((len(features), 1))])
    coef, *_ = np.linalg.lstsq(A[:n_fit], y[:n_fit], rcond=None)
    test, truth = A[n_fit:] @ coef, y[n_fit:]
    return float(((test - truth) ** 2).sum() / ((truth - y[:n_fit].mean(axis=0)) ** 2).sum())


def retrieval_probe(model: Transformer, X: np.ndarray, fit_fraction: float = 0.5) -> list[dict[str, float]]:
    """InfoFlow §4.3's probe, for every active head of layer 1 of ``model`` on inputs ``X`` (B, T, d).

    For each token t (queries and keys: the T input tokens, CLS left out) the head's largest and
    second-largest attention scores select ``s1(t)`` and ``s2(t)``; an affine map from the post-attention
    state at t (the residual stream after layer 1's SA layer) to the raw token ``x(s1(t))`` (and
    ``x(s2(t))``) is fitted by least squares on the first ``fit_fraction`` of the sequences and its relative
    error measured on the rest.

    Args:
        model: A model with a layer 1 to probe.
        X: Inputs (B, T, d).
        fit_fraction: The fraction of the B sequences the maps are fitted on, in (0, 1).

    Returns:
        ``{"head", "argmax_error", "second_error"}`` per active head of layer 1 (heads numbered from 1; an error
        of 1: no better than the mean).
    """
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 3 or X.shape[-1] != model.config.d:
        raise ValueError(f"X must have shape (batch, T, {model.config.d}), got {X.shape}")
    if not 0 < fit_fraction < 1:
        raise ValueError(f"fit_fraction must lie in (0, 1), got {fit_fraction!r}")
    B, T, d = X.shape
    fitted = int(B * fit_fraction)
    if not 0 < fitted < B:
        raise ValueError(f"batch = {B}: too few sequences to fit on some and test on the others")
    n_fit = fitted * T
    with torch.no_grad():
        trace = model.trace(torch.as_tensor(X, dtype=next(model.parameters()).dtype))
    weights = trace.attention[0][:, :, :T, :T].double().numpy()  # (B, h, T, T)
    state = trace.post_attention[0][:, :T].double().numpy().reshape(B * T, -1)
    order = np.argsort(-weights, axis=-1)
    active = (model.config.active_heads or model.config.heads)[0]
    rows = []
    for head in range(active):
        errors = {}
        for name, rank in (("argmax_error", 0), ("second_error", 1)):
            picked = order[:, head, :, rank]  # (B, T): the selected position of each query token
            y = np.take_along_axis(X, picked[..., None], axis=1).reshape(B * T, d)
            errors[name] = _relative_error(state, y, n_fit)
        rows.append({"head": head + 1, **errors})
    return rows


def probe_ratios(trained: Transformer, initial: Transformer, X: np.ndarray) -> list[dict[str, float]]:
    """:func:`retrieval_probe` of the trained model over that of the same model at its initialisation.

    Args:
        trained: The trained model.
        initial: The same model at its initialisation (:func:`~transformer_theory.training.init_model`).
        X: Inputs (B, T, d).

    Returns:
        Per head: ``head``, both models' errors (``argmax_trained``, ``argmax_init``, ``second_trained``,
        ``second_init``) and their ratios ``argmax_ratio`` and ``second_ratio`` (the paper reports 0.08 to 0.84,
        and about 1.0).
    """
    rows = []
    for t, i in zip(retrieval_probe(trained, X), retrieval_probe(initial, X)):
        rows.append({"head": t["head"], "argmax_trained": t["argmax_error"], "argmax_init": i["argmax_error"],
                     "argmax_ratio": t["argmax_error"] / i["argmax_error"], "second_trained": t["second_error"],
                     "second_init": i["second_error"], "second_ratio": t["second_error"] / i["second_error"]})
    return rows


# ----------------------------------------------------------------------------------------------
# the chapter's protocol (:class:`~transformer_theory.chapters.experiment.Experiment`)
# ----------------------------------------------------------------------------------------------
def predictions(parameters: Mapping[str, Any]) -> dict[str, Any]:
    """What the chapter commits before its runs (:func:`predictions_document`): its parameters, the criteria
    (:data:`CRITERION`) and the calculator's predictions (:func:`calculator_predictions`)."""
    return predictions_document(dict(parameters))


def tables(results: Results, parameters: Mapping[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """The chapter's table of the k-th largest runs: ``nmse_table`` (:func:`nmse_table`; the probe's table reads
    weights, :func:`probe_table`)."""
    return {"nmse_table": nmse_table(results, dict(parameters))}


def claims(results: Results, parameters: Mapping[str, Any], store: RunStore) -> dict[str, bool]:
    """The committed criteria's verdicts (:func:`judge_table`, :func:`probe_observed`): ``top1_stays_low``,
    ``kth_degrades_k<k>`` for every k >= 2, ``two_layer_agrees`` (the two-layer verdict is the committed prediction)
    and ``probe_observed`` (the probe on 4096 inputs of seed ``seeds[0]``, the weights read from ``store``)."""
    p = dict(parameters)
    judged = judge_table(nmse_table(results, p), p["two_layer_k"])
    probe = probe_table(results, p, store, n_samples=4096, seed=p["seeds"][0])
    return applicable({"top1_stays_low": judged["top1_stays_low"],
                       **{f"kth_degrades_k{k}": v for k, v in judged["kth_degrades"].items()},
                       "two_layer_agrees": judged["agrees"], "probe_observed": probe_observed(probe)})


EXPERIMENT = Experiment("08_max_position_retrieval", DEFAULTS, runs, predictions, tables, claims)


if __name__ == "__main__":  # pragma: no cover - the command that writes the committed predictions
    print(write_predictions())
