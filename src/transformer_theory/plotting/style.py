"""The one plotting style every chapter uses, plus small shared figure helpers."""

from __future__ import annotations

import matplotlib as mpl
import matplotlib.pyplot as plt
from matplotlib.ticker import FuncFormatter, LogLocator, MaxNLocator, NullLocator

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


def readable_log_ticks(fig: plt.Figure) -> None:
    """Give every base-10 log axis of ``fig`` that spans less than a decade plain ticks (``1.05``, not
    ``1.05×10⁰``): a few evenly spaced values, no minor labels. Axes spanning a decade or more keep matplotlib's
    powers of ten, and an axis whose ticks were set explicitly is left alone."""
    for ax in fig.axes:
        for axis, limits in ((ax.xaxis, ax.get_xlim()), (ax.yaxis, ax.get_ylim())):
            scale = axis.get_scale()
            if scale != "log" or not isinstance(axis.get_major_locator(), LogLocator):
                continue
            if axis.get_transform().base != 10:
                continue
            low, high = sorted(limits)
            if low > 0 and high / low < 10:
                axis.set_major_locator(MaxNLocator(nbins=4, steps=[1, 2, 2.5, 5, 10]))
                axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:.3g}"))
                axis.set_minor_locator(NullLocator())
