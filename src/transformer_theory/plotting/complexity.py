"""Figures of the complexity chapter: blocks and parameters against the input length n_j, against M and N
(Theorems 1.6 and 1.8), from the rows of :func:`transformer_theory.interpolation.complexity.measure`."""

from __future__ import annotations

from typing import Sequence

import matplotlib.pyplot as plt

from transformer_theory.interpolation.attention import ATTENTIONS
from transformer_theory.plotting.style import PALETTE


def plot_length_sweep(rows: Sequence[dict]) -> plt.Figure:
    """Blocks (left) and parameters (right, log scale) against the input length n_j at fixed N and M."""
    n = [r["n_max"] for r in rows]
    fig, (ax_b, ax_p) = plt.subplots(1, 2, figsize=(10, 3.8))
    for attention, marker, colour in zip(ATTENTIONS, "os", PALETTE):
        ax_b.plot(n, [r[f"{attention}_blocks"] for r in rows], marker=marker, color=colour, label=f"{attention} (ours)")
        ax_b.plot(n, [r[f"{attention}_paper_blocks"] for r in rows], ls="--", color=colour, label=f"{attention} (paper)")
        ax_p.plot(n, [r[f"{attention}_params"] for r in rows], marker=marker, color=colour, label=f"{attention}, structured")
    ax_p.plot(n, [r["softmax_dense_params"] for r in rows], ls=":", color=PALETTE[1], label="softmax, dense d×d")
    ax_p.plot(n, [r["resnet_params"] for r in rows], marker="^", color="k", label="hat ResNet (this project's)")
    ax_b.set_ylim(0, None)
    ax_b.set_ylabel("blocks")
    ax_p.set_yscale("log")
    ax_p.set_ylabel("parameters")
    for ax in (ax_b, ax_p):
        ax.set_xscale("log")
        ax.set_xlabel("input length $n_j$")
        ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def plot_size_sweep(rows: Sequence[dict], key: str = "M") -> plt.Figure:
    """Blocks (left) and structured parameters per d (right) against ``key`` (``"M"`` or ``"N"``)."""
    x = [r[key] for r in rows]
    fig, (ax_b, ax_p) = plt.subplots(1, 2, figsize=(10, 3.8))
    for attention, marker, colour in zip(ATTENTIONS, "os", PALETTE):
        ax_b.plot(x, [r[f"{attention}_blocks"] for r in rows], marker=marker, color=colour, label=f"{attention} (ours)")
        ax_b.plot(x, [r[f"{attention}_paper_blocks"] for r in rows], ls="--", color=colour, label=f"{attention} (paper)")
        ax_p.plot(x, [r[f"{attention}_params"] / r["d"] for r in rows], marker=marker, color=colour,
                  label=f"{attention}, structured / d")
    ax_b.set_ylabel("blocks")
    ax_p.set_ylabel("parameters / d")
    for ax in (ax_b, ax_p):
        ax.set_xlabel(key)
        ax.legend(fontsize=8)
    fig.tight_layout()
    return fig
