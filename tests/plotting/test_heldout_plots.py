"""Chapter 12's figures draw what they are given: one line per configuration, disagreements marked, one
panel per learning-curve group or size axis."""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from transformer_theory.plotting.heldout import plot_learning_curves, plot_scoreboard, plot_size_axis  # noqa: E402


def _row(name, E, T, nmse, agrees=True, predicted=True, exponent=1.0, verdict_E=32):
    return {"name": name, "E": E, "T": T, "nmse": nmse, "agrees": agrees, "predicted_efficient": predicted,
            "exponent": exponent, "verdict_E": verdict_E}


ROWS = [_row("a", 32, 8, 1e-3), _row("a", 32, 16, 2e-3),
        _row("b", 32, 8, 3e-3, agrees=False, predicted=False), _row("b", 32, 16, 4e-3, agrees=False, predicted=False),
        *[_row("size", E, T, 0.1 * T / E, predicted=False, exponent=T * 4 / E - 1) for E in (16, 32, 48)
          for T in (16, 32)]]


def test_scoreboard_marks_the_disagreements():
    fig = plot_scoreboard(ROWS, 1e-2)
    ax = fig.axes[0]
    labels = {t.get_text(): t.get_color() for t in ax.get_yticklabels()}
    assert set(labels) == {"a", "b", "size"} and labels["b"] != labels["a"]
    crosses = [line for line in ax.lines if line.get_marker() == "x"]
    assert len(crosses) == 1  # b only (legend handles are not lines of the axes)
    assert crosses[0].get_xdata()[0] == pytest.approx(4e-3)
    size_line = [line for line in ax.lines if list(line.get_ydata()) == [0, 0]][0]  # drawn first: bottom row
    assert list(size_line.get_xdata()) == pytest.approx([0.1 * 16 / 32, 0.1 * 32 / 32])  # judged at verdict_E
    plt.close(fig)


def test_learning_curves_one_panel_per_group():
    curves = {"a": [("T=8", [1, 2], [0.5, 0.1]), ("T=16", [1, 2], [None, 0.2])], "b": [("T=8", [1, 2], [0.9, 0.8])]}
    fig = plot_learning_curves(curves, 1e-2)
    visible = [ax for ax in fig.axes if ax.get_visible()]
    assert [ax.get_title() for ax in visible] == ["a", "b"] and len(visible[0].get_lines()) == 3  # + threshold
    plt.close(fig)
    with pytest.raises(ValueError, match="nothing to draw"):
        plot_learning_curves({}, 1e-2)


def test_size_axis_draws_only_configurations_with_several_widths():
    fig = plot_size_axis(ROWS)
    (ax,) = fig.axes
    assert ax.get_title().startswith("size") and len(ax.get_lines()) == 2
    assert [t.get_text() for t in ax.texts][:3] == ["k=3", "k=1", "k=0.333333"]
    plt.close(fig)
    with pytest.raises(ValueError, match="no configuration has a model-size axis"):
        plot_size_axis(ROWS[:4])
