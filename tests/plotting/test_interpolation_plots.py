"""The Paper A figures say what each mark is: targets, the moved token and its window, tied maximisers, the
tokens before a collapse."""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from transformer_theory.interpolation import ScaledIdentity, SelfAttention, build_interpolator  # noqa: E402
from transformer_theory.interpolation.examples import toy_dataset  # noqa: E402
from transformer_theory.plotting.interpolation import (plot_leader_selection, plot_separation,  # noqa: E402
                                                       plot_stages, plot_tie_geometry, plot_trajectories)
from transformer_theory.plotting.softmax import plot_collapse  # noqa: E402


def legend_texts(fig: plt.Figure) -> list[str]:
    legends = [ax.get_legend() for ax in fig.axes if ax.get_legend()] + list(fig.legends)
    return [t.get_text() for legend in legends for t in legend.get_texts()]


@pytest.fixture(scope="module")
def toy():
    return toy_dataset()


@pytest.fixture(scope="module")
def model(toy):
    return build_interpolator(toy, seed=0)


def test_the_stage_figure_says_the_diamonds_are_the_targets(toy, model) -> None:
    fig = plot_stages(model.stage_states(toy.inputs), toy.targets)
    labels = legend_texts(fig)
    n = len(toy.targets)
    assert [f"$Y^{{{j + 1}}}$ (target)" for j in range(n)] == [t for t in labels if "target" in t]
    assert [f"$X^{{{j + 1}}}$" for j in range(n)] == [t for t in labels if t.startswith("$X")]
    plt.close(fig)
    fig = plot_trajectories(model, toy)
    assert [t.get_text() for t in fig.axes[0].get_legend().get_texts()] == ["input token", "target token",
                                                                            "path through the blocks"]
    plt.close(fig)


def test_the_separation_leader_and_tie_figures_name_their_marks(toy, model) -> None:
    fig = plot_separation(model, toy, block=model.stages["separation"].start)
    assert legend_texts(fig)[:2] == ["hat window", "token moved"]
    plt.close(fig)
    fig = plot_leader_selection(model, toy)
    assert legend_texts(fig) == [f"$X^{{{j + 1}}}$" for j in range(len(toy.inputs))]
    plt.close(fig)
    x1, x2 = np.array([0.59, 1.12]), np.array([-0.03, 2.12])
    X = np.array([x1, x2, x2 + 1.7 * np.array([x1[1], -x1[0]]), [-1.63, 1.20], [1.10, 0.34]])
    fig = plot_tie_geometry(X, SelfAttention(0.0, ScaledIdentity(1.0), ScaledIdentity(1.0))(X))
    assert legend_texts(fig) == [r"span$(A x_1)$", "tied maximisers", "other tokens", r"SA$(X)_1$"]
    plt.close(fig)


def test_the_collapse_figure_names_the_faded_tokens(toy) -> None:
    fig = plot_collapse(build_interpolator(toy, attention="softmax", seed=0), toy)
    assert {"before the collapse (faded)", "each token's move"} <= set(legend_texts(fig))
    plt.close(fig)
