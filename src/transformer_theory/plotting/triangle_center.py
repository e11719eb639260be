"""The triangle center (InfoFlow §4.2): validation NMSE against the sequence length beside the paper's values,
and the target's comparison number against the comparisons a fixed model performs."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import matplotlib.pyplot as plt
from matplotlib.ticker import NullLocator

from transformer_theory.plotting.style import sequence_style

__all__ = ["configuration_label", "plot_triangle_center"]


def configuration_label(h1: int, h2: int, E: int) -> str:
    """``"(2, 2), E = 24"``."""
    return f"({h1}, {h2}), E = {E}"


def _log2_axis(ax: plt.Axes, ticks: Sequence[int]) -> None:
    ax.set_xscale("log", base=2)
    ax.set_xticks(list(ticks), [str(t) for t in ticks])
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_xlabel("sequence length T")


def plot_triangle_center(rows: Sequence[dict[str, Any]], growth: Sequence[dict[str, Any]]) -> plt.Figure:
    """Two panels. Left: best validation NMSE against T per configuration, from the rows of
    :func:`~transformer_theory.chapters.triangle_center.nmse_table` (``h1, h2, E, T, nmse, paper_nmse``), ours
    solid with circles, the paper's dashed with crosses. Right, log-log: the comparison number and ``T^3`` from the
    rows of :func:`~transformer_theory.chapters.triangle_center.comparison_growth`, and each configuration's
    attention comparisons (its ``capacity ...`` columns)."""
    if not rows or not growth:
        raise ValueError("rows and growth must be non-empty: nothing to plot")
    configs = sorted({(r["h1"], r["h2"], r["E"]) for r in rows})
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.0))
    for i, (h1, h2, E) in enumerate(configs):
        mine = sorted((r["T"], r) for r in rows if (r["h1"], r["h2"], r["E"]) == (h1, h2, E))
        style = sequence_style(i)
        color = style["color"]
        ours = [(T, r["nmse"]) for T, r in mine if r["nmse"] is not None]
        if ours:
            left.plot(*zip(*ours), "-o", color=color, label=f"{configuration_label(h1, h2, E)} (ours)")
        paper = [(T, r["paper_nmse"]) for T, r in mine if r.get("paper_nmse") is not None]
        if paper:
            left.plot(*zip(*paper), "--x", color=color, alpha=0.7, label=f"{configuration_label(h1, h2, E)} (paper)")
    _log2_axis(left, sorted({r["T"] for r in rows}))
    left.axhline(1.0, color="0.5", lw=0.8, ls=":")
    values = [r["nmse"] for r in rows if r["nmse"] is not None] + [r["paper_nmse"] for r in rows
                                                                   if r.get("paper_nmse") is not None]
    left.set_ylim(0, max([1.1, *[v + 0.05 for v in values]]))
    left.set_ylabel("best validation NMSE")
    left.set_title("NMSE against T")
    left.legend(fontsize=7)

    Ts = [g["T"] for g in growth]
    right.plot(Ts, [g["comparison_number"] for g in growth], "-o", color="black", label="comparison number")
    right.plot(Ts, [g["triples"] for g in growth], ":", color="0.4", label="$T^3$")
    capacities = [k for k in growth[0] if k.startswith("capacity ")]
    for i, key in enumerate(capacities):
        right.plot(Ts, [g[key] for g in growth], "--s", ms=4, color=sequence_style(i)["color"],
                   label=f"attention comparisons {key.removeprefix('capacity ')}")
    _log2_axis(right, Ts)
    right.set_yscale("log")
    right.set_ylabel("comparisons")
    right.set_title("what the target needs against what the model does")
    right.legend(fontsize=7)
    fig.tight_layout()
    return fig
