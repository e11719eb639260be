"""Chapter 07's experiment (InfoFlow Theorem 1, the project's own experiment): its run list, its table, the
calculator's predictions beside it, and the separation ratio the chapter's claim is about."""

from __future__ import annotations

import pytest

from conftest import ROOT, run_record
from transformer_theory.pipeline.notebooks import notebook_parameters
from transformer_theory.chapters import experiment
from transformer_theory.training import plan_tasks
from transformer_theory.chapters.depth_separation import (DEFAULTS, EXPERIMENT, MIN_RATIO, DepthSeparationParameters,
                                                          nmse_table, prediction, separation)
from transformer_theory.chapters.experiment import RunResult, training_seconds
from transformer_theory.training import RunRecord, default_store

#: The run store the claims read weights from: the book profile's (committed runs first).
BOOK_STORE = default_store("book")

NOTEBOOK = ROOT / "notebooks" / "07_depth_separation.ipynb"


def _record(nmse, task="a", wall=10.0):
    """A record whose validation NMSE is best (``nmse``) at step 200, with the training loss 0.9·nmse there."""
    if nmse is None:
        history = {"step": [100], "val_nmse": [None], "train_loss": [None]}
    else:
        history = {"step": [100, 200, 300], "val_nmse": [1.0, nmse, 1.0], "train_loss": [1.0, 0.9 * nmse, 0.5]}
    return run_record(nmse, best_step=None if nmse is None else 200, history=history, task=task, wall_time_s=wall)


def _results(values: dict[tuple, list]) -> list[RunResult]:
    """Runs: ``values[(layers, heads, T, width)]`` = the best NMSE of seeds 0, 1, ..."""
    out = []
    for (layers, heads, T, width), nmses in values.items():
        for seed, v in enumerate(nmses):
            tags = {"layers": layers, "heads": list(heads), "T": T, "ffn_width": width, "seed": seed}
            out.append(RunResult(tags, _record(v, task=f"{layers}-{T}-{width}")))
    return out


def test_registry_holds_the_module_experiment() -> None:
    assert experiment("07_depth_separation") is EXPERIMENT


def test_notebook_parameters_are_the_experiment_defaults() -> None:
    """The CLI trains the profile entry through the experiment and the notebook passes its parameters cell: one
    list of names and the same default values, so both train the same runs."""
    assert notebook_parameters(NOTEBOOK) == DEFAULTS


def test_run_list_of_the_defaults() -> None:
    runs = EXPERIMENT.runs()
    main = [r for r in runs if r.tags["ffn_width"] == 64]
    configs = {(1, (1,)), (1, (2,)), (1, (4,)), (2, (1, 1))}
    for T in (8, 16, 32):
        at_T = [r for r in main if r.tags["T"] == T]
        assert {(r.tags["layers"], tuple(r.tags["heads"])) for r in at_T} == configs
        assert sorted(r.tags["seed"] for r in at_T) == [0, 0, 0, 0, 1, 1, 1, 1]
    width = [r for r in runs if r.tags["T"] == 16]
    by_width = {w: {(r.tags["layers"], tuple(r.tags["heads"])) for r in width if r.tags["ffn_width"] == w}
                for w in (16, 32, 128)}
    assert by_width == {w: {(1, (4,)), (2, (1, 1))} for w in (16, 32, 128)}
    assert len(runs) == 3 * 4 * 2 + 3 * 2 * 2  # T=16, width 64 is in both lists and appears once
    assert len({r.config.key for r in runs}) == len(runs)
    for r in runs:
        c = r.config
        assert c.target == "min_pairwise_dot" and c.target_args == {"d": 4} and c.train_size == 100_000
        assert c.seq_len == r.tags["T"] and c.seed == r.tags["seed"] and c.model.ffn_width == r.tags["ffn_width"]
        assert c.model.heads == tuple(r.tags["heads"]) and c.model.n_layers == r.tags["layers"]
        assert c.model.width == 32 and c.model.head_dim == 8 and c.model.cls_only_last and c.model.max_len is None
    for task in plan_tasks([r.config for r in runs]):  # one task per (T, width, depth): head counts are masks
        assert len({(r.seq_len, r.model.ffn_width, r.model.n_layers) for r in task.runs}) == 1
    assert len(plan_tasks([r.config for r in runs])) == 3 * 2 + 3 * 2


