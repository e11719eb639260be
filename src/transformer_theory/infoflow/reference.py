"""The papers' reported numbers, and the predictions for the configurations the book's chapters train.

Provenance: InfoFlow's tables (§4.1 intrinsic dimension, §4.2 triangle center) are **the paper's
numbers as extracted by two independent secondary summaries, which agree digit for digit**; the
InfoFlow paper itself could not be read (see the book's page on how it reconstructs the papers). P1's tables (Yu et al. 2026,
head count, ICLR 2026) were read in full. Per-head / embedding dimensions not given by the papers are
our choices and are marked in ``note``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from transformer_theory.infoflow import targets
from transformer_theory.infoflow.architecture import Architecture
from transformer_theory.infoflow.prediction import predict

#: InfoFlow §4.1, best validation NMSE, d = 4, T = 64, 2 layers, NoPE (both summaries agree).
INTRINSIC_DIMENSION_NMSE: dict[int, dict[str, float]] = {
    2: {"(D,D)": 5.89e-5, "(D-1,D)": 5.89e-2, "(D,D-1)": 3.67e-2},
    3: {"(D,D)": 6.37e-5, "(D-1,D)": 2.64e-2, "(D,D-1)": 2.07e-2},
    4: {"(D,D)": 6.92e-5, "(D-1,D)": 1.39e-2, "(D,D-1)": 1.30e-2},
    5: {"(D,D)": 4.69e-4, "(D-1,D)": 4.46e-3, "(D,D-1)": 7.19e-3},
    6: {"(D,D)": 1.99e-3, "(D-1,D)": 6.26e-3, "(D,D-1)": 7.67e-3},
}

#: InfoFlow §4.2, best validation NMSE of the triangle center (one summary; the other gives the same trend).
TRIANGLE_CENTER_NMSE: dict[int, dict[str, float]] = {
    8: {"(2,2),E=24": 0.086, "(4,4),E=24": 0.072, "(4,4),E=48": 0.080},
    16: {"(2,2),E=24": 0.843, "(4,4),E=24": 0.853, "(4,4),E=48": 0.856},
    32: {"(2,2),E=24": 0.957, "(4,4),E=24": 0.958, "(4,4),E=48": 0.959},
    64: {"(2,2),E=24": 0.985, "(4,4),E=24": 0.985, "(4,4),E=48": 0.985},
}

#: P1 Table 2 (read in full): single layer, target ``sum_{i<=4} max_t a_i^T x(t)`` (D = 4), d = 4, per-head
#: dimension 8 (E = 8h), 8000 training and 2000 validation samples; validation NMSE as (mean, std) over
#: seeds, by heads h and sequence length T.
P1_SINGLE_LAYER_NMSE: dict[int, dict[int, tuple[float, float]]] = {
    1: {8: (7.01e-2, 6.0e-2), 16: (1.09e-1, 9.9e-2), 32: (1.10e-1, 9.4e-2), 64: (1.14e-1, 8.5e-2),
        128: (1.45e-1, 1.05e-1)},
    2: {8: (7.31e-3, 4.8e-4), 16: (8.41e-3, 8.0e-4), 32: (9.42e-3, 6.4e-4), 64: (1.31e-2, 1.16e-2),
        128: (1.47e-2, 1.21e-2)},
    3: {8: (6.94e-4, 2.9e-4), 16: (6.40e-4, 3.9e-4), 32: (9.09e-4, 4.3e-4), 64: (1.31e-3, 5.1e-4),
        128: (1.58e-3, 5.2e-4)},
    4: {8: (6.10e-5, 1.5e-4), 16: (4.36e-5, 1.9e-4), 32: (4.80e-5, 2.3e-4), 64: (8.75e-6, 5.6e-5),
        128: (5.23e-6, 5.7e-6)},
    5: {8: (3.35e-5, 5.8e-5), 16: (1.10e-5, 2.4e-5), 32: (4.91e-6, 6.3e-6), 64: (4.19e-6, 8.4e-6),
        128: (3.99e-6, 4.3e-6)},
}

#: P1 Table 2 at T = 64 (mean validation NMSE), the column chapter 06 judges.
P1_SINGLE_LAYER_T64_NMSE: dict[int, float] = {h: row[64][0] for h, row in P1_SINGLE_LAYER_NMSE.items()}

#: P1 Table 5: two layers, D = 4, E = 32, NoPE, NoLN: (min, max) best NMSE over T in {8, ..., 128}.
P1_TWO_LAYER_NMSE_RANGE: dict[int, tuple[float, float]] = {
    1: (1.85e-4, 4.28e-4), 2: (2.69e-6, 7.22e-6), 3: (1.73e-6, 8.16e-6), 4: (1.87e-6, 5.98e-6), 5: (3.02e-6, 6.15e-6),
}


@dataclass(frozen=True)
class Config:
    """One configuration of an experiment chapter, with what the papers observed."""

    experiment: str
    target: Callable[[], Any]
    target_name: str
    heads: tuple[int, ...]
    embed_dim: int
    input_dim: int
    seq_len: int
    observed: str                    # the papers' number or reading, with its source
    observed_efficient: bool | None  # the papers' reading (None: not run in the papers)
    positional: bool = False
    note: str = field(default="")


def missing_head_costs() -> dict[int, float]:
    """InfoFlow §4.1's cost of one head fewer, by D: the better missing-head NMSE of :data:`INTRINSIC_DIMENSION_NMSE`
    over the (D, D) NMSE (the summaries' numbers)."""
    return {D: min(r["(D-1,D)"], r["(D,D-1)"]) / r["(D,D)"] for D, r in INTRINSIC_DIMENSION_NMSE.items()}


def experiment_configs() -> list[Config]:
    """The configurations of the papers' experiments and theorems (the calibration set of chapter 06),
    each with the papers' observation."""
    rows: list[Config] = []
    for D, res in INTRINSIC_DIMENSION_NMSE.items():
        for key, heads in (("(D,D)", (D, D)), ("(D-1,D)", (D - 1, D)), ("(D,D-1)", (D, D - 1))):
            rows.append(Config("intrinsic dimension (InfoFlow §4.1)", lambda D=D: targets.pairwise_max(D),
                               f"pairwise_max(D={D})", heads, 16 * D, 4, 64,
                               f"NMSE {res[key]:.3g} (both summaries)", key == "(D,D)", note="E = 16 D (ours)"))
    for T, res in TRIANGLE_CENTER_NMSE.items():
        for key, heads, E in (("(2,2),E=24", (2, 2), 24), ("(4,4),E=24", (4, 4), 24), ("(4,4),E=48", (4, 4), 48)):
            rows.append(Config("triangle center (InfoFlow §4.2)", targets.triangle_center, "triangle_center",
                               heads, E, 2, T, f"NMSE {res[key]:.3g} (one summary)", False))
    for T in (8, 32):
        for heads in ((1,), (4,), (1, 1)):
            rows.append(Config("depth separation (Theorem 1)", targets.min_pairwise_dot, "min_pairwise_dot",
                               heads, 32, 4, T, "theory only: 1 layer eps^-k(T), 2 layers (1,1) O(eps^-1)",
                               len(heads) == 2, note="no experiment in the paper"))
    for heads in ((1,), (4,), (1, 1)):
        rows.append(Config("induction head (Sanford et al. 2024)", lambda: targets.k_hop(1), "k_hop(k=1)", heads,
                           32, 4, 32, "theory: one layer needs size growing with T, two layers suffice "
                           "(recovered by InfoFlow, as summarised)", len(heads) == 2,
                           note="content-addressed pointers (ours), no experiment in the papers"))
    for h in range(1, 6):
        rows.append(Config("head count, 1 layer (P1 Table 2)", lambda: targets.max_retrieval(4), "max_retrieval(D=4)",
                           (h,), 8 * h, 4, 64, f"NMSE {P1_SINGLE_LAYER_T64_NMSE[h]:.3g} (P1, T=64)", h >= 4))
    for h in range(1, 6):
        lo, hi = P1_TWO_LAYER_NMSE_RANGE[h]
        rows.append(Config("head count, 2 layers (P1 Table 5)", lambda: targets.max_retrieval(4),
                           "max_retrieval(D=4)", (h, h), 32, 4, 64, f"NMSE {lo:.3g}-{hi:.3g} (P1, T=8..128)", h >= 2))
    for k, obs in ((1, "argmax recoverable: error ratio 0.08-0.84 (§4.3 probe)"),
                   (2, "2nd largest not recoverable: ratio ~1.0 (§4.3 probe)")):
        rows.append(Config("top-1 vs k-th retrieval (Theorem 2)", lambda k=k: targets.kth_largest(k),
                           f"kth_largest(k={k})", (1,), 8, 4, 16, obs, k == 1,
                           note="probe used 2-layer models on a D-retrieval task"))
    rows.append(Config("specific positions (InfoFlow §4.4)", targets.specific_positions, "specific_positions",
                       (1,), 16, 2, 10, "CLS attention ~1/3 on positions 1,2,3, content-independent", True,
                       positional=True))
    rows.append(Config("specific positions (InfoFlow §4.4)", targets.specific_positions, "specific_positions",
                       (1,), 16, 2, 10, "not run (NoPE)", None, positional=False))
    return rows


def prediction_table(eps: float = 1e-3, gamma: float = 1.0) -> list[dict[str, Any]]:
    """One JSON-serialisable row per configuration: prediction, cost, bottleneck, paper, agreement."""
    out = []
    for c in experiment_configs():
        arch = Architecture(c.heads, c.embed_dim, c.input_dim, positional=c.positional)
        row: dict[str, Any] = {"experiment": c.experiment, "target": c.target_name, "heads": list(c.heads),
                               "E": c.embed_dim, "T": c.seq_len, "PE": c.positional, "note": c.note,
                               "paper": c.observed, "paper_efficient": c.observed_efficient}
        try:
            pred = predict(c.target(), arch, c.seq_len, gamma=gamma)
        except ValueError as exc:
            row.update(predicted="not representable", efficient=None, exponent=None, log10_params=None,
                       regime="error", bottleneck=str(exc).split(":")[0])
        else:
            b = pred.bottleneck
            row.update(predicted="efficient" if pred.efficient else "inefficient", efficient=pred.efficient,
                       exponent=round(pred.exponent, 4), log10_params=round(pred.log10_cost(eps), 3),
                       regime=pred.regime, bottleneck="" if b is None else f"{b.kind}: {b.description}")
        row["agrees"] = None if c.observed_efficient is None else row["efficient"] == c.observed_efficient
        out.append(row)
    return out

