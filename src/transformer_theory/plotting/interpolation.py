"""Figures of the Paper A chapters: tie averaging (Fig. 2), the block schematic (Fig. 3), the attention
lemmas (Fig. 4), the construction stages on the toy dataset (Figs. 5, 6, 7) and token trajectories.

Every function draws on matplotlib axes it is given or creates, and returns the figure.
"""

from __future__ import annotations

from typing import Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import FancyArrowPatch, Rectangle

from transformer_theory.interpolation.arithmetic import to_float
from transformer_theory.interpolation.construction.geometry import BOX_HIGH, BOX_LOW, below_box
from transformer_theory.interpolation.dataset import SequenceDataset
from transformer_theory.interpolation.transformer import Transformer
from transformer_theory.plotting.style import MARKERS, sequence_style

TARGET = {"marker": "D", "s": 110, "alpha": 0.3, "edgecolor": "k", "linewidths": 0.6}


def _axes(ax: plt.Axes | None, figsize=(4, 4)) -> plt.Axes:
    return ax if ax is not None else plt.subplots(figsize=figsize)[1]


def draw_tokens(ax: plt.Axes, sequences: Sequence[np.ndarray], targets: Sequence[np.ndarray] | None = None,
                size: float = 40, jitter: float = 0.0) -> None:
    """Scatter each sequence in its colour and marker (Figs. 5-7), targets as large translucent diamonds of the
    same colour (legend labels ``X^j`` and ``Y^j (target)``).

    ``jitter`` offsets sequence j by ``j·jitter`` along the first axis so that shared tokens stay visible.
    """
    for j, X in enumerate(sequences):
        X = to_float(X)
        style = sequence_style(j)
        ax.scatter(X[:, 0] + j * jitter, X[:, 1], s=size, color=style["color"], marker=style["marker"],
                   edgecolor="k", linewidths=0.4, zorder=3, label=f"$X^{{{j + 1}}}$")
        if targets is not None:
            Y = to_float(targets[j])
            ax.scatter(Y[:, 0], Y[:, 1], color=style["color"], zorder=2, label=f"$Y^{{{j + 1}}}$ (target)", **TARGET)


def plot_tie_geometry(X: np.ndarray, outputs: np.ndarray, ax: plt.Axes | None = None) -> plt.Figure:
    """Fig. 2: query x₁, the line span(A x₁) (A = I), projections of the other tokens onto it; the two
    maximisers (red) tie and x₁ moves to their average (star)."""
    ax = _axes(ax)
    q = X[0] / np.linalg.norm(X[0])
    scores = X[1:] @ X[0]
    tied = np.flatnonzero(np.isclose(scores, scores.max(), rtol=0, atol=1e-12)) + 1
    t = np.linspace(-1.5, 2.8, 2)
    ax.plot(t * q[0], t * q[1], "k--", lw=1, label=r"span$(A x_1)$")
    labelled = set()
    for i, x in enumerate(X[1:], start=1):
        foot = (x @ q) * q
        ax.plot([x[0], foot[0]], [x[1], foot[1]], color="0.6", lw=0.8)
        colour, label = ("tab:red", "tied maximisers") if i in tied else ("tab:green", "other tokens")
        ax.scatter(*x, color=colour, zorder=3, label=None if label in labelled else label)
        labelled.add(label)
        ax.annotate(f"$x_{i + 1}$", x, textcoords="offset points", xytext=(5, 4))
    ax.plot(*X[tied].T, color="tab:red", lw=1.5)
    ax.scatter(*X[0], color="tab:blue", zorder=3)
    ax.annotate("$x_1$", X[0], textcoords="offset points", xytext=(5, -10))
    ax.scatter(*outputs[0], marker="*", s=160, color="tab:blue", edgecolor="k", zorder=4, label=r"SA$(X)_1$")
    ax.scatter(0, 0, color="k", s=10)
    ax.set_aspect("equal")
    ax.legend(loc="lower right")
    return ax.figure


