"""Specific-position aggregation (InfoFlow §4.4) and the cost law (Theorem 3): the CLS attention over the
positions as a heat map, and best NMSE against the counted parameters on log-log axes."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import matplotlib.pyplot as plt
import numpy as np

from transformer_theory.plotting.style import sequence_style

__all__ = ["plot_cls_attention", "plot_cost_law"]


def plot_cls_attention(weights: np.ndarray, n_rows: int = 12) -> plt.Figure:
    """Heat map of the CLS attention ``weights`` (samples, T) over the input positions for the first ``n_rows``
    samples (left), and the mean over all samples with one standard deviation (right)."""
    weights = np.asarray(weights, dtype=np.float64)
    if weights.ndim != 2 or not weights.size:
        raise ValueError(f"weights must be a non-empty (samples, T) array, got shape {weights.shape}")
    T = weights.shape[1]
    positions = np.arange(1, T + 1)
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 3.8), gridspec_kw={"width_ratios": [1.2, 1]})
    image = left.imshow(weights[:n_rows], aspect="auto", cmap="viridis", vmin=0.0, vmax=max(0.5, weights.max()),
                        extent=(0.5, T + 0.5, min(n_rows, len(weights)) + 0.5, 0.5))
    left.set_xticks(positions)
    left.set_xlabel("position t")
    left.set_ylabel("sample")
    left.set_title("CLS attention, one row per sample")
    fig.colorbar(image, ax=left, label="attention weight")
    right.bar(positions, weights.mean(axis=0), yerr=weights.std(axis=0), color=sequence_style(0)["color"], capsize=3)
    right.axhline(1 / 3, color="0.4", ls="--", lw=1, label="1/3")
    right.set_xticks(positions)
    right.set_xlabel("position t")
    right.set_ylabel("mean attention weight")
    right.set_title(f"mean over {len(weights)} samples (± std)")
    right.legend(fontsize=8)
    fig.tight_layout()
    return fig


def plot_cost_law(rows: Sequence[dict[str, Any]]) -> plt.Figure:
    """Best validation NMSE against the counted parameters, one line per aggregated-set size ``T0``, from the rows
    of :func:`~transformer_theory.chapters.aggregation.cost_law_table` (``T0``, ``parameters``, ``nmse``,
    ``predicted_exponent``); log-log."""
    series: dict[int, list[tuple[int, float]]] = {}
    exponent: dict[int, float] = {}
    for r in rows:
        if r["nmse"] is not None:
            series.setdefault(r["T0"], []).append((r["parameters"], r["nmse"]))
            exponent[r["T0"]] = r["predicted_exponent"]
    if not series:
        raise ValueError("rows hold no finite NMSE: nothing to plot")
    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    for i, T0 in enumerate(sorted(series)):
        xs, ys = zip(*sorted(series[T0]))
        ax.plot(xs, ys, "-", label=f"T0 = {T0} (predicted k = {exponent[T0]:.3g})", **sequence_style(i))
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("parameters of encoder, FFN and readout")
    ax.set_ylabel("best validation NMSE")
    ax.set_title("cost law: NMSE against size")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig
