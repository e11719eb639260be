"""The information-flow diagram draws one arrow per retrieval and a fan per aggregation."""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from transformer_theory.infoflow import (Architecture, pairwise_max, propagate,  # noqa: E402
                                         specific_positions, triangle_center)
from transformer_theory.plotting.infoflow import plot_information_flow  # noqa: E402


def _draw(target, arch, T):
    X = target.sample_inputs(1, T, np.random.default_rng(0))[0]
    return plot_information_flow(propagate(target, arch, T), X)


@pytest.mark.parametrize("target,arch,T", [
    (pairwise_max(2), Architecture((2, 2), 32, 4), 6),
    (pairwise_max(2), Architecture((1, 2), 32, 4), 6),
    (triangle_center(), Architecture((2, 2), 24, 2), 5),
    (specific_positions(), Architecture((1,), 16, 2, positional=True), 10),
])
def test_plot_information_flow(target, arch, T):
    ax = _draw(target, arch, T)
    assert ax.get_xticklabels()[-1].get_text() == "CLS"
    assert ax.get_legend() is not None
    plt.close(ax.figure)


def test_plot_counts_retrieval_arrows():
    ax = _draw(pairwise_max(2), Architecture((2, 2), 32, 4), 6)
    # layer 1: 2 heads x 6 tokens; layer 2: 2 CLS retrievals; plus one annotation for |I(CLS, L)|
    arrows = [c for c in ax.texts if getattr(c, "arrow_patch", None) is not None and c.get_text() == ""]
    assert len(arrows) == 2 * 6 + 2
    plt.close(ax.figure)


def test_plot_refuses_an_input_of_the_wrong_shape():
    prop = propagate(pairwise_max(2), Architecture((2, 2), 32, 4), 6)
    with pytest.raises(ValueError, match="X must have shape"):
        plot_information_flow(prop, np.zeros((5, 4)))
