"""Depth separation (InfoFlow Theorem 1; the experiment is this project's own): validation NMSE of one-layer
and two-layer models against the sequence length T and against the FFN width, log scales."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import matplotlib.pyplot as plt
from matplotlib.ticker import NullLocator

from transformer_theory.plotting.style import sequence_style

__all__ = ["plot_depth_separation", "configuration_label"]


def configuration_label(row: dict[str, Any]) -> str:
    """``"1 layer, h = 4"`` or ``"2 layers, heads (1, 1)"``."""
    heads = list(row["heads"])
    if row["layers"] == 1:
        return f"1 layer, h = {heads[0]}"
    return f"{row['layers']} layers, heads ({', '.join(map(str, heads))})"


def _series(rows: Sequence[dict[str, Any]], x: str) -> dict[tuple, list[tuple[float, float]]]:
    """Points (x, best NMSE) per configuration (layers, heads), sorted by x; diverged runs left out."""
    out: dict[tuple, list[tuple[float, float]]] = {}
    for row in rows:
        if row["nmse"] is not None:
            out.setdefault((row["layers"], tuple(row["heads"])), []).append((row[x], row["nmse"]))
    return {key: sorted(points) for key, points in sorted(out.items())}


def plot_depth_separation(rows: Sequence[dict[str, Any]], *, ffn_width: int, width_seq_len: int) -> plt.Figure:
    """Two panels from the rows of :func:`~transformer_theory.chapters.depth_separation.nmse_table` (each with
    ``layers``, ``heads``, ``T``, ``ffn_width``, ``nmse``, and optionally ``seed_nmse``): best validation NMSE
    against T at FFN width ``ffn_width`` (left), and against the FFN width at T = ``width_seq_len`` for every
    configuration trained at two widths or more (right). One-layer models solid, two-layer dashed; the
    seeds' own values, when given, as small grey dots."""
    if not rows:
        raise ValueError("rows is empty: nothing to plot")
    panels = [("T", [r for r in rows if r["ffn_width"] == ffn_width], f"FFN width {ffn_width}"),
              ("ffn_width", [r for r in rows if r["T"] == width_seq_len], f"T = {width_seq_len}")]
    order = sorted({(r["layers"], tuple(r["heads"])) for r in rows})  # one colour per configuration in both panels
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.0))
    for ax, (x, subset, title) in zip(axes, panels):
        series = _series(subset, x)
        if x == "ffn_width":
            series = {k: v for k, v in series.items() if len(v) >= 2}
        if not series:
            raise ValueError(f"no configuration to plot against {x} ({title})")
        for (layers, heads), points in series.items():
            xs, ys = zip(*points)
            label = configuration_label({"layers": layers, "heads": heads})
            ax.plot(xs, ys, ls="-" if layers == 1 else "--", label=label, **sequence_style(order.index((layers, heads))))
        for row in subset:
            key = (row["layers"], tuple(row["heads"]))
            if key in series:
                values = [v for v in (row.get("seed_nmse") or {}).values() if v is not None]
                ax.scatter([row[x]] * len(values), values, s=8, color="0.6", zorder=1)
        ax.set_xscale("log", base=2)
        ticks = sorted({point[0] for points in series.values() for point in points})
        ax.set_xticks(ticks, [str(t) for t in ticks])
        ax.xaxis.set_minor_locator(NullLocator())
        ax.set_yscale("log")
        ax.set_xlabel("sequence length T" if x == "T" else "FFN width")
        ax.set_ylabel("best validation NMSE")
        ax.set_title(title)
    for ax in axes:
        ax.legend(fontsize=8)
    fig.tight_layout()
    return fig
