"""Figures of chapter 10: the calculator's information flows of one input, the intrinsic-dimension table as heat maps (InfoFlow §4.1, ours beside the paper's),
validation curves of the trained models, the NMSE of one D against the sequence length, and the single-layer
head count (P1 Table 2 beside ours).

Each function takes the rows of :mod:`transformer_theory.chapters.intrinsic_dimension` (or run histories)
and returns a Figure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import Rectangle
from matplotlib.ticker import NullLocator

from transformer_theory.infoflow import Architecture, pairwise_max, propagate
from transformer_theory.plotting.infoflow import plot_information_flow
from transformer_theory.plotting.style import MARKERS, PALETTE

__all__ = ["plot_flows", "plot_nmse_heatmaps", "plot_validation_curves", "plot_nmse_against_length", "plot_head_count"]

COLUMNS = ("(D,D)", "(D-1,D)", "(D,D-1)")


def _grid(rows: Sequence[Mapping[str, Any]], key: str) -> tuple[list[int], np.ndarray]:
    Ds = sorted({int(r["D"]) for r in rows})
    grid = np.full((len(Ds), len(COLUMNS)), np.nan)
    for r in rows:
        value = r.get(key)
        if value is not None and r.get("config") in COLUMNS:
            grid[Ds.index(int(r["D"])), COLUMNS.index(r["config"])] = value
    return Ds, grid


def plot_flows(D: int, heads: Sequence[Sequence[int]], embed_dim: int, seq_len: int, seed: int) -> plt.Figure:
    """The calculator's information flow (chapter 06's diagram) of the §4.1 target at ``D`` on one input of
    ``seq_len`` tokens (drawn with ``seed``), one panel per head configuration of ``heads``, at width ``embed_dim``."""
    tree = pairwise_max(D)
    X = tree.sample_inputs(1, seq_len, seed)[0]
    fig, axes = plt.subplots(1, len(heads), figsize=(6 * len(heads), 3.6), layout="tight", squeeze=False)
    for ax, h in zip(axes[0], heads):
        plot_information_flow(propagate(tree, Architecture(list(h), embed_dim, tree.input_dim), seq_len), X, ax=ax,
                              title=f"heads {tuple(h)}")
    return fig


def plot_nmse_heatmaps(rows: Sequence[Mapping[str, Any]], ours_label: str = "ours") -> plt.Figure:
    """log10 of the best validation NMSE by D (rows) and head configuration (columns): ours (``nmse``) and
    InfoFlow's (``paper_nmse``) on one colour scale; cells InfoFlow predicts efficient are framed."""
    if not rows:
        raise ValueError("rows must not be empty")
    Ds, ours = _grid(rows, "nmse")
    _, paper = _grid(rows, "paper_nmse")
    _, predicted = _grid([{**r, "p": float(r["predicted_efficient"])} for r in rows], "p")
    values = np.log10(np.concatenate([ours[np.isfinite(ours)], paper[np.isfinite(paper)]]))
    if values.size == 0:
        raise ValueError("rows hold no NMSE values to plot")
    vmin, vmax = np.floor(values.min()), np.ceil(values.max())
    fig, axes = plt.subplots(1, 2, figsize=(9.0, 0.55 * len(Ds) + 2.0), sharey=True)
    for ax, grid, title in ((axes[0], ours, ours_label), (axes[1], paper, "InfoFlow §4.1 (T = 64)")):
        image = ax.imshow(np.log10(grid), cmap="viridis_r", vmin=vmin, vmax=vmax, aspect="auto")
        for i in range(len(Ds)):
            for j in range(len(COLUMNS)):
                if np.isfinite(grid[i, j]):
                    ax.text(j, i, f"{grid[i, j]:.1e}", ha="center", va="center", fontsize=8,
                            color="black" if np.log10(grid[i, j]) < (vmin + vmax) / 2 else "white")
                if predicted[i, j] == 1.0:
                    ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, ec=PALETTE[3], lw=2))
        ax.set_xticks(range(len(COLUMNS)), [c.replace("-", "−") for c in COLUMNS])
        ax.set_yticks(range(len(Ds)), [f"D = {D}" for D in Ds])
        ax.set_title(title)
        ax.grid(False)
    fig.colorbar(image, ax=axes, label="log10 best validation NMSE", shrink=0.9)
    fig.text(0.01, -0.04, "framed: predicted efficient by InfoFlow", fontsize=8, color=PALETTE[3])
    return fig


