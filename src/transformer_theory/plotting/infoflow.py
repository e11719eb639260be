"""Information-flow diagrams: tokens x layers, with retrieval and aggregation arrows (InfoFlow §2, reconstruction)."""

from __future__ import annotations

import numpy as np

from transformer_theory.infoflow.propagation import CLS, TOKENS, ALL, Propagation
from transformer_theory.infoflow.trees import Tree
from transformer_theory.plotting.style import PALETTE


def plot_information_flow(prop: Propagation, X: np.ndarray, *, ax=None, title: str | None = None):
    """Draw tokens (x: positions 1..T and CLS) x layers (y: 0..L) with the steps of ``prop``
    (the result of :func:`~transformer_theory.infoflow.propagate`).

    Retrieval arrows go from the concrete top-1 position on one input ``X`` (shape ``(T, d)``, e.g. one
    sample of ``prop.tree.sample_inputs``) to the query token, one colour per head; global aggregation
    is a grey fan from every token; specific-position aggregation is a dashed fan from the positions
    ``P``. Returns the matplotlib ``Axes``.
    """
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    target, arch = prop.tree, prop.arch
    T, L = prop.seq_len, arch.n_layers
    X = np.asarray(X, dtype=np.float64)
    if X.shape != (T, target.input_dim):
        raise ValueError(f"X must have shape (seq_len, d) = {(T, target.input_dim)}, got {X.shape}")
    if ax is None:
        _, ax = plt.subplots(figsize=(max(5.0, 0.45 * (T + 2)), 1.3 * (L + 1) + 0.8))
    xc = T + 1.5  # x of the CLS token

    def arrow(x0, y0, x1, y1, color, ls="-", lw=1.2, alpha=0.9):
        ax.annotate("", xy=(x1, y1 - 0.07), xytext=(x0, y0 + 0.07),
                    arrowprops=dict(arrowstyle="-|>", color=color, lw=lw, ls=ls, alpha=alpha,
                                    shrinkA=2, shrinkB=2, connectionstyle="arc3,rad=0.12"))

    for t in range(1, T + 1):
        ax.plot([t, t], [0, L], color="0.85", lw=0.8, zorder=0)
    ax.plot([xc, xc], [0, L], color="0.85", lw=0.8, zorder=0)
    for layer in range(L + 1):
        ax.scatter(np.arange(1, T + 1), np.full(T, layer), s=28, color="0.35", zorder=3)
        ax.scatter([xc], [layer], s=60, marker="s", color="0.15", zorder=3)

    handles, seen = [], set()
    for st in prop.steps:
        y1, y0 = st.layer, st.layer - 1
        color = PALETTE[((st.head or 1) - 1) % len(PALETTE)]
        if st.mode == "retrieval":
            sel = prop.retrieved(st, X)
            if st.query == TOKENS:
                for t in range(1, T + 1):
                    arrow(int(sel[t - 1]), y0, t, y1, color)
            else:
                arrow(int(sel), y0, xc, y1, color)
                if st.query == ALL:
                    for t in range(1, T + 1):
                        arrow(int(sel), y0, t, y1, color, lw=0.6, alpha=0.4)
            key = ("head", st.head)
            if key not in seen:
                handles.append(Line2D([], [], color=color, label=f"retrieval, head {st.head}"))
        elif st.mode == "specific":
            for p in st.positions:
                arrow(p, y0, xc, y1, color, ls="--")
            key = ("specific", st.head)
            if key not in seen:
                handles.append(Line2D([], [], color=color, ls="--", label=f"specific positions, head {st.head}"))
        else:
            qx = [xc] if st.query in (CLS, ALL) else list(range(1, T + 1))
            for x1 in qx:
                for s in range(1, T + 1):
                    ax.plot([s, x1], [y0 + 0.07, y1 - 0.07], color="0.55", lw=0.6, alpha=0.5, zorder=1)
            key = ("agg",)
            if key not in seen:
                who = f"head {st.head}" if st.head else "shared head"
                handles.append(Line2D([], [], color="0.55", label=f"global aggregation ({who})"))
        seen.add(key)

    n_cls = len(prop.info_set(CLS, L))
    ax.annotate(f"|I(CLS,{L})| = {n_cls}", (xc, L), xytext=(-8, 9), textcoords="offset points",
                ha="right", fontsize=9)
    ax.set_xticks(list(range(1, T + 1)) + [xc])
    ax.set_xticklabels([str(t) if T <= 16 or t % 4 == 1 else "" for t in range(1, T + 1)] + ["CLS"])
    ax.set_yticks(range(L + 1))
    ax.set_ylabel("layer l")
    ax.set_xlabel("token")
    ax.set_ylim(-0.4, L + 0.6)
    ax.grid(False)
    if handles:
        ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    ax.set_title(title if title is not None else f"{target.name}, heads {arch.heads}, T = {T}")
    return ax

