"""Chapter 08's tables and figures (InfoFlow Theorem 2 and §4.3): the NMSE table with the calculator's predictions,
the committed criteria on it, the probe of stored models against their initialisation, and the two figures."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import pytest  # noqa: E402

from conftest import ROOT, run_record, store_weights  # noqa: E402
from transformer_theory.pipeline.notebooks import notebook_parameters  # noqa: E402
from transformer_theory.plotting.max_position import plot_probe_ratios, plot_retrieval  # noqa: E402
from transformer_theory.chapters import experiment  # noqa: E402
from transformer_theory.chapters.experiment import RunResult  # noqa: E402
from transformer_theory.training import RunStore, init_model  # noqa: E402
from transformer_theory.chapters.max_position import (CRITERION, DEFAULTS, EXPERIMENT,  # noqa: E402
                                                      MaxPositionParameters, judge_table, nmse_table, probe_table)

SMALL = {"seq_lens": [4, 8], "ks": [1, 2], "embed_dim": 8, "head_dim": 4, "seeds": [0, 1], "probe_seq_len": 4,
         "probe_heads": [[2, 2], [1, 1]], "probe_embed_dim": 8, "probe_head_dim": 4, "ffn_width": 8,
         "encoder_width": 8}


def test_registry_and_notebook_hold_the_module_experiment() -> None:
    assert experiment("08_max_position_retrieval") is EXPERIMENT
    assert notebook_parameters(ROOT / "notebooks" / "08_max_position_retrieval.ipynb") == DEFAULTS


@pytest.mark.parametrize("change, message", [
    ({"seq_lens": []}, "seq_lens must be a non-empty list"),
    ({"ks": []}, "ks must be a non-empty list"),
    ({"seeds": []}, "seeds must be a non-empty list"),
    ({"probe_seeds": []}, "probe_seeds must be a non-empty list"),
    ({"probe_heads": []}, "probe_heads must be a non-empty list"),
    ({"probe_heads": [[2, 2], []]}, r"probe_heads\[1\] must be a non-empty list"),
    ({"probe_heads": [2, 2]}, r"probe_heads\[0\]"),
    ({"probe_heads": [[2, 2.0]]}, r"probe_heads\[0\]\[1\]"),
    ({"ks": [1, "2"]}, r"ks\[1\]"),
    ({"seq_lens": [8, 0]}, r"seq_lens\[1\]"),
    ({"probe_seeds": [0.5]}, r"probe_seeds\[0\]"),
    ({"embed_dim": 0}, "embed_dim must be a positive integer"),
    ({"two_layer_k": 0}, "two_layer_k must be a positive integer"),
    ({"probe_D": -2}, "probe_D must be a positive integer"),
    ({"probe_steps": 0}, "probe_steps must be a positive integer"),
    ({"encoder_width": 0}, "encoder_width must be a positive integer"),
    ({"target_seed": 1.5}, "target_seed"),
])
def test_bad_parameters_are_refused_naming_the_parameter(change, message) -> None:
    with pytest.raises(ValueError, match=message):
        EXPERIMENT.runs(change)


def test_the_parameters_are_checked_once_on_construction() -> None:
    with pytest.raises(ValueError, match="probe_heads"):
        MaxPositionParameters(probe_heads=[[1, 0]])
    p = MaxPositionParameters(**DEFAULTS)
    assert p.probe_heads == ((2, 2), (1, 2), (2, 1), (1, 1)) and p.ks == (1, 2, 3)
    assert DEFAULTS["probe_heads"] == [[2, 2], [1, 2], [2, 1], [1, 1]]  # lists of lists, as the notebook's cell


def _results(nmse: dict) -> list[RunResult]:
    """The runs of SMALL, best NMSE ``nmse[(layers, k, T)]`` (seed 1: twice that) and 0.5 for
    the probe runs."""
    out = []
    for run in EXPERIMENT.runs(SMALL):
        t = run.tags
        value = 0.5 if t["part"] == "probe" else nmse[(t["layers"], t["k"], t["T"])] * (1 + t["seed"])
        out.append(RunResult(t, run_record(value, key=run.config.key, seed=run.config.seed)))
    return out


GOOD = {(1, 1, 4): 0.01, (1, 1, 8): 0.02, (1, 2, 4): 0.2, (1, 2, 8): 0.6, (2, 2, 4): 0.02, (2, 2, 8): 0.04}


def test_nmse_table_and_its_verdicts() -> None:
    rows = nmse_table(_results(GOOD), SMALL)
    assert [(r["layers"], r["k"], r["T"], r["nmse"]) for r in rows] == [(*key, v) for key, v in sorted(GOOD.items())]
    assert all(r["seed_nmse"] == {0: r["nmse"], 1: 2 * r["nmse"]} for r in rows)
    assert [r["predicted_efficient"] for r in rows] == [True, True, False, False, True, True]
    judged = judge_table(rows, 2)
    assert judged["top1_stays_low"] and judged["kth_degrades"] == {2: True}
    assert judged["two_layer_observed_efficient"] and judged["two_layer_predicted_efficient"] and judged["agrees"]
    stalled = judge_table(nmse_table(_results({**GOOD, (2, 2, 8): 0.5}), SMALL), 2)
    assert not stalled["two_layer_observed_efficient"] and not stalled["agrees"]
    with pytest.raises(ValueError, match="k = 2, T = 8: no finite NMSE"):
        judge_table([{**r, "nmse": None} if (r["layers"], r["T"]) == (1, 8) and r["k"] == 2 else r for r in rows], 2)
    with pytest.raises(ValueError, match="no two-layer runs for k = 3"):
        judge_table(rows, 3)


def test_probe_table_compares_stored_weights_with_the_initialisation(tmp_path) -> None:
    store = RunStore(tmp_path)
    probes = [r for r in EXPERIMENT.runs(SMALL) if r.tags["part"] == "probe"]
    for run in probes:  # "trained" = the initialisation itself for (2, 2), a different draw for (1, 1)
        seed = run.config.seed if run.tags["heads"] == [2, 2] else run.config.seed + 1
        store_weights(store, run.config, init_model(run.config.model, seed).state_dict())
    rows = probe_table(_results(GOOD), SMALL, store, n_samples=256, seed=3)
    assert [(r["heads"], r["head"]) for r in rows] == [([2, 2], 1), ([2, 2], 2), ([1, 1], 1)]
    for r in rows[:2]:
        assert r["argmax_ratio"] == pytest.approx(1.0, abs=1e-12) and r["second_ratio"] == pytest.approx(1.0, abs=1e-12)
    assert rows[2]["argmax_ratio"] != pytest.approx(1.0, abs=1e-6)
    assert all(r["nmse"] == 0.5 and r["seed"] == 0 for r in rows)
    with pytest.raises(ValueError, match="no readable weights"):
        probe_table(_results(GOOD), SMALL, RunStore(tmp_path / "empty"), n_samples=256)
    with pytest.raises(ValueError, match="no probe run"):
        probe_table([r for r in _results(GOOD) if r.tags["part"] != "probe"], SMALL, store, n_samples=256)
    # the claims: the committed criteria on the table, and the probe criterion (no head of (2, 2) moved: not met)
    assert EXPERIMENT.claims(_results(GOOD), SMALL, store) == {"top1_stays_low": True, "kth_degrades_k2": True,
                                                               "two_layer_agrees": True, "probe_observed": False}


def test_figures() -> None:
    fig = plot_retrieval(nmse_table(_results(GOOD), SMALL))
    assert len(fig.axes[0].lines) == 3 and fig.axes[0].get_yscale() == "log"
    assert [t.get_text() for t in fig.axes[0].get_legend().get_texts()][0] == "1 layer, k = 1 (predicted efficient)"
    rows = [{"heads": [2, 2], "head": h, "argmax_ratio": 0.3, "second_ratio": 1.0} for h in (1, 2)]
    fig = plot_probe_ratios(rows, CRITERION["probe_argmax_ratio"], CRITERION["probe_second_ratio"])
    assert len(fig.axes[0].patches) == 4 and [line.get_ydata()[0] for line in fig.axes[0].lines] == [0.84, 0.9]
    with pytest.raises(ValueError, match="nothing to plot"):
        plot_retrieval([{**r, "nmse": None} for r in nmse_table(_results(GOOD), SMALL)])
    with pytest.raises(ValueError, match="nothing to plot"):
        plot_probe_ratios([], 0.84, 0.9)