def plot_validation_curves(curves: Sequence[Mapping[str, Any]], title: str | None = None) -> plt.Figure:
    """Validation NMSE against training step, one line per run: ``curves`` items with ``label``, ``steps``,
    ``nmse`` (``None`` entries skipped) and ``group`` (runs of one group share a colour)."""
    if not curves:
        raise ValueError("curves must not be empty")
    groups = list(dict.fromkeys(c["group"] for c in curves))
    fig, ax = plt.subplots(figsize=(6.4, 3.8))
    seen: set[str] = set()
    for c in curves:
        pairs = [(s, v) for s, v in zip(c["steps"], c["nmse"]) if v is not None]
        if not pairs:
            continue
        s, v = zip(*pairs)
        k = groups.index(c["group"])
        ax.semilogy(s, v, color=PALETTE[k % len(PALETTE)], alpha=0.8,
                    label=c["group"] if c["group"] not in seen else None)
        seen.add(c["group"])
    ax.set_xlabel("training step")
    ax.set_ylabel("validation NMSE")
    if title:
        ax.set_title(title)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def plot_nmse_against_length(rows: Sequence[Mapping[str, Any]]) -> plt.Figure:
    """Best validation NMSE against T (log-log), one line per head configuration: the rows of
    :func:`~transformer_theory.chapters.intrinsic_dimension.sequence_length_table` (``T``, ``D``, ``nmse`` keyed by
    configuration name; ``None`` values skipped)."""
    points = {c: [(r["T"], r["nmse"][c]) for r in sorted(rows, key=lambda r: r["T"]) if r["nmse"].get(c) is not None]
              for c in COLUMNS}
    if not any(points.values()):
        raise ValueError("rows must hold at least one measured NMSE")
    fig, ax = plt.subplots(figsize=(5.6, 3.6))
    for k, (config, pts) in enumerate(points.items()):
        if pts:
            ax.loglog(*zip(*pts), color=PALETTE[k], marker=MARKERS[k], label=config)
    Ts = sorted({r["T"] for r in rows})
    ax.xaxis.set_minor_locator(NullLocator())  # the trained lengths only, on the log axis
    ax.set_xticks(Ts, [str(T) for T in Ts])
    ax.grid(True, which="both", axis="y", alpha=0.3)
    ax.set_xlabel("sequence length T")
    ax.set_ylabel("best validation NMSE")
    ax.set_title(f"D = {rows[0]['D']}")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def plot_head_count(rows: Sequence[Mapping[str, Any]], D: int) -> plt.Figure:
    """Best validation NMSE against the number of heads h of one layer, one line per T (``nmse``), with P1's
    Table 2 (``paper_nmse``, mean over seeds) dashed at the same T and a line at h = D."""
    if not rows:
        raise ValueError("rows must not be empty")
    fig, ax = plt.subplots(figsize=(6.0, 3.8))
    for k, T in enumerate(sorted({r["T"] for r in rows})):
        mine = sorted((r for r in rows if r["T"] == T), key=lambda r: r["h"])
        style = {"color": PALETTE[k % len(PALETTE)], "marker": MARKERS[k % len(MARKERS)]}
        pts = [(r["h"], r["nmse"]) for r in mine if r["nmse"] is not None]
        if pts:
            ax.semilogy(*zip(*pts), label=f"ours, T = {T}", **style)
        paper = [(r["h"], r["paper_nmse"]) for r in mine if r.get("paper_nmse") is not None]
        if paper:
            ax.semilogy(*zip(*paper), ls="--", mfc="none", alpha=0.7, label=f"P1 Table 2, T = {T}", **style)
    ax.axvline(D, color=PALETTE[7], ls=":", label=f"h = D = {D}")
    ax.set_xlabel("heads h (one layer, per-head dimension fixed)")
    ax.set_ylabel("best validation NMSE")
    ax.set_xticks(sorted({r["h"] for r in rows}))
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    return fig
