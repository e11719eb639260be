"""Chapter 12's figures: the held-out scoreboard, learning curves, and NMSE against model size.

Every function takes computed data (scoreboard rows of :func:`transformer_theory.infoflow.heldout.scoreboard`,
run histories) and returns a Figure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import matplotlib.pyplot as plt
import numpy as np

from transformer_theory.plotting.style import PALETTE, sequence_style

__all__ = ["plot_scoreboard", "plot_learning_curves", "plot_size_axis"]

_EFFICIENT, _INEFFICIENT, _RED, _GREY = PALETTE[0], PALETTE[2], PALETTE[3], PALETTE[7]


def _by_name(rows: Sequence[Mapping[str, Any]]) -> dict[str, list[Mapping[str, Any]]]:
    if not rows:
        raise ValueError("rows: the scoreboard is empty")
    out: dict[str, list[Mapping[str, Any]]] = {}
    for r in rows:
        out.setdefault(r["name"], []).append(r)
    return out


def plot_scoreboard(rows: Sequence[Mapping[str, Any]], threshold: float) -> plt.Figure:
    """One line per configuration: best NMSE at its smallest T (open marker) and largest T (filled), at the
    width its verdict is judged at (``verdict_E``), coloured by the predicted verdict; disagreements
    labelled in red; the criterion's threshold dashed."""
    configs = _by_name(rows)
    fig, ax = plt.subplots(figsize=(7.5, 0.28 * len(configs) + 1.4))
    for y, (name, group) in enumerate(reversed(list(configs.items()))):
        own = sorted((r for r in group if r["E"] == r["verdict_E"]), key=lambda r: r["T"])
        color = _EFFICIENT if group[0]["predicted_efficient"] else _INEFFICIENT
        lo, hi = own[0]["nmse"], own[-1]["nmse"]
        ax.plot([lo, hi], [y, y], color=color, lw=1)
        ax.plot(lo, y, "o", mfc="white", mec=color, ms=6)
        ax.plot(hi, y, "o", color=color, ms=6)
        if not group[0]["agrees"]:
            ax.plot(hi, y, "x", color=_RED, ms=9, mew=2)
    ax.axvline(threshold, color=_GREY, ls="--", lw=1)
    ax.set_yticks(range(len(configs)))
    ax.set_yticklabels(list(reversed(list(configs))), fontsize=8)
    for label, group in zip(ax.get_yticklabels(), reversed(list(configs.values()))):
        if not group[0]["agrees"]:
            label.set_color(_RED)
    ax.set_xscale("log")
    ax.set_xlabel("best validation NMSE (open: smallest T, filled: largest T)")
    handles = [plt.Line2D([], [], color=_EFFICIENT, marker="o", label="predicted efficient"),
               plt.Line2D([], [], color=_INEFFICIENT, marker="o", label="predicted inefficient"),
               plt.Line2D([], [], color=_RED, marker="x", ls="", mew=2, label="disagrees"),
               plt.Line2D([], [], color=_GREY, ls="--", label=f"threshold {threshold:g}")]
    ax.legend(handles=handles, loc="lower right", fontsize=8, frameon=True)
    ax.grid(axis="y", alpha=0.15)
    fig.tight_layout()
    return fig


def plot_learning_curves(curves: Mapping[str, Sequence[tuple[str, Sequence[int], Sequence[float | None]]]],
                         threshold: float, columns: int = 3) -> plt.Figure:
    """One panel per title in ``curves``: validation NMSE against step for each ``(label, steps, nmse)``
    (a run: one T and seed), with the criterion's threshold dashed."""
    if not curves:
        raise ValueError("curves: nothing to draw")
    n = len(curves)
    columns = min(columns, n)
    rows = int(np.ceil(n / columns))
    fig, axes = plt.subplots(rows, columns, figsize=(4.2 * columns, 3.0 * rows), squeeze=False)
    for ax, (title, lines) in zip(axes.flat, curves.items()):
        for j, (label, steps, nmse) in enumerate(lines):
            values = np.array([np.nan if v is None else v for v in nmse], dtype=float)
            style = sequence_style(j)
            ax.plot(steps, values, color=style["color"], lw=1.2, label=label)
        ax.axhline(threshold, color=_GREY, ls="--", lw=1)
        ax.set_yscale("log")
        ax.set_title(title, fontsize=9)
        ax.set_xlabel("step")
        ax.legend(fontsize=7)
    for ax in list(axes.flat)[n:]:
        ax.set_visible(False)
    axes[0, 0].set_ylabel("validation NMSE")
    fig.tight_layout()
    return fig


def plot_size_axis(rows: Sequence[Mapping[str, Any]]) -> plt.Figure:
    """Best NMSE against the embedding dimension E, one panel per configuration with a size axis, one line
    per T, each point labelled with its predicted exponent k (M ~ eps^-k)."""
    configs = {name: g for name, g in _by_name(rows).items() if len({r["E"] for r in g}) > 1}
    if not configs:
        raise ValueError("rows: no configuration has a model-size axis")
    fig, axes = plt.subplots(1, len(configs), figsize=(4.6 * len(configs), 3.4), squeeze=False, sharey=True)
    for ax, (name, group) in zip(axes.flat, configs.items()):
        for j, T in enumerate(sorted({r["T"] for r in group})):
            line = sorted((r for r in group if r["T"] == T), key=lambda r: r["E"])
            E, nmse = [r["E"] for r in line], [r["nmse"] for r in line]
            ax.plot(E, nmse, label=f"T = {T}", **sequence_style(j))
            for r in line:
                ax.annotate(f"k={r['exponent']:g}", (r["E"], r["nmse"]), textcoords="offset points", xytext=(4, 4),
                            fontsize=7, color=sequence_style(j)["color"])
        verdict = "predicted efficient" if group[0]["predicted_efficient"] else "predicted inefficient"
        ax.set_title(f"{name}: {verdict}", fontsize=9)
        ax.set_yscale("log")
        ax.set_xlabel("embedding dimension E")
        ax.set_xticks(sorted({r["E"] for r in group}))
        ax.legend(fontsize=8)
    axes[0, 0].set_ylabel("best validation NMSE")
    fig.tight_layout()
    return fig