@pytest.mark.parametrize("change, message", [
    ({"seq_lens": [1, 8]}, "seq_lens"),
    ({"seq_lens": []}, "seq_lens"),
    ({"two_layer_heads": [1]}, "two_layer_heads"),
    ({"one_layer_heads": [0]}, "one_layer_heads"),
    ({"ffn_widths": "64"}, "ffn_widths"),
    ({"width_seq_len": 1}, "width_seq_len"),
    ({"seqlens": [8]}, "Did you mean 'seq_lens'"),
    ({"seeds": []}, "seeds must be a non-empty list"),
    ({"seeds": [0, 1.5]}, r"seeds\[1\]"),
    ({"one_layer_heads": []}, "one_layer_heads must be a non-empty list"),
    ({"width_one_layer_heads": ["4"]}, r"width_one_layer_heads\[0\]"),
    ({"ffn_widths": [16, 0]}, r"ffn_widths\[1\]"),
    ({"two_layer_heads": [1, True]}, r"two_layer_heads\[1\]"),
    ({"embed_dim": 0}, "embed_dim must be a positive integer"),
    ({"head_dim": -8}, "head_dim must be a positive integer"),
    ({"ffn_width": 0}, "ffn_width must be a positive integer"),
    ({"batch_size": 0}, "batch_size must be a positive integer"),
    ({"train_size": -1}, "train_size must be a positive integer"),
    ({"lr": 0.0}, "lr must be a positive"),
    ({"warmup": -1}, "warmup must be a non-negative integer"),
    ({"weight_decay": -0.1}, "weight_decay must be a non-negative"),
])
def test_bad_parameters_are_rejected(change, message) -> None:
    with pytest.raises(ValueError, match=message):
        EXPERIMENT.runs(change)


def test_the_parameters_are_checked_once_on_construction() -> None:
    """The dataclass refuses a bad value before any run is built, and holds the checked lists as tuples; the
    module's DEFAULTS are its defaults as lists (the notebook's parameters cell)."""
    with pytest.raises(ValueError, match="seq_lens"):
        DepthSeparationParameters(seq_lens=[])
    p = DepthSeparationParameters(**DEFAULTS)
    assert p.seq_lens == (8, 16, 32) and p.two_layer_heads == (1, 1)
    assert DEFAULTS["seq_lens"] == [8, 16, 32] and DEFAULTS["two_layer_heads"] == [1, 1] and DEFAULTS["steps"] == 3000


def test_predictions_beside_the_configurations() -> None:
    """Chapter 06's calculator: two layers with one head each are efficient with the T-independent exponent 1;
    one layer is inefficient, exponent max(2, Td/E - 1) (memorisation while Td <= E)."""
    for T in (8, 16, 32, 64):
        two = prediction([1, 1], T, 32)
        assert two["predicted_efficient"] and two["predicted_exponent"] == 1.0
        for h in (1, 2, 4):
            one = prediction([h], T, 32)
            assert not one["predicted_efficient"]
            assert one["predicted_exponent"] == max(2.0, T * 4 / 32 - 1)
    assert prediction([4], 8, 32)["predicted_regime"] == "memorisation"
    assert prediction([4], 64, 32)["predicted_regime"] == "aggregation"


