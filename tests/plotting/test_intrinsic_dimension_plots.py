"""Chapter 10's figures: the NMSE heat maps (ours beside InfoFlow §4.1), validation curves, NMSE against T, the
head count."""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from matplotlib.patches import Rectangle  # noqa: E402

from transformer_theory.plotting.intrinsic_dimension import (plot_head_count, plot_nmse_against_length,  # noqa: E402
                                                             plot_nmse_heatmaps, plot_validation_curves)

ROWS = [{"D": D, "config": c, "nmse": v, "paper_nmse": p, "predicted_efficient": c == "(D,D)"}
        for D, vals in ((2, (1e-3, 2e-2, 3e-2)), (3, (1e-2, 2e-2, None)))
        for c, v, p in zip(("(D,D)", "(D-1,D)", "(D,D-1)"), vals, (6e-5, 5e-2, 4e-2))]


def test_heatmaps_hold_both_tables_on_one_scale() -> None:
    fig = plot_nmse_heatmaps(ROWS, ours_label="ours")
    ours, paper = fig.axes[:2]
    grid = ours.get_images()[0].get_array()
    assert grid.shape == (2, 3) and np.isclose(grid[0, 0], -3.0) and np.ma.is_masked(grid[1, 2])
    assert ours.get_images()[0].get_clim() == paper.get_images()[0].get_clim() == (-5.0, -1.0)
    assert "2.0e-02" in [t.get_text() for t in ours.texts]
    framed = [p for p in ours.patches if isinstance(p, Rectangle)]
    assert [(p.get_x(), p.get_y()) for p in framed] == [(-0.5, -0.5), (-0.5, 0.5)]  # (D,D) column, both D
    plt.close(fig)


def test_heatmaps_need_values() -> None:
    with pytest.raises(ValueError, match="empty"):
        plot_nmse_heatmaps([])
    with pytest.raises(ValueError, match="no NMSE"):
        plot_nmse_heatmaps([{**r, "nmse": None, "paper_nmse": None} for r in ROWS])


def test_validation_curves_one_colour_per_group() -> None:
    curves = [{"label": f"{g} s{s}", "group": g, "steps": [100, 200, 300], "nmse": [0.5, None, 0.1 * (s + 1)]}
              for g in ("(2, 2)", "(1, 2)") for s in (0, 1)]
    fig = plot_validation_curves(curves, title="D = 2")
    lines = fig.axes[0].get_lines()
    assert len(lines) == 4 and list(lines[0].get_xdata()) == [100, 300]
    assert lines[0].get_color() == lines[1].get_color() != lines[2].get_color()
    assert [t.get_text() for t in fig.axes[0].get_legend().get_texts()] == ["(2, 2)", "(1, 2)"]
    plt.close(fig)


def test_head_count_lines_and_reference() -> None:
    rows = [{"T": 16, "h": h, "nmse": 10.0 ** -h, "paper_nmse": 2 * 10.0 ** -h if h < 5 else None}
            for h in range(1, 6)]
    fig = plot_head_count(rows, D=4)
    labels = [line.get_label() for line in fig.axes[0].get_lines()]
    assert labels == ["ours, T = 16", "P1 Table 2, T = 16", "h = D = 4"]
    assert list(fig.axes[0].get_lines()[1].get_xdata()) == [1, 2, 3, 4]
    assert fig.axes[0].get_yscale() == "log"
    plt.close(fig)


def test_nmse_against_length_one_line_per_configuration() -> None:
    rows = [{"T": T, "D": 2, "nmse": {"(D,D)": 1e-3 * T, "(D-1,D)": 1e-2 * T, "(D,D-1)": None if T == 8 else 2e-2}}
            for T in (32, 8, 16)]
    fig = plot_nmse_against_length(rows)
    ax = fig.axes[0]
    lines = ax.get_lines()
    assert [line.get_label() for line in lines] == ["(D,D)", "(D-1,D)", "(D,D-1)"]
    assert list(lines[0].get_xdata()) == [8, 16, 32] and list(lines[2].get_xdata()) == [16, 32]
    assert ax.get_xscale() == ax.get_yscale() == "log" and ax.get_title() == "D = 2"
    plt.close(fig)
    with pytest.raises(ValueError, match="measured"):
        plot_nmse_against_length([{**r, "nmse": dict.fromkeys(r["nmse"])} for r in rows])
