"""Chapter 14's figure: one bar per arm, the (D, D) NMSE and the ratio, with the baseline and the bar to help."""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from transformer_theory.plotting.ablation import plot_ablation  # noqa: E402

ROWS = [{"arm": arm, "D": 2, "T": 8, "steps": 100, "nmse_full": full, "ratio": ratio, "helps": helps}
        for arm, full, ratio, helps in (("baseline", 1e-3, 5.0, None), ("wide FFN", 1e-4, 40.0, True),
                                        ("lower lr", None, None, None))]


def test_one_bar_per_arm_with_the_baseline_and_the_bar() -> None:
    fig = plot_ablation(ROWS, min_gain=2.0)
    left, right = fig.axes
    assert [t.get_text() for t in left.get_yticklabels()] == ["baseline", "wide FFN", "lower lr"]
    widths = [p.get_width() for p in right.patches]
    assert widths[:2] == [5.0, 40.0] and np.isnan(widths[2])  # an arm without a ratio draws no bar
    assert right.patches[1].get_facecolor() != right.patches[0].get_facecolor()  # the arm that helps stands out
    assert [line.get_xdata()[0] for line in right.get_lines()] == [5.0, 10.0]
    assert left.get_xscale() == right.get_xscale() == "log"
    plt.close(fig)


def test_nothing_to_plot_is_an_error() -> None:
    with pytest.raises(ValueError, match="empty"):
        plot_ablation([], min_gain=2.0)