def test_nmse_table_is_the_best_over_seeds_with_sizes_and_predictions() -> None:
    results = _results({(1, (4,), 16, 16): [0.4, 0.3], (1, (4,), 16, 32): [0.35, None],
                        (2, (1, 1), 16, 16): [0.05, 0.02]})
    rows = nmse_table(results)
    by = {(r["layers"], r["ffn_width"]): r for r in rows}
    assert by[(1, 16)]["nmse"] == 0.3 and by[(1, 32)]["nmse"] == 0.35 and by[(2, 16)]["nmse"] == 0.02
    assert by[(1, 32)]["seed_nmse"] == {0: 0.35, 1: None}
    assert by[(1, 16)]["train_loss"] == pytest.approx(0.9 * 0.3) and by[(2, 16)]["train_loss"] == pytest.approx(0.018)
    # 16 more FFN units in one residual FFN E -> w -> E (E = 32): w·E + w + E·w more parameters
    assert by[(1, 32)]["parameters"] - by[(1, 16)]["parameters"] == 16 * (2 * 32 + 1)
    assert by[(2, 16)]["predicted_efficient"] and not by[(1, 16)]["predicted_efficient"]
    assert {"layers", "heads", "T", "nmse"} <= set(rows[0])


def test_parameter_counts_follow_the_model() -> None:
    """The table's size of a one-layer model with h heads of dimension n: h·n more per query, key and value
    map and the output map, for each extra head."""
    rows = nmse_table(_results({(1, (1,), 8, 64): [0.5], (1, (2,), 8, 64): [0.4]}))
    one, two = sorted(rows, key=lambda r: r["heads"])
    assert two["parameters"] - one["parameters"] == 4 * 8 * 32  # q, k, v (E -> n) and out (n -> E), n = 8


def test_separation_ratio() -> None:
    rows = nmse_table(_results({(1, (1,), 32, 64): [0.5, 0.6], (1, (4,), 32, 64): [0.4, 0.38],
                                (2, (1, 1), 32, 64): [0.2, 0.038]}))
    s = separation(rows, 32, 64)
    assert s["one_layer_heads"] == 4 and s["one_layer_nmse"] == 0.38 and s["two_layer_nmse"] == 0.038
    assert s["ratio"] == pytest.approx(10.0)
    with pytest.raises(ValueError, match="T = 16"):
        separation(rows, 16, 64)
    diverged = nmse_table(_results({(1, (1,), 32, 64): [None], (2, (1, 1), 32, 64): [0.1]}))
    with pytest.raises(ValueError, match="diverged"):
        separation(diverged, 32, 64)


def test_claim_is_the_separation_at_the_largest_length() -> None:
    """The chapter's one claim: at the largest T of ``seq_lens`` the best one-layer NMSE is at least MIN_RATIO
    times the two-layer NMSE; the tables hold the NMSE table and the separation at every T."""
    values = {"seq_lens": [8, 32], "one_layer_heads": [1, 4]}
    nmse = {8: (0.5, 0.01), 32: (0.5, 0.5 / MIN_RATIO)}
    results = _results({(layers, heads, T, 64): [one if layers == 1 else two]
                        for T, (one, two) in nmse.items() for layers, heads in ((1, (1,)), (1, (4,)), (2, (1, 1)))})
    assert EXPERIMENT.claims(results, values, BOOK_STORE) == {"separation_at_largest_t": True}
    tables = EXPERIMENT.tables(results, values)
    assert [s["T"] for s in tables["separations"]] == [8, 32] and len(tables["nmse_table"]) == 6
    worse = _results({(layers, heads, T, 64): [0.5 if layers == 1 else 0.2] for T in (8, 32)
                      for layers, heads in ((1, (1,)), (1, (4,)), (2, (1, 1)))})
    assert EXPERIMENT.claims(worse, values, BOOK_STORE) == {"separation_at_largest_t": False}
    assert len(EXPERIMENT.predictions(values)["predictions"]) == 2 * 3


def test_training_seconds_counts_each_task_once() -> None:
    results = [RunResult({}, _record(0.1, "a", 10.0)), RunResult({}, _record(0.2, "a", 10.0)),
               RunResult({}, _record(0.3, "b", 5.5))]
    assert training_seconds(results) == 15.5


