"""Figures of the complexity chapter: blocks, parameters (counted two ways) and weight sizes against the input
length n_j and against M and N (Theorems 1.6 and 1.8), from the measurements of
:func:`transformer_theory.interpolation.complexity.measure`."""

from __future__ import annotations

from typing import Sequence

import matplotlib.pyplot as plt

from transformer_theory.interpolation.attention import ATTENTIONS
from transformer_theory.interpolation.complexity import Measurement
from transformer_theory.plotting.style import PALETTE


def _weights_panel(ax: plt.Axes, x: Sequence[float], rows: Sequence[Measurement]) -> None:
    """The largest weight of each construction (log scale) and the softmax threshold τ* (right axis)."""
    for attention, marker, colour in zip(ATTENTIONS, "os", PALETTE):
        ax.plot(x, [r.counts(attention).max_abs_weight for r in rows], marker=marker, color=colour,
                label=f"{attention}: largest weight")
    ax.set_yscale("log")
    ax.set_ylabel("largest |weight|")
    tau = ax.twinx()
    tau.plot(x, [r.tau_star for r in rows], marker="v", ls="--", color="k", label=r"softmax $\tau^*$")
    tau.set_ylabel(r"$\tau^*$")
    tau.grid(False)
    lines = ax.get_legend_handles_labels()
    more = tau.get_legend_handles_labels()
    ax.legend(lines[0] + more[0], lines[1] + more[1], fontsize=8)


def plot_length_sweep(rows: Sequence[Measurement]) -> plt.Figure:
    """Against the input length n_j at fixed N and M: blocks; parameters, structured against structured (solid)
    and dense against dense (dotted), for the constructions and the hat ResNet; the largest weight and τ*."""
    n = [r.n_max for r in rows]
    fig, (ax_b, ax_p, ax_w) = plt.subplots(1, 3, figsize=(14, 3.8))
    for attention, marker, colour in zip(ATTENTIONS, "os", PALETTE):
        ax_b.plot(n, [r.counts(attention).blocks for r in rows], marker=marker, color=colour, label=f"{attention} (ours)")
        ax_b.plot(n, [r.counts(attention).paper_blocks for r in rows], ls="--", color=colour, label=f"{attention} (paper)")
        ax_p.plot(n, [r.counts(attention).params for r in rows], marker=marker, color=colour, label=f"{attention}, structured")
        ax_p.plot(n, [r.counts(attention).dense_params for r in rows], ls=":", color=colour, label=f"{attention}, dense")
    ax_p.plot(n, [r.resnet.structured_params for r in rows], marker="^", color="k", label="hat ResNet, structured")
    ax_p.plot(n, [r.resnet.params for r in rows], marker="^", ls=":", color="k", label="hat ResNet, dense")
    ax_b.set_ylim(0, None)
    ax_b.set_ylabel("blocks")
    ax_p.set_yscale("log")
    ax_p.set_ylabel("parameters")
    _weights_panel(ax_w, n, rows)
    for ax in (ax_b, ax_p, ax_w):
        ax.set_xscale("log")
        ax.set_xlabel("input length $n_j$")
    ax_b.legend(fontsize=8)
    ax_p.legend(fontsize=7)
    fig.tight_layout()
    return fig


def plot_size_sweep(rows: Sequence[Measurement], key: str = "M") -> plt.Figure:
    """Against ``key`` (``"M"`` or ``"N"``): blocks, structured parameters per d, the largest weight and τ*."""
    x = [getattr(r, key) for r in rows]
    fig, (ax_b, ax_p, ax_w) = plt.subplots(1, 3, figsize=(14, 3.8))
    for attention, marker, colour in zip(ATTENTIONS, "os", PALETTE):
        ax_b.plot(x, [r.counts(attention).blocks for r in rows], marker=marker, color=colour, label=f"{attention} (ours)")
        ax_b.plot(x, [r.counts(attention).paper_blocks for r in rows], ls="--", color=colour, label=f"{attention} (paper)")
        ax_p.plot(x, [r.counts(attention).params / r.d for r in rows], marker=marker, color=colour,
                  label=f"{attention}, structured / d")
    ax_b.set_ylabel("blocks")
    ax_p.set_ylabel("parameters / d")
    _weights_panel(ax_w, x, rows)
    for ax in (ax_b, ax_p, ax_w):
        ax.set_xlabel(key)
    ax_b.legend(fontsize=8)
    ax_p.legend(fontsize=8)
    fig.tight_layout()
    return fig