def plot_block_schematic(num_blocks: int = 3, ax: plt.Axes | None = None) -> plt.Figure:
    """Fig. 3: X → [FF → SA] → … → T(X), FF boxes orange, SA boxes blue."""
    ax = _axes(ax, figsize=(9, 1.6))
    labels = ["$X$"]
    for k in range(1, num_blocks + 1):
        name = "L" if k == num_blocks else str(k)
        labels += [f"FF$^{{{name}}}$", f"SA$^{{{name}}}$"]
        if k == num_blocks - 1:
            labels.append("…")
    labels.append("$T(X)$")
    xs = np.arange(len(labels)) * 1.3
    for x, lab in zip(xs, labels):
        colour = "#ff7f0e" if lab.startswith("FF") else "#1f77b4" if lab.startswith("SA") else "white"
        ax.add_patch(Rectangle((x - 0.45, -0.3), 0.9, 0.6, facecolor=colour, alpha=0.35 if colour != "white" else 0,
                               edgecolor="k" if colour != "white" else "none"))
        ax.text(x, 0, lab, ha="center", va="center")
    for a, b in zip(xs, xs[1:]):
        ax.add_patch(FancyArrowPatch((a + 0.45, 0), (b - 0.45, 0), arrowstyle="->", mutation_scale=10))
    for k in range(num_blocks):  # brace-like labels TB^k over each FF/SA pair
        start = 1 + 2 * k + (1 if k == num_blocks - 1 and num_blocks > 1 else 0)
        mid = (xs[start] + xs[start + 1]) / 2
        ax.text(mid, 0.45, f"TB$^{{{'L' if k == num_blocks - 1 else k + 1}}}$", ha="center")
    ax.set_xlim(xs[0] - 0.6, xs[-1] + 0.6)
    ax.set_ylim(-0.5, 0.7)
    ax.axis("off")
    return ax.figure


def plot_lemma_panels(panels: Sequence[dict]) -> plt.Figure:
    """Fig. 4: for each lemma, tokens before (top) and after (bottom) one SA layer.

    Each panel dict has ``title``, ``before``, ``after`` and optionally ``v`` (arrow and dashed line),
    ``box`` (side R of the square [0, R]²) or ``circle`` (radius R).
    """
    fig, axes = plt.subplots(2, len(panels), figsize=(3.3 * len(panels), 6.2))
    for col, panel in enumerate(panels):
        for row, key in enumerate(("before", "after")):
            ax = axes[row, col]
            X = panel[key]
            ax.scatter(*X.T, color="tab:green" if row else "tab:blue", edgecolor="k", linewidths=0.4, zorder=3)
            if "v" in panel:
                v = panel["v"] / np.linalg.norm(panel["v"])
                ax.plot(*np.outer([-3, 3], v).T, "k--", lw=0.8)
                ax.add_patch(FancyArrowPatch((0, 0), tuple(v), arrowstyle="->", mutation_scale=12, color="tab:red"))
            if "box" in panel:
                R = panel["box"]
                ax.add_patch(Rectangle((0, 0), R, R, fill=False, ls="--"))
            if "circle" in panel:
                t = np.linspace(0, 2 * np.pi, 200)
                ax.plot(panel["circle"] * np.cos(t), panel["circle"] * np.sin(t), "k--", lw=0.8)
            ax.set_aspect("equal")
            ax.set_title(f"{panel['title']} ({key}: {len(np.unique(X, axis=0))} points)")
    fig.tight_layout()
    return fig


def plot_stages(states: dict[str, list[np.ndarray]], targets: Sequence[np.ndarray]) -> plt.Figure:
    """Fig. 5: the dataset at the input and after separation, leader selection, collapse and interpolation
    (``states`` from :meth:`Transformer.stage_states`; targets as diamonds; one panel per stage, three a row)."""
    ncols = min(3, len(states))  # at most three panels a row, so that they stay legible at the book's width
    nrows = -(-len(states) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(3.6 * ncols, 3.5 * nrows), squeeze=False)
    for ax, (name, seqs) in zip(axes.flat, states.items()):
        draw_tokens(ax, seqs, targets if name in ("input", "interpolation") else None)
        ax.set_title(name.replace("_", " "))
        ax.set_aspect("equal", adjustable="datalim")
    spare = axes.flat[len(states):]
    for ax in spare:
        ax.axis("off")
    # the legend (inputs X^j and the big diamonds, their targets Y^j) in a spare panel, else under the panels
    handles, labels = axes[0, 0].get_legend_handles_labels()
    if len(spare):
        spare[0].legend(handles, labels, loc="center")
        fig.tight_layout()
    else:
        fig.tight_layout(rect=(0, 0.4 / fig.get_figheight(), 1, 1))
        fig.legend(handles, labels, loc="lower center", ncol=len(labels))
    return fig


