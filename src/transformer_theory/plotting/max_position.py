"""Max-position retrieval (InfoFlow Theorem 2 and §4.3): validation NMSE of the k-th largest retrieval against
T (one layer for every k, two layers for one k), and the linear probe's recovery-error ratios per head."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import NullLocator

from transformer_theory.plotting.style import sequence_style

__all__ = ["plot_retrieval", "plot_probe_ratios"]


def plot_retrieval(rows: Sequence[dict[str, Any]]) -> plt.Figure:
    """Best validation NMSE against T from the rows of
    :func:`~transformer_theory.chapters.max_position.nmse_table` (each with ``layers``, ``k``, ``T``, ``nmse``,
    ``predicted_efficient`` and optionally ``seed_nmse``): one line per (layers, k), one layer solid and two
    layers dashed, open markers where the calculator predicts the configuration inefficient; the seeds' own
    values as small grey dots."""
    series: dict[tuple[int, int], list[tuple[int, float]]] = {}
    predicted: dict[tuple[int, int], bool] = {}
    for r in rows:
        if r["nmse"] is not None:
            series.setdefault((r["layers"], r["k"]), []).append((r["T"], r["nmse"]))
            predicted[(r["layers"], r["k"])] = bool(r["predicted_efficient"])
    if not series:
        raise ValueError("rows hold no finite NMSE: nothing to plot")
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for j, key in enumerate(sorted(series)):
        layers, k = key
        xs, ys = zip(*sorted(series[key]))
        style = sequence_style(j)
        label = f"{layers} layer{'s' if layers > 1 else ''}, k = {k} (predicted {'efficient' if predicted[key] else 'inefficient'})"
        ax.plot(xs, ys, ls="-" if layers == 1 else "--", label=label,
                markerfacecolor=style["color"] if predicted[key] else "white", **style)
    for r in rows:
        values = [v for v in (r.get("seed_nmse") or {}).values() if v is not None]
        ax.scatter([r["T"]] * len(values), values, s=8, color="0.6", zorder=1)
    ax.set_xscale("log", base=2)
    ticks = sorted({t for points in series.values() for t, _ in points})
    ax.set_xticks(ticks, [str(t) for t in ticks])
    ax.xaxis.set_minor_locator(NullLocator())
    ax.set_yscale("log")
    ax.set_xlabel("sequence length T")
    ax.set_ylabel("best validation NMSE")
    ax.set_title("k-th largest retrieval")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def plot_probe_ratios(rows: Sequence[dict[str, Any]], argmax_bar: float, second_bar: float) -> plt.Figure:
    """Grouped bars from the rows of :func:`~transformer_theory.chapters.max_position.probe_table` (``heads``,
    ``head``, ``argmax_ratio``, ``second_ratio``): per (configuration, layer-1 head) the recovery-error ratio
    trained / initialisation of the argmax token and of the second-largest one, with the criterion's bars
    (``argmax_bar``: at most, ``second_bar``: at least) as horizontal lines."""
    if not rows:
        raise ValueError("rows is empty: nothing to plot")
    labels = [f"{tuple(r['heads'])}\nhead {r['head']}" for r in rows]
    x = np.arange(len(rows))
    fig, ax = plt.subplots(figsize=(max(6.4, 0.9 * len(rows) + 2), 4.0))
    ax.bar(x - 0.2, [r["argmax_ratio"] for r in rows], 0.4, label="argmax token", color=sequence_style(0)["color"])
    ax.bar(x + 0.2, [r["second_ratio"] for r in rows], 0.4, label="second-largest token", color=sequence_style(1)["color"])
    ax.axhline(argmax_bar, color="0.3", ls="--", lw=1, label=f"argmax bar {argmax_bar:g}")
    ax.axhline(second_bar, color="0.3", ls=":", lw=1, label=f"second-largest bar {second_bar:g}")
    ax.set_xticks(x, labels, fontsize=8)
    ax.set_xlabel("configuration (h1, h2), layer-1 head")
    ax.set_ylabel("recovery error: trained / initialisation")
    ax.set_title("linear probe after layer 1's attention")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig
