"""Figures 1a and 1b of Paper A (Tikhonov experiment, §6), with the published curves beside ours.

Same content as the official ``tikhonovTrainLoss.py`` / ``tikhonovEpsilon.py`` (log-log axes, blue training
curve, red dashed threshold), plus the published data decoded from the official figure files
(:mod:`transformer_theory.interpolation.reference`) and, in Fig. 1b, the bound of the proposition at every ε
and the ratio L/ε it controls.
"""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
import numpy as np

from transformer_theory.plotting.style import PALETTE

__all__ = ["plot_training_loss", "plot_min_loss_vs_eps"]

_BLUE, _GREEN, _ORANGE, _RED, _GREY = PALETTE[0], PALETTE[1], PALETTE[2], PALETTE[3], PALETTE[7]

Curve = tuple[Sequence[float], Sequence[float]]


def _pair(name: str, curve: Curve) -> tuple[np.ndarray, np.ndarray]:
    x, y = (np.asarray(v, dtype=float) for v in curve)
    if x.shape != y.shape or x.ndim != 1 or x.size == 0:
        raise ValueError(f"{name} must be two 1-D sequences of equal non-zero length, got shapes {x.shape} and {y.shape}")
    return x, y


def plot_training_loss(losses: np.ndarray, eps: float, threshold: float, published: Curve | None = None) -> plt.Figure:
    """Fig. 1a: data-term loss per epoch (epochs from 1), the threshold ε‖θ*‖², and optionally the published
    curve ``(epochs, losses)``."""
    epochs, losses = _pair("losses", (np.arange(1, np.size(losses) + 1), losses))
    fig, ax = plt.subplots(figsize=(5.5, 3.5))
    if published is not None:
        ax.loglog(*_pair("published", published), color=_GREY, lw=3, alpha=0.5, label="paper (decoded from Fig. 1a)")
    ax.loglog(epochs, losses, color=_BLUE, label="training loss (ours)")
    ax.axhline(threshold, color=_RED, linestyle="--", label=rf"threshold $\epsilon\|\theta^*\|^2$, $\epsilon$={eps:g}")
    ax.set_xlabel("epochs")
    ax.set_ylabel("loss")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def plot_min_loss_vs_eps(
    eps_list: Sequence[float],
    min_losses: Sequence[float],
    theta_star_sq_norm: float,
    published: Curve | None = None,
    failed: Curve | None = None,
    diagnostic: Curve | None = None,
    diagnostic_floor: float | None = None,
) -> plt.Figure:
    """Fig. 1b, two panels. Left: minimum training loss against ε (ours, optionally the published points, an
    under-trained run ``failed`` and the η = 0 ``diagnostic`` with its proven floor), with the bound
    (ε/2)‖θ*‖² of the proposition and the official threshold line ε‖θ*‖². Right: L/ε against ε with the bound
    ‖θ*‖²/2; for global minimisers L/ε → 0 as ε → 0."""
    eps, ours = _pair("eps_list, min_losses", (eps_list, min_losses))
    grid = np.geomspace(eps.min(), eps.max(), 20)
    fig, (ax, ax_r) = plt.subplots(1, 2, figsize=(10, 3.8))
    ax.loglog(grid, grid * theta_star_sq_norm, ls=":", color=_RED, label=r"official threshold $\epsilon\|\theta^*\|^2$")
    ax.loglog(grid, grid / 2 * theta_star_sq_norm, ls="--", color=_RED, label=r"bound $(\epsilon/2)\|\theta^*\|^2$")
    ax_r.loglog(grid, np.full_like(grid, theta_star_sq_norm / 2), ls="--", color=_RED, label=r"bound $\|\theta^*\|^2/2$")
    series = [("ours", (eps, ours), dict(marker="o", color=_BLUE))]
    if published is not None:
        series.append(("paper (decoded from Fig. 1b)", published, dict(marker="s", ls=":", color=_GREY, mfc="none")))
    if failed is not None:
        series.append(("under-trained run", failed, dict(marker="v", color=_GREEN)))
    if diagnostic is not None:
        series.append(("η frozen at 0 (no interpolant)", diagnostic, dict(marker="^", color=_ORANGE)))
    for label, curve, style in series:
        x, y = _pair(label, curve)
        ax.loglog(x, y, label=label, **style)
        ax_r.loglog(x, y / x, label=label, **style)
    if diagnostic_floor is not None:
        ax.axhline(diagnostic_floor, color=_ORANGE, linestyle=":", label="proven floor for η = 0")
    for a, ylabel in ((ax, "minimum loss L"), (ax_r, r"$L/\epsilon$")):
        a.set_xlabel(r"$\epsilon$")
        a.set_ylabel(ylabel)
    ax.legend(loc="lower right", fontsize=7)
    ax_r.legend(loc="best", fontsize=7)
    fig.tight_layout()
    return fig
