"""Figures of the softmax chapter (Theorem 1.8): the collapse and the exactification layer (Fig. 8), one
block with hardmax versus softmax weights (Fig. 9), and the interpolation error against the temperature.

Every function returns the figure; regenerated from this project's construction, not copied from the paper.
"""

from __future__ import annotations

from typing import Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import Circle

from transformer_theory.interpolation.arithmetic import project
from transformer_theory.interpolation.construction.softmax import SoftmaxTransformer
from transformer_theory.interpolation.dataset import SequenceDataset
from transformer_theory.plotting.interpolation import draw_tokens
from transformer_theory.plotting.style import sequence_style


def plot_collapse(model: SoftmaxTransformer, dataset: SequenceDataset) -> plt.Figure:
    """Fig. 8 (d = 2). Left: before the collapse (faded) and after it (solid): every token on the line R·w,
    the box tokens of sequence j inside the ball B_δ(x̂^j_1) around its P-leader's projection, the sphere
    tokens' projections drawn as segments. Right: the increment ``FF(x) − x`` of the first exactification
    layer along the line coordinate ``t = w·x``, with the cluster it collapses."""
    if dataset.d != 2 or not len(model.stages["exactification"]):
        raise ValueError("plot_collapse draws d = 2 data with at least one sequence having n_j > m_j")
    start = model.stages["collapse"].start
    paths = model.trace(dataset.inputs)
    before, after = [p[start] for p in paths], [p[start + 1] for p in paths]
    sa = model.blocks[start].sa
    w = sa.V.a
    bound = model.collapse.bound
    fig, (ax, ax_ff) = plt.subplots(1, 2, figsize=(10, 4.4), gridspec_kw={"width_ratios": [1.3, 1]})
    for j, (X0, X1) in enumerate(zip(before, after)):
        style = sequence_style(j)
        ax.scatter(*X0.T, color=style["color"], marker=style["marker"], s=30, alpha=0.3)
        for x0, x1 in zip(X0, X1):
            ax.plot([x0[0], x1[0]], [x0[1], x1[1]], color="0.75", lw=0.6, zorder=1)
    draw_tokens(ax, after, size=25)
    images, index = np.unique(bound.images, return_index=True)
    for c, i in zip(images, index):
        if c > 0:  # a P-leader's projection: the ball B_δ of Fig. 8
            ax.add_patch(Circle(tuple(c * w), bound.deltas[i], fill=False, ls=":", color="k"))
    t = np.linspace(-1.2, 1.2, 2) * np.abs(np.concatenate(before)).max() * np.sqrt(2)
    ax.plot(t * w[0], t * w[1], "k--", lw=0.8, label=r"$\mathbb{R}w$")
    ax.scatter([], [], color="0.6", s=30, alpha=0.3, label="before the collapse (faded)")
    ax.plot([], [], color="0.75", lw=0.6, label="each token's move")
    if any(c > 0 for c in images):
        ax.plot([], [], ls=":", color="k", label=r"ball $B_\delta$ around a leader's projection")
    ax.set_aspect("equal", adjustable="datalim")
    ax.set_title(rf"softmax collapse at $\tau$ = {model.temperature:.3g} ($\tau^*$ = {model.temperature_threshold:.3g})")
    ax.legend(loc="upper left", fontsize=8)
    first = model.stages["exactification"].start
    ff = model.blocks[first].ff
    line = project(np.concatenate(after), w)
    inside = line[(line >= ff.lo) & (line <= ff.hi)]
    margin = 2 * (ff.hi - ff.lo)
    s = np.linspace(ff.lo - margin, ff.hi + margin, 400)
    ax_ff.plot(s, ff.line(s) - s, color="tab:orange", label=r"$g(t) - t$")
    ax_ff.plot(inside, np.zeros_like(inside), "|", ms=14, color="tab:blue", label="cluster tokens (before)")
    ax_ff.plot([ff.lo], [0], "o", color="k", label="collapsed point")
    for x, name in ((ff.lo, "lo"), (ff.hi, "hi")):
        ax_ff.axvline(x, color="0.6", lw=0.8, ls=":")
        ax_ff.text(x, 0.02 * margin, name, ha="center")
    ax_ff.set_xlabel(r"line coordinate $t = w\cdot x$")
    ax_ff.set_title(f"exactification layer (width {ff.width}, η = 0)")
    ax_ff.legend(loc="lower left", fontsize=8)
    fig.tight_layout()
    return fig


def plot_one_block(states: dict[str, list[np.ndarray]], shared: Sequence[int]) -> plt.Figure:
    """Fig. 9: one panel per entry of ``states`` (from
    :func:`~transformer_theory.interpolation.construction.softmax.separation_block_states`: (a) the input,
    (b) the separation block with hardmax weights, (c) the softmax block), titled with the number of
    positions still shared by two sequences (``shared``, one count per panel)."""
    if len(shared) != len(states):
        raise ValueError(f"need one shared-position count per panel, got {len(shared)} for {len(states)} panels")
    fig, axes = plt.subplots(1, len(states), figsize=(11, 3.8))
    for k, (ax, (name, seqs), count) in enumerate(zip(np.atleast_1d(axes), states.items(), shared)):
        jitter = 0.015 * np.ptp(np.concatenate(seqs), axis=0).max()
        draw_tokens(ax, seqs, jitter=jitter)
        ax.set_title(f"({'abcdefgh'[k]}) {name}: {count} shared")
        ax.set_aspect("equal", adjustable="datalim")
    np.atleast_1d(axes)[0].legend(loc="best")
    fig.tight_layout()
    return fig


def plot_error_vs_temperature(
    ratios: np.ndarray,
    errors: np.ndarray,
    accuracy: np.ndarray,
    accuracy_bound: np.ndarray,
    spread: np.ndarray,
    tol: float,
) -> plt.Figure:
    """Left: max Hausdorff error against τ/τ* (log scales); right: the collapse's measured accuracy
    ``max |t − c|/δ``, its bound (= 1 at τ*) and the cluster spread. Above τ* the construction is forced."""
    fig, (ax, ax_acc) = plt.subplots(1, 2, figsize=(10, 3.8))
    floor = 1e-17
    ax.loglog(ratios, np.maximum(errors, floor), "o-", label=r"max $d_H(T(X^j), Y^j)$")
    ax.axhline(tol, color="tab:red", ls="--", lw=1, label="tolerance")
    ax.set_ylabel(f"error (values below {floor:g} drawn at {floor:g})")
    ax_acc.loglog(ratios, np.maximum(accuracy, floor), "o-", label=r"measured $\max_i |t_i - c_i|/\delta_i$")
    ax_acc.loglog(ratios, np.maximum(accuracy_bound, floor), "--", label=r"bound $\max_i E_i(\tau)/\delta_i$")
    ax_acc.loglog(ratios, np.maximum(spread, floor), "s:", ms=4, label="cluster spread")
    ax_acc.axhline(1.0, color="0.4", lw=0.8)
    ax_acc.set_ylim(1e-17, None)
    for a in (ax, ax_acc):
        a.axvspan(1.0, ratios.max() * 1.2, color="tab:red", alpha=0.07, label=r"$\tau > \tau^*$ (forced)")
        a.axvline(1.0, color="k", lw=0.8)
        a.set_xlabel(r"$\tau/\tau^*$")
        a.legend(loc="upper left", fontsize=8)
    ax.set_title("interpolation error")
    ax_acc.set_title("softmax collapse")
    fig.tight_layout()
    return fig
