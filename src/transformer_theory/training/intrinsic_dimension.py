"""The runs of chapter 10: InfoFlow's intrinsic-dimension experiment and the single-layer head count it recovers.

* **Intrinsic dimension** (InfoFlow §4.1): ``F(X) = Σ_{i≤D} max_{s,t} x(s)ᵀ A_i x(t)``, d = 4
  (:func:`~transformer_theory.infoflow.targets.pairwise_max`), two layers with
  (h1, h2) ∈ {(D, D), (D−1, D), (D, D−1)} for each D. InfoFlow predicts that only (D, D) is efficient: the
  inner maxima need D retrievals per token in layer 1, the outer ones D retrievals at the CLS token in layer 2.
  Heads are narrow (per-head dimension ``head_dim``, width ``E = embed_dim_per_D · D``), so a missing head
  cannot be made up for by a wide one.
* **Head count, one layer** (the predecessor P1, Table 2; InfoFlow recovers its bound): ``Σ_{i≤4} max_t
  a_iᵀ x(t)`` (:func:`~transformer_theory.infoflow.targets.max_retrieval`, D = 4), one layer with h heads of
  dimension ``hc_head_dim`` (E = ``hc_head_dim`` · h), at a few sequence lengths. Predicted efficient iff h ≥ D.

Both use the InfoFlow/P1 model of :func:`~transformer_theory.training.experiment.infoflow_model`; the
parameters below are the chapter's ``parameters`` cell (the profiles override them). The tables a chapter shows
are :func:`nmse_table` and :func:`head_count_table`, with the papers' numbers
(:mod:`transformer_theory.infoflow.reference`) and InfoFlow's prediction for each row.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from transformer_theory.infoflow import targets
from transformer_theory.infoflow.architecture import Architecture
from transformer_theory.infoflow.prediction import predict
from transformer_theory.infoflow.reference import INTRINSIC_DIMENSION_NMSE, P1_SINGLE_LAYER_NMSE
from transformer_theory.training.experiment import (TRAINING_DEFAULTS, Experiment, ExperimentRun, best_over_seeds,
                                                    experiment_run, infoflow_model)

__all__ = ["DEFAULTS", "EXPERIMENT", "head_configs", "intrinsic_dimension_runs", "head_count_runs", "nmse_table",
           "head_count_table", "separation_ratios"]

#: The chapter's parameters (the book profile's sizes; ``params/*.yaml`` holds the others): the
#: intrinsic-dimension runs, then the head-count runs (prefix ``hc_``).
DEFAULTS: dict[str, Any] = {
    **{k: v for k, v in TRAINING_DEFAULTS.items() if k != "ffn_width"},
    "seeds": [0],
    "D_values": [2, 3],
    "seq_len": 16,
    "head_dim": 4,
    "embed_dim_per_D": 16,
    "ffn_width_per_D": 32,
    "target_seed": 0,
    "hc_D": 4,
    "hc_heads": [1, 2, 3, 4, 5],
    "hc_seq_lens": [16],
    "hc_head_dim": 8,
    "hc_ffn_width": 32,
    "hc_steps": 3000,
    "hc_train_size": 100_000,
    "hc_seeds": [0],
}

#: The column names of InfoFlow's table (§4.1) for each head configuration.
CONFIG_NAMES = {(0, 0): "(D,D)", (-1, 0): "(D-1,D)", (0, -1): "(D,D-1)"}


def head_configs(D: int) -> list[tuple[int, int]]:
    """(h1, h2) ∈ {(D, D), (D−1, D), (D, D−1)}: InfoFlow §4.1's head configurations for intrinsic dimension D."""
    return [(D + a, D + b) for a, b in CONFIG_NAMES]


def intrinsic_dimension_runs(p: dict[str, Any]) -> list[ExperimentRun]:
    """The §4.1 runs: every D, head configuration and seed (tags ``part``, ``D``, ``h1``, ``h2``, ``T``, ``seed``)."""
    runs = []
    T = p["seq_len"]
    for D in p["D_values"]:
        E, width = p["embed_dim_per_D"] * D, p["ffn_width_per_D"] * D
        for h1, h2 in head_configs(D):
            model = infoflow_model(p, (h1, h2), E, p["head_dim"], width)
            for seed in p["seeds"]:
                tags = {"part": "intrinsic_dimension", "D": D, "h1": h1, "h2": h2, "T": T, "seed": seed}
                args = {"D": D, "d": 4, "seed": p["target_seed"]}
                runs.append(ExperimentRun(tags, experiment_run(p, model, "pairwise_max", args, T, seed)))
    return runs