def test_tiny_model_config_is_valid() -> None:
    """The smoke profile's sizes build valid models (E = 16, n = 4)."""
    runs = EXPERIMENT.runs({"embed_dim": 16, "head_dim": 4, "encoder_width": 8, "ffn_width": 16, "ffn_widths": [8],
                            "seq_lens": [4], "width_seq_len": 4, "one_layer_heads": [1, 2],
                            "width_one_layer_heads": [2]})
    assert all(r.config.model.width == 16 and r.config.model.head_dim == 4 for r in runs)
    assert len(runs) == (3 + 2) * 2


def _curve_record(nmse: float, seed: int, task: str) -> RunRecord:
    """A record whose best validation NMSE ``nmse`` comes at the last step (half of it at the half-way step: half_gain
    2 for seed 0, 1 for the others), with the training loss 0.95·nmse there."""
    first = 2 * nmse if seed == 0 else nmse
    history = {"step": [50, 100], "val_nmse": [first, nmse], "train_loss": [first, 0.95 * nmse]}
    return run_record(nmse, best_step=100, final_nmse=nmse, history=history, config={"steps": 100}, task=task,
                      wall_time_s=60.0)


def test_the_analysis_judges_and_reads_synthetic_runs() -> None:
    """The analysis on runs where two layers win 10x at T = 8 and 4x at T = 32 (one-layer NMSE 0.4 with h = 1, 0.3
    with h = 2; the two-layer runs still learning): the depth claim fails at the largest T, the gap narrows, the
    calibration changes no verdict, and the prose says so."""
    from transformer_theory.chapters.depth_separation_analysis import analyse, reading_paragraphs, verdicts
    values = {"seq_lens": [8, 32], "one_layer_heads": [1, 2], "ffn_widths": [64], "width_seq_len": 32,
              "width_one_layer_heads": [2]}
    p = DepthSeparationParameters(**EXPERIMENT.parameters(values))
    nmse = {(1, 8): 0.4, (2, 8): 0.3, (1, 32): 0.4, (2, 32): 0.3}
    results = [RunResult(r.tags, _curve_record(
        nmse[(r.tags["heads"][0], r.tags["T"])] if r.tags["layers"] == 1 else (0.03 if r.tags["T"] == 8 else 0.075),
        r.tags["seed"], f"{r.tags['layers']}-{r.tags['T']}")) for r in EXPERIMENT.runs(values)]
    a = analyse(results, p)
    assert [s["ratio"] for s in a.separations] == pytest.approx([10.0, 4.0]) and a.largest["T"] == 32
    assert a.claims == {"separation_at_largest_t": False} and a.reading["ratios_narrow"]
    assert a.reading["head_gains"] == pytest.approx({8: 4 / 3, 32: 4 / 3}) and a.reading["criterion_changes"] == []
    assert a.reading["two_layer_half_gain"] == [2.0, 2.0] and a.reading["one_layer_half_gain_max"] == 2.0
    depth, in_T = verdicts(a)
    assert depth.verdict == in_T.verdict == "not observed"
    assert depth.ours == "one-layer / two-layer NMSE 10 / 4 at T = 8 / 32"
    assert depth.reason.startswith("two layers do not win by 5x") and "changed no verdict" in depth.reason
    assert in_T.reason == ("the gap shrinks as T grows, the opposite of the prediction; the two-layer runs were still "
                           "learning (half_gain 2 / 2)")
    text = reading_paragraphs(a)
    assert "**Both the two-layer and the one-layer runs were still learning.**" in text["budget"]
    assert "**Two layers do not beat one by `MIN_RATIO` = 5 at every $T$** (10 and 4 times" in text["points"]
    assert "changed no verdict." in text["efficiency"] and set(a.recorded()) >= {"nmse_table", "verdicts", "claims"}
    assert a.recorded()["separation_ratio"] == pytest.approx(4.0)
