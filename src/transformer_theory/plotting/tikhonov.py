"""Figures 1a and 1b of Paper A (Tikhonov experiment), in the book's style.

Same content as the official ``tikhonovTrainLoss.py`` / ``tikhonovEpsilon.py``: log-log axes,
blue training curve, red dashed Tikhonov threshold, grey dashed linear-scaling reference.
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np

from transformer_theory.plotting.style import PALETTE

__all__ = ["plot_training_loss", "plot_min_loss_vs_eps"]

_BLUE, _RED, _GREY, _ORANGE = PALETTE[0], PALETTE[3], PALETTE[7], PALETTE[1]


def plot_training_loss(losses: np.ndarray, eps: float, theta_star_sq_norm: float) -> plt.Figure:
    """Fig. 1a: data-term loss per epoch (epochs counted from 1) and the threshold ε‖θ*‖²."""
    losses = np.asarray(losses, dtype=float)
    if losses.ndim != 1 or losses.size == 0:
        raise ValueError(f"losses must be a non-empty 1-D array, got shape {losses.shape}")
    fig, ax = plt.subplots(figsize=(5.5, 3.5))
    epochs = np.arange(1, losses.size + 1)
    ax.loglog(epochs, losses, color=_BLUE, label="training loss (data term)")
    ax.axhline(eps * theta_star_sq_norm, color=_RED, linestyle="--", label=rf"Tikhonov threshold $\epsilon\|\theta^*\|^2$, $\epsilon$={eps:g}")
    ax.set_xlabel("epochs")
    ax.set_ylabel("loss")
    ax.legend()
    fig.tight_layout()
    return fig


def plot_min_loss_vs_eps(
    eps_list: Sequence[float],
    min_losses: Sequence[float],
    paper_min_losses: Sequence[float] | None = None,
    diagnostic: tuple[Sequence[float], Sequence[float]] | None = None,
    diagnostic_floor: float | None = None,
    diagnostic_label: str = "diagnostic run",
) -> plt.Figure:
    """Fig. 1b: minimum training loss vs ε with the slope-1 reference through the largest ε.

    Optional: the values read off the paper's figure (same ε), a diagnostic run ``(eps, min
    losses)`` whose slope is far from 1, and a proven lower bound on the diagnostic's loss.
    """
    eps = np.asarray(eps_list, dtype=float)
    ours = np.asarray(min_losses, dtype=float)
    if eps.shape != ours.shape or eps.ndim != 1 or eps.size < 2:
        raise ValueError(f"eps_list and min_losses must be 1-D of equal length >= 2, got {eps.shape} and {ours.shape}")
    i0 = int(np.argmax(eps))
    fig, ax = plt.subplots(figsize=(5.5, 3.5))
    ax.loglog(eps, eps / eps[i0] * ours[i0], linestyle="--", color=_GREY, label="linear scaling")
    ax.loglog(eps, ours, marker="o", color=_BLUE, label="minimal training loss (ours)")
    if paper_min_losses is not None:
        ax.loglog(eps, paper_min_losses, marker="s", linestyle=":", color=_BLUE, alpha=0.5, mfc="none", label="paper (read off Fig. 1b)")
    if diagnostic is not None:
        ax.loglog(*diagnostic, marker="^", color=_ORANGE, label=diagnostic_label)
    if diagnostic_floor is not None:
        ax.axhline(diagnostic_floor, color=_ORANGE, linestyle=":", label="lower bound for the diagnostic")
    ax.set_xlabel(r"$\epsilon$")
    ax.set_ylabel("minimum loss")
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    return fig
