"""The depth-separation figure: NMSE against T and against the FFN width, one line per configuration."""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from transformer_theory.plotting.depth_separation import configuration_label, plot_depth_separation  # noqa: E402


def _row(layers, heads, T, width, nmse, seeds=None):
    return {"layers": layers, "heads": list(heads), "T": T, "ffn_width": width, "nmse": nmse,
            "seed_nmse": seeds if seeds is not None else {0: nmse}}


ROWS = [_row(1, (h,), T, 64, 0.5 / h, {0: 0.5 / h, 1: 0.6 / h}) for h in (1, 4) for T in (8, 16, 32)]
ROWS += [_row(2, (1, 1), T, 64, 0.01 * T) for T in (8, 16, 32)]
ROWS += [_row(1, (4,), 16, w, 0.2) for w in (16, 32)] + [_row(2, (1, 1), 16, w, 0.1) for w in (16, 32)]


def test_labels() -> None:
    assert configuration_label({"layers": 1, "heads": [4]}) == "1 layer, h = 4"
    assert configuration_label({"layers": 2, "heads": [1, 1]}) == "2 layers, heads (1, 1)"


def test_panels_lines_and_scales() -> None:
    fig = plot_depth_separation(ROWS, ffn_width=64, width_seq_len=16)
    left, right = fig.axes
    assert [line.get_label() for line in left.get_lines()] == ["1 layer, h = 1", "1 layer, h = 4",
                                                                "2 layers, heads (1, 1)"]
    two = left.get_lines()[2]
    assert list(two.get_xdata()) == [8, 16, 32] and list(two.get_ydata()) == pytest.approx([0.08, 0.16, 0.32])
    assert two.get_linestyle() == "--" and left.get_lines()[0].get_linestyle() == "-"
    # right: only configurations with two or more widths at T = 16 (h = 1 has one, at width 64)
    assert [line.get_label() for line in right.get_lines()] == ["1 layer, h = 4", "2 layers, heads (1, 1)"]
    assert list(right.get_lines()[0].get_xdata()) == [16, 32, 64]
    assert right.get_lines()[0].get_color() == left.get_lines()[1].get_color()  # one colour per configuration
    assert all(ax.get_xscale() == "log" and ax.get_yscale() == "log" for ax in fig.axes)
    seed_dots = sum(len(c.get_offsets()) for c in left.collections)
    assert seed_dots == 2 * 2 * 3 + 3  # two seeds for the one-layer rows, one for the two-layer rows
    plt.close(fig)


def test_diverged_configurations_are_left_out() -> None:
    rows = ROWS + [_row(1, (2,), T, 64, None, {0: None}) for T in (8, 16)]
    fig = plot_depth_separation(rows, ffn_width=64, width_seq_len=16)
    assert "1 layer, h = 2" not in [line.get_label() for line in fig.axes[0].get_lines()]
    plt.close(fig)


def test_nothing_to_plot_is_an_error() -> None:
    with pytest.raises(ValueError, match="empty"):
        plot_depth_separation([], ffn_width=64, width_seq_len=16)
    with pytest.raises(ValueError, match="ffn_width"):
        plot_depth_separation(ROWS, ffn_width=64, width_seq_len=8)  # one width only at T = 8