def head_count_runs(p: dict[str, Any]) -> list[ExperimentRun]:
    """The single-layer head-count runs (tags ``part``, ``D``, ``h``, ``T``, ``seed``)."""
    runs = []
    D, n = p["hc_D"], p["hc_head_dim"]
    for T in p["hc_seq_lens"]:
        for h in p["hc_heads"]:
            model = infoflow_model(p, (h,), n * h, n, p["hc_ffn_width"])
            for seed in p["hc_seeds"]:
                tags = {"part": "head_count", "D": D, "h": h, "T": T, "seed": seed}
                args = {"D": D, "d": 4, "seed": p["target_seed"]}
                hc = {**p, "steps": p["hc_steps"], "train_size": p["hc_train_size"]}
                runs.append(ExperimentRun(tags, experiment_run(hc, model, "max_retrieval", args, T, seed)))
    return runs


def _build(p: dict[str, Any]) -> list[ExperimentRun]:
    return head_count_runs(p) + intrinsic_dimension_runs(p)  # the cheap runs first


EXPERIMENT = Experiment("10_intrinsic_dimension", DEFAULTS, _build)


def _part(results: Sequence[tuple[dict[str, Any], dict[str, Any]]], part: str):
    return [(tags, record) for tags, record in results if tags["part"] == part]


def nmse_table(results: Sequence[tuple[dict[str, Any], dict[str, Any]]]) -> list[dict[str, Any]]:
    """One row per (D, h1, h2) of the §4.1 runs in ``results`` (``(tags, record)`` pairs of
    :func:`~transformer_theory.training.experiments.run_experiment`): ``D``, ``h1``, ``h2``, ``nmse`` (best
    validation NMSE, minimum over seeds), ``paper_nmse`` (InfoFlow §4.1 at T = 64, ``None`` where the paper has
    no such cell), ``predicted_efficient`` (:func:`~transformer_theory.infoflow.predict` for the trained
    architecture at the trained T), ``config`` (the paper's column name), ``T``, ``seed_nmse``."""
    rows = []
    widths = {tags["D"]: record["config"]["model"]["embed_dim"] for tags, record in _part(results, "intrinsic_dimension")}
    for row in best_over_seeds(_part(results, "intrinsic_dimension")):
        D, h1, h2 = row["D"], row["h1"], row["h2"]
        name = CONFIG_NAMES.get((h1 - D, h2 - D))
        paper = INTRINSIC_DIMENSION_NMSE.get(D, {}).get(name)
        arch = Architecture((h1, h2), widths[D], 4)
        efficient = predict(targets.pairwise_max(D), arch, row["T"]).efficient
        rows.append({"D": D, "h1": h1, "h2": h2, "nmse": row["nmse"], "paper_nmse": paper,
                     "predicted_efficient": bool(efficient), "config": name, "T": row["T"],
                     "seed_nmse": row["seed_nmse"]})
    return rows


def separation_ratios(rows: Sequence[dict[str, Any]]) -> dict[int, float | None]:
    """For each D of :func:`nmse_table` rows: the smaller NMSE of the two missing-head configurations divided
    by the NMSE of (D, D) (``None`` if a value is missing). InfoFlow's table gives 10³ (D = 2) down to 3 (D = 6)."""
    out: dict[int, float | None] = {}
    for D in sorted({r["D"] for r in rows}):
        cells = {r["config"]: r["nmse"] for r in rows if r["D"] == D}
        full, missing = cells.get("(D,D)"), [cells.get("(D-1,D)"), cells.get("(D,D-1)")]
        ok = full is not None and full > 0 and all(m is not None for m in missing)
        out[D] = min(missing) / full if ok else None
    return out


def head_count_table(results: Sequence[tuple[dict[str, Any], dict[str, Any]]]) -> list[dict[str, Any]]:
    """One row per (T, h) of the head-count runs: ``T``, ``h``, ``nmse`` (minimum over seeds), ``paper_nmse``
    and ``paper_std`` (P1 Table 2, mean and standard deviation over seeds; ``None`` at a T the table lacks),
    ``predicted_efficient``, ``seed_nmse``."""
    rows = []
    for row in best_over_seeds(_part(results, "head_count")):
        D, h, T = row["D"], row["h"], row["T"]
        mean, std = P1_SINGLE_LAYER_NMSE.get(h, {}).get(T, (None, None)) if D == 4 else (None, None)
        arch = Architecture((h,), 8 * h, 4)
        rows.append({"T": T, "h": h, "nmse": row["nmse"], "paper_nmse": mean, "paper_std": std,
                     "predicted_efficient": bool(predict(targets.max_retrieval(D), arch, T).efficient),
                     "D": D, "seed_nmse": row["seed_nmse"]})
    return sorted(rows, key=lambda r: (r["T"], r["h"]))