def plot_separation(model: Transformer, dataset: SequenceDataset, block: int = 0) -> plt.Figure:
    """Fig. 6: one separation block: (a) input, the moved token circled in red between the lines bounding
    its hat window, (b) after the FF (rescaled into the half-space v·x > 0, the circled token pushed far
    along v), (c) after the SA (A = v vᵀ, ρ = 1 − c, V = c I).

    Sequences are drawn slightly offset (jitter) so that tokens they share remain visible."""
    paths = model.trace(dataset.inputs)
    before = [p[block] for p in paths]
    ff, sa = model.blocks[block].ff, model.blocks[block].sa
    after_ff = [ff(x) for x in before]
    after_sa = [p[block + 1] for p in paths]
    fig, axes = plt.subplots(1, 3, figsize=(11, 3.6))
    X = np.concatenate(before)
    r = np.abs(X @ ff.u - ff.center)
    moved = X[np.argmin(r)]
    u = ff.u / np.linalg.norm(ff.u)
    normal = np.array([-u[1], u[0]])
    half = ff.eps / np.linalg.norm(ff.u)
    for sign in (-1, 1):
        line = moved + sign * half * u + np.outer([-4, 4], normal)
        axes[0].plot(*line.T, color="tab:green", lw=0.8, label="hat window" if sign < 0 else None)
    axes[0].scatter(*moved, s=260, facecolor="none", edgecolor="tab:red", linewidths=1.5, zorder=4,
                    label="token moved")
    jitter = 0.02 * np.ptp(np.concatenate(after_sa), axis=0).max()
    for ax, seqs, title in zip(axes, (before, after_ff, after_sa), ("(a) input", "(b) after FF", "(c) after SA")):
        draw_tokens(ax, seqs, jitter=jitter)
        ax.set_title(title)
        ax.set_aspect("equal", adjustable="datalim")
    v = 0.3 * sa.A.a / np.linalg.norm(sa.A.a)
    base = np.concatenate(after_ff).min(axis=0)
    axes[1].annotate("", tuple(base + v), tuple(base), arrowprops={"arrowstyle": "->", "color": "tab:red"})
    axes[1].text(*(base + 1.15 * v), "$v$")
    axes[0].legend(loc="best")
    fig.tight_layout()
    return fig


def plot_leader_selection(model: Transformer, dataset: SequenceDataset) -> plt.Figure:
    """Fig. 7: left, after the first leader move (everything in the box B, region P beyond its corner,
    the arc of the sphere in the negative quadrant); right, after all leaders were placed."""
    stage = model.stages["leader_selection"]
    paths = model.trace(dataset.inputs)
    u = model.unit  # the construction's length unit: its box is [u, 2u]^d
    radius = below_box(2)[1] * u  # the hardmax sphere slots in the plane
    fig, axes = plt.subplots(1, 2, figsize=(9, 4.2))
    for ax, k, title in ((axes[0], stage.start + 1, "first leader placed"), (axes[1], stage.stop, "all leaders placed")):
        draw_tokens(ax, [p[k] for p in paths])
        ax.add_patch(Rectangle((BOX_LOW * u, BOX_LOW * u), (BOX_HIGH - BOX_LOW) * u, (BOX_HIGH - BOX_LOW) * u, fill=False,
                               ls="--"))
        ax.text(BOX_LOW * u, (BOX_HIGH + 0.05) * u, "$B$")
        ax.add_patch(Rectangle((BOX_HIGH * u, BOX_HIGH * u), 3.0 * u, 3.0 * u, alpha=0.08, color="tab:purple"))
        ax.text(4.7 * u, 2.15 * u, "$P$")
        t = np.linspace(np.pi, 1.5 * np.pi, 100)
        ax.plot(radius * np.cos(t), radius * np.sin(t), "k:", lw=1)
        ax.text(-radius, -0.35 * u, r"$S_R \cap Q$")
        ax.axhline(0, color="0.7", lw=0.6)
        ax.axvline(0, color="0.7", lw=0.6)
        ax.set_title(title)
        ax.set_aspect("equal")
    axes[1].legend(loc="lower right")
    fig.tight_layout()
    return fig


def plot_trajectories(model: Transformer, dataset: SequenceDataset, ax: plt.Axes | None = None) -> plt.Figure:
    """Every token's path through the blocks (first two coordinates), from its input (the sequence's marker) to
    its target (a large diamond), in its sequence's colour."""
    ax = _axes(ax, figsize=(6, 5))
    for j, path in enumerate(model.trace(dataset.inputs)):
        style = sequence_style(j)
        for i in range(path.shape[1]):
            ax.plot(path[:, i, 0], path[:, i, 1], color=style["color"], lw=0.7, alpha=0.6)
        ax.scatter(*path[0].T, color=style["color"], marker=style["marker"], s=25, edgecolor="k", linewidths=0.3)
        ax.scatter(*to_float(dataset.targets[j]).T, color=style["color"], **TARGET)
    ax.scatter([], [], color="0.6", edgecolor="k", linewidths=0.3, marker=MARKERS[0], s=25, label="input token")
    ax.scatter([], [], color="0.6", **TARGET, label="target token")
    ax.plot([], [], color="0.6", lw=0.7, label="path through the blocks")
    ax.legend(loc="best", fontsize=8)
    ax.set_aspect("equal", adjustable="datalim")
    ax.set_title("token trajectories through the blocks (colour: sequence)")
    return ax.figure

