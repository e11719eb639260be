"""Figure of chapter 14: the ablation of chapter 10's two-layer recipe (InfoFlow §4.1), one bar per arm.

Takes the rows of :func:`~transformer_theory.chapters.ablation.ablation_table` and returns a Figure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import matplotlib.pyplot as plt

from transformer_theory.plotting.style import PALETTE

__all__ = ["plot_ablation"]


def plot_ablation(rows: Sequence[Mapping[str, Any]], min_gain: float) -> plt.Figure:
    """Two panels of horizontal bars, one bar per arm: the best (D, D) NMSE (``nmse_full``) and the ratio of the
    missing-head NMSE to it (``ratio``), with the baseline's values and ``min_gain`` times its ratio as lines; arms
    that help (``helps``) are coloured."""
    if not rows:
        raise ValueError("rows must not be empty")
    fig, (left, right) = plt.subplots(1, 2, figsize=(8.0, 0.45 * len(rows) + 1.4), sharey=True)
    names = [r["arm"] for r in rows]
    colours = [PALETTE[2] if r.get("helps") else PALETTE[0] for r in rows]
    positions = range(len(rows))
    for ax, key, label in ((left, "nmse_full", "best (D, D) validation NMSE"),
                           (right, "ratio", "missing-head NMSE / (D, D) NMSE")):
        values = [r[key] if r[key] is not None else float("nan") for r in rows]
        ax.barh(positions, values, color=colours)
        ax.set_xscale("log")
        ax.set_xlabel(label)
        ax.grid(axis="y", visible=False)
    base = next((r for r in rows if r["arm"] == "baseline"), None)
    if base is not None and base["ratio"] is not None:
        left.axvline(base["nmse_full"], color=PALETTE[7], ls=":", label="baseline")
        right.axvline(base["ratio"], color=PALETTE[7], ls=":", label="baseline")
        right.axvline(min_gain * base["ratio"], color=PALETTE[3], ls="--", label=f"{min_gain:g} x baseline")
        right.legend(fontsize=7)
    left.set_yticks(list(positions), names)
    left.invert_yaxis()
    fig.suptitle(f"D = {rows[0]['D']}, T = {rows[0]['T']}, {rows[0]['steps']} steps", fontsize=10)
    fig.tight_layout()
    return fig
