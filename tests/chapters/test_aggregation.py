"""Chapter 09's tables and figures (InfoFlow Theorem 3 and §4.4): the CLS attention of a stored model, the
cost-law table and slopes, and the two figures."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import numpy as np  # noqa: E402
import pytest  # noqa: E402
import torch  # noqa: E402

from conftest import ROOT, run_record, store_weights  # noqa: E402
from transformer_theory.models import Transformer  # noqa: E402
from transformer_theory.pipeline.notebooks import notebook_parameters  # noqa: E402
from transformer_theory.plotting.aggregation import plot_cls_attention, plot_cost_law  # noqa: E402
from transformer_theory.chapters import experiment  # noqa: E402
from transformer_theory.chapters.experiment import RunResult  # noqa: E402
from transformer_theory.training import RunStore  # noqa: E402
from transformer_theory.training.store import trained_model  # noqa: E402
from transformer_theory.chapters.aggregation import (DEFAULTS, EXPERIMENT, AggregationParameters,  # noqa: E402
                                                     attention_summary, cost_law, cost_law_table, cost_model,
                                                     decoder_parameters)

SMALL = {"embed_dim": 8, "head_dim": 8, "seeds": [0, 1], "cost_seq_len": 8, "cost_T0s": [1, 8],
         "cost_widths": [4, 16], "cost_seeds": [0], "ffn_width": 16, "encoder_width": 8}


def test_registry_and_notebook_hold_the_module_experiment() -> None:
    assert experiment("09_aggregation_cost") is EXPERIMENT
    assert notebook_parameters(ROOT / "notebooks" / "09_aggregation_cost.ipynb") == DEFAULTS


@pytest.mark.parametrize("change, message", [
    ({"seeds": []}, "seeds must be a non-empty list"),  # train 09_aggregation_cost -p seeds []
    ({"cost_seeds": []}, "cost_seeds must be a non-empty list"),
    ({"positions": []}, "positions must be a non-empty list"),
    ({"cost_T0s": []}, "cost_T0s must be a non-empty list"),
    ({"cost_widths": []}, "cost_widths must be a non-empty list"),
    ({"positions": [1, "2"]}, r"positions\[1\]"),
    ({"cost_widths": [4, 8.0]}, r"cost_widths\[1\]"),
    ({"seeds": [-1]}, r"seeds\[0\]"),
    ({"cost_T0s": [0, 1]}, r"cost_T0s\[0\]"),
    ({"seq_len": 0}, "seq_len must be a positive integer"),
    ({"cost_embed_dim": -4}, "cost_embed_dim must be a positive integer"),
    ({"cost_steps": 0}, "cost_steps must be a positive integer"),
    ({"steps": 0}, "steps must be a positive integer"),
    ({"eval_every": 0}, "eval_every must be a positive integer"),
    ({"target_seed": -1}, "target_seed"),
    ({"cost_widhts": [4]}, "Did you mean 'cost_widths'"),
])
def test_bad_parameters_are_refused_naming_the_parameter(change, message) -> None:
    with pytest.raises(ValueError, match=message):
        EXPERIMENT.runs(change)


def test_the_parameters_are_checked_once_on_construction() -> None:
    with pytest.raises(ValueError, match="cost_seeds"):
        AggregationParameters(cost_seeds=())
    p = AggregationParameters(**DEFAULTS)
    assert p.positions == (1, 2, 3) and p.cost_seeds == (0,)
    assert DEFAULTS["positions"] == [1, 2, 3] and "train_size" not in DEFAULTS  # fresh samples at every step


def _results(nmse: dict) -> list[RunResult]:
    """The runs of SMALL: best NMSE ``nmse[("attention", seed)]`` or ``nmse[(T0, width)]``."""
    out = []
    for run in EXPERIMENT.runs(SMALL):
        t = run.tags
        key = ("attention", t["seed"]) if t["part"] == "attention" else (t["T0"], t["width"])
        out.append(RunResult(t, run_record(nmse[key], key=run.config.key, seed=run.config.seed)))
    return out


GOOD = {("attention", 0): 0.2, ("attention", 1): 0.1, (1, 4): 0.1, (1, 16): 0.01, (8, 4): 0.5, (8, 16): 0.3}


def test_cost_law_table_and_slopes() -> None:
    rows = cost_law_table(_results(GOOD), SMALL)
    assert [(r["T0"], r["width"], r["nmse"]) for r in rows] == [(1, 4, 0.1), (1, 16, 0.01), (8, 4, 0.5), (8, 16, 0.3)]
    p = EXPERIMENT.parameters(SMALL)
    assert [r["parameters"] for r in rows[:2]] == [decoder_parameters(cost_model(p, w)) for w in (4, 16)]
    assert [r["predicted_exponent"] for r in rows] == [2.0, 2.0, 3.0, 3.0]  # max(2, T0 d / E - 1) with E = 4
    judged = cost_law(rows)
    assert judged["pairs"] == [[1, 8]] and judged["observed"]
    expected = np.log10(0.3 / 0.5) / np.log10(rows[3]["parameters"] / rows[2]["parameters"])
    assert judged["slopes"][8] == pytest.approx(expected) and judged["slopes"][1] < judged["slopes"][8]
    assert judged["predicted_slopes"] == {1: -1.0, 8: pytest.approx(-2 / 3)}
    steep = cost_law(cost_law_table(_results({**GOOD, (8, 16): 0.001}), SMALL))
    assert not steep["nmse_ordered"] and not steep["slopes_ordered"] and not steep["observed"]
    with pytest.raises(ValueError, match="finite NMSE"):
        cost_law(cost_law_table(_results({**GOOD, (8, 4): None}), SMALL))
    with pytest.raises(ValueError, match="nothing to compare"):  # T0 = 1 alone: the criterion would hold vacuously
        cost_law([r for r in rows if r["T0"] == 1])


def test_attention_summary_reads_the_best_stored_model(tmp_path) -> None:
    store = RunStore(tmp_path)
    runs = [r for r in EXPERIMENT.runs(SMALL) if r.tags["part"] == "attention"]
    torch.manual_seed(0)
    models = [Transformer(r.config.model) for r in runs]
    for run, model in zip(runs, models):
        store_weights(store, run.config, model.state_dict())
    loaded = trained_model(runs[1].config, store)
    x = torch.randn(3, 10, 2)
    torch.testing.assert_close(loaded(x), models[1](x))
    summary = attention_summary(_results(GOOD), SMALL, store, n_samples=64, seed=1)
    assert summary["seed"] == 1 and summary["nmse"] == 0.1  # the seed with the best NMSE
    assert summary["weights"].shape == (64, 10) and summary["mean"].shape == summary["std"].shape == (10,)
    np.testing.assert_allclose(summary["mean"].sum() + summary["to_cls"], 1.0, atol=1e-6)
    assert summary["observed"] is False  # an untrained model attends about uniformly
    with pytest.raises(ValueError, match="no readable weights"):
        trained_model(runs[0].config, RunStore(tmp_path / "empty"))
    with pytest.raises(ValueError, match="no attention run"):
        attention_summary([r for r in _results(GOOD) if r.tags["part"] == "cost_law"], SMALL, store)
    # the claims: the attention criterion on the same stored model (untrained: not met) and the cost law
    assert EXPERIMENT.claims(_results(GOOD), SMALL, store) == {"attention_observed": False, "cost_law_observed": True}
    assert EXPERIMENT.tables(_results(GOOD), SMALL) == {"cost_law_table": cost_law_table(_results(GOOD), SMALL)}


def test_figures() -> None:
    w = np.r_[[1 / 3] * 3, [0.0] * 7][None, :].repeat(5, axis=0)
    fig = plot_cls_attention(w, n_rows=4)
    heat, bars = fig.axes[0], fig.axes[1]
    assert heat.images[0].get_array().shape == (4, 10)
    assert [p.get_height() for p in bars.patches] == pytest.approx(list(w[0]))
    with pytest.raises(ValueError, match="samples, T"):
        plot_cls_attention(np.zeros(5))
    rows = cost_law_table(_results(GOOD), SMALL)
    ax = plot_cost_law(rows).axes[0]
    assert [line.get_label() for line in ax.get_lines()] == ["T0 = 1 (predicted k = 2)", "T0 = 8 (predicted k = 3)"]
    assert list(ax.get_lines()[1].get_ydata()) == [0.5, 0.3] and ax.get_xscale() == ax.get_yscale() == "log"
    with pytest.raises(ValueError, match="nothing to plot"):
        plot_cost_law([{**r, "nmse": None} for r in rows])
