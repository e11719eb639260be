"""The one plotting style every chapter uses, plus small shared figure helpers."""

from __future__ import annotations

import matplotlib as mpl

#: Paper A's figures (decoded from the official figure files): sequence 1 sky-blue circles, sequence 2 green
#: stars, sequence 3 orange triangles; then the rest.
PALETTE = ["#56b4e9", "#00ba38", "#ff7f0e", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"]
MARKERS = ["o", "*", "^", "s", "D", "v", "P", "X"]


def use_style() -> None:
    """Apply the book's matplotlib style (inline PNGs at a readable size, the papers' colours)."""
    mpl.rcParams.update(
        {
            "figure.figsize": (6.4, 4.0),
            "figure.dpi": 110,
            "savefig.dpi": 150,
            "font.size": 10,
            "axes.titlesize": 11,
            "axes.labelsize": 10,
            "legend.fontsize": 9,
            "legend.frameon": False,
            "lines.linewidth": 1.5,
            "axes.grid": True,
            "grid.alpha": 0.3,
            "axes.prop_cycle": mpl.cycler(color=PALETTE),
            "pdf.fonttype": 42,
        }
    )


def sequence_style(j: int) -> dict:
    """Colour and marker of sequence ``j`` (0-based), consistent across every figure of the book."""
    return {"color": PALETTE[j % len(PALETTE)], "marker": MARKERS[j % len(MARKERS)]}
