"""Chapter 10's experiment (InfoFlow §4.1 and the predecessor's single-layer head count): its run list, the
calculator's predictions, the tables beside the papers' numbers and the criterion's ratios."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from conftest import ROOT, TINY_INTRINSIC as TINY, run_record
from transformer_theory.infoflow.reference import INTRINSIC_DIMENSION_NMSE, P1_SINGLE_LAYER_NMSE
from transformer_theory.pipeline.notebooks import notebook_parameters
from transformer_theory.chapters import experiment
from transformer_theory.chapters.experiment import RunResult
from transformer_theory.training import plan_tasks
from transformer_theory.chapters.recipes import head_configs
from transformer_theory.chapters.intrinsic_dimension import (DEFAULTS, EXPERIMENT, MIN_RATIOS,
                                                             IntrinsicDimensionParameters,
                                                             head_count_table, nmse_table, prediction_table,
                                                             ratios_during_training, retrieval_agreement,
                                                             retrieval_summary, retrieval_table,
                                                             model_retrieval_agreement, ratio_rises_with_length,
                                                             separation_ratios, sequence_length_runs,
                                                             sequence_length_table)
from transformer_theory.training import default_store

#: The run store the claims read weights from: the book profile's (committed runs first).
BOOK_STORE = default_store("book")

NOTEBOOK = ROOT / "notebooks" / "10_intrinsic_dimension.ipynb"


def _results(cells: dict[tuple, list], head_count: dict[tuple, list] | None = None) -> list[RunResult]:
    """Runs: ``cells[(D, h1, h2)]`` and ``head_count[(T, h)]`` = best NMSE of seeds 0, 1, ..."""
    out = []
    for (D, h1, h2), nmses in cells.items():
        for seed, v in enumerate(nmses):
            out.append(RunResult({"part": "intrinsic_dimension", "D": D, "h1": h1, "h2": h2, "T": 16, "seed": seed},
                                 run_record(v)))
    for (T, h), nmses in (head_count or {}).items():
        for seed, v in enumerate(nmses):
            out.append(RunResult({"part": "head_count", "D": 4, "h": h, "T": T, "seed": seed}, run_record(v)))
    return out


def test_registry_and_notebook_share_the_defaults() -> None:
    assert experiment("10_intrinsic_dimension") is EXPERIMENT
    assert notebook_parameters(NOTEBOOK) == DEFAULTS


def test_head_configurations() -> None:
    assert head_configs(2) == [(2, 2), (1, 2), (2, 1)]
    assert head_configs(6) == [(6, 6), (5, 6), (6, 5)]
    with pytest.raises(ValueError, match="at least 2"):
        head_configs(1)


def test_run_list_of_the_defaults() -> None:
    runs = EXPERIMENT.runs()
    ids = [r for r in runs if r.tags["part"] == "intrinsic_dimension"]
    hc = [r for r in runs if r.tags["part"] == "head_count"]
    sl = [r for r in runs if r.tags["part"] == "sequence_length"]
    ls = [r for r in runs if r.tags["part"] == "long_schedule"]
    assert {(r.tags["D"], r.tags["h1"], r.tags["h2"]) for r in ids} == {
        (D, h1, h2) for D in (2, 3, 4, 5, 6) for h1, h2 in head_configs(D)}
    assert len(ids) == 30 and len(hc) == 5 and len(sl) == 18 and len(ls) == 12
    # the recipe part (tests/chapters/test_recipe_part.py): 4 cells x 3 recipes x 3 configurations x 2 seeds, the
    # candidate at 3 cells (3 x 3 x 2), and the recipe's and the candidate's seed-0 runs doubled
    assert [sum(r.tags["part"] == part for r in runs) for part in ("recipe", "double_budget")] == [90, 12 + 9]
    # the longer schedule: the D with a bar, seed 0 (D = 2 also seed 1), four times the steps, otherwise the main
    # part's runs
    assert {(r.tags["D"], r.tags["h1"], r.tags["h2"], r.tags["seed"]) for r in ls} == {
        (D, h1, h2, s) for D in (2, 3, 4) for h1, h2 in head_configs(D) for s in ((0, 1) if D == 2 else (0,))}
    main = {(r.tags["D"], r.tags["h1"], r.tags["h2"], r.tags["seed"]): r.config for r in ids}
    for r in ls:
        assert r.config.steps == 64000 and r.config.seq_len == 16
        assert replace(r.config, steps=16000) == main[r.tags["D"], r.tags["h1"], r.tags["h2"], r.tags["seed"]]
    # the sequence-length runs at T = 16 are the D = 2 runs of the main part: trained once
    assert {r.config.key for r in sl if r.tags["T"] == 16} == {r.config.key for r in ids if r.tags["D"] == 2}
    assert len({r.config.key for r in runs}) == len(runs) - 6
    assert {(r.tags["D"], r.tags["T"], r.config.seq_len, r.config.model.width) for r in sl} == {
        (2, T, T, 32) for T in (8, 16, 32)}
    for r in ids:
        c, D = r.config, r.tags["D"]
        assert c.target == "pairwise_max" and c.target_args == {"D": D, "d": 4, "seed": 0}
        assert c.model.heads == (r.tags["h1"], r.tags["h2"]) and c.seq_len == 16 and c.steps == 16000
        assert c.model.width == 16 * D and c.model.head_dim == 16 and c.model.ffn_width == 32 * D
        assert c.model.cls_only_last and c.model.max_len is None and c.train_size is None  # fresh samples
        assert r.tags["seed"] in (0, 1)
    for r in hc:
        c, h = r.config, r.tags["h"]
        assert c.target == "max_retrieval" and c.target_args == {"D": 4, "d": 4, "seed": 0}
        assert c.model.heads == (h,) and c.model.width == 8 * h and c.model.head_dim == 8 and c.steps == 3000
    # one task per D (the three head configurations are masks of one program), one per head count (E = 8h)
    tasks = plan_tasks([r.config for r in ids + hc + sl + ls])
    assert sorted(len(t.runs) for t in tasks) == [1] * 5 + [3] * 2 + [6] * 8


@pytest.mark.parametrize("change, message", [
    ({"D_values": [1, 2]}, "D_values"),
    ({"D_values": []}, "D_values"),
    ({"hc_heads": [0]}, "hc_heads"),
    ({"seeds": []}, "seeds"),
    ({"hc_seeds": [-1]}, "hc_seeds"),
    ({"seq_len": 0}, "seq_len"),
    ({"hc_train_size": 1.5}, "hc_train_size"),
    ({"Dvalues": [2]}, "Did you mean 'D_values'"),
    ({"sl_D": 1}, "sl_D"),
    ({"sl_seq_lens": []}, "sl_seq_lens"),
    ({"sl_seq_lens": [8, 0]}, "sl_seq_lens"),
    ({"ls_D_values": [1]}, "ls_D_values"),
    ({"ls_steps": 0}, "ls_steps"),
    ({"ls_seeds": []}, "ls_seeds"),
    ({"ls_check_D": [5]}, "ls_check_D: 5 is not one of ls_D_values"),
    ({"ls_check_seeds": [-1]}, "ls_check_seeds"),
    ({"D_values": []}, "D_values must be a non-empty list"),
    ({"D_values": [2, "3"]}, r"D_values\[1\]"),
    ({"seeds": []}, "seeds must be a non-empty list"),
    ({"hc_seeds": []}, "hc_seeds must be a non-empty list"),
    ({"hc_seeds": [0.0]}, r"hc_seeds\[0\]"),
    ({"hc_heads": []}, "hc_heads must be a non-empty list"),
    ({"hc_heads": [1, 0]}, r"hc_heads\[1\]"),
    ({"hc_seq_lens": []}, "hc_seq_lens must be a non-empty list"),
    ({"ls_check_D": []}, "ls_check_D must be a non-empty list"),
    ({"ls_check_seeds": []}, "ls_check_seeds must be a non-empty list"),
    ({"embed_dim_per_D": 0}, "embed_dim_per_D must be a positive integer"),
    ({"ffn_width_per_D": -32}, "ffn_width_per_D must be a positive integer"),
    ({"hc_ffn_width": 0}, "hc_ffn_width must be a positive integer"),
    ({"hc_D": 0}, "hc_D must be a positive integer"),
    ({"encoder_width": 0}, "encoder_width must be a positive integer"),
    ({"target_seed": -1}, "target_seed"),
])
def test_bad_parameters_are_rejected(change, message) -> None:
    with pytest.raises(ValueError, match=message):
        EXPERIMENT.runs(change)


def test_the_parameters_are_checked_once_on_construction() -> None:
    """The dataclass refuses a bad value before any run is built; the part builders and tables take it or a dict
    (a notebook's parameters); DEFAULTS stays a dict without ffn_width or train_size (chapter 14 reads it)."""
    with pytest.raises(ValueError, match="ls_check_D"):
        IntrinsicDimensionParameters(ls_check_D=(4,), ls_D_values=(2, 3))
    p = IntrinsicDimensionParameters(**DEFAULTS)
    assert p.D_values == (2, 3, 4, 5, 6) and p.hc_seeds == (0,)
    assert [r.config.key for r in sequence_length_runs(p)] == [r.config.key for r in sequence_length_runs(DEFAULTS)]
    with pytest.raises(ValueError, match="sl_seq_lens"):
        sequence_length_runs({"sl_seq_lens": []})
    assert DEFAULTS["D_values"] == [2, 3, 4, 5, 6] and not {"ffn_width", "train_size"} & set(DEFAULTS)


def test_predictions_are_infoflows_rule() -> None:
    """Chapter 06's calculator on every cell of InfoFlow's table: efficient iff h1 >= D and h2 >= D, and a
    missing head in either layer names that layer."""
    rows = prediction_table({"D_values": [2, 3, 4, 5, 6]})
    assert len(rows) == 15
    for r in rows:
        assert r["predicted_efficient"] == (r["config"] == "(D,D)")
        assert r["paper_nmse"] == INTRINSIC_DIMENSION_NMSE[r["D"]][r["config"]]
    assert all(r["predicted_exponent"] == 1.0 and r["bottleneck"] == "" for r in rows if r["config"] == "(D,D)")
    assert all("layer 1" in r["bottleneck"] for r in rows if r["config"] == "(D-1,D)")
    assert all("layer 2" in r["bottleneck"] for r in rows if r["config"] == "(D,D-1)")


def test_nmse_table_and_ratios() -> None:
    results = _results({(2, 2, 2): [2e-3, 1e-3], (2, 1, 2): [3e-2, 2e-2], (2, 2, 1): [1.5e-2, None],
                        (3, 3, 3): [1e-2], (3, 2, 3): [2e-2], (3, 3, 2): [4e-2]})
    rows = nmse_table(results)
    by = {(r["D"], r["config"]): r for r in rows}
    assert by[(2, "(D,D)")]["nmse"] == 1e-3 and by[(2, "(D,D-1)")]["nmse"] == 1.5e-2
    assert by[(2, "(D,D-1)")]["seed_nmse"] == {0: 1.5e-2, 1: None}
    assert {"D", "h1", "h2", "nmse", "paper_nmse", "predicted_efficient"} <= set(rows[0])
    ratios = {s["D"]: s for s in separation_ratios(rows)}
    assert ratios[2]["ratio"] == pytest.approx(15.0) and ratios[2]["met"] is True  # min(2e-2, 1.5e-2) / 1e-3
    assert ratios[3]["ratio"] == pytest.approx(2.0) and ratios[3]["met"] is False
    assert ratios[2]["bar"] == MIN_RATIOS[2] == 10.0 and MIN_RATIOS[4] == 3.0
    assert ratios[2]["paper_ratio"] == pytest.approx(3.67e-2 / 5.89e-5)


def test_the_long_schedule_part_is_tabulated_on_its_own_runs() -> None:
    """``part="long_schedule"``: the rows of ``ls_D_values`` from the long-schedule runs only; its ratios during
    training are read at quarters of ``ls_steps``."""
    results = [RunResult({**r.tags, "part": "long_schedule"},
                         run_record(r.best_nmse, history={"step": [200, 400], "val_nmse": [1.0, v]}))
               for r, v in zip(_results({(3, 3, 3): [1e-3], (3, 2, 3): [2e-2], (3, 3, 2): [3e-2]}),
                                         (1e-3, 2e-2, 3e-2))]
    results += _results({(3, 3, 3): [1.0], (3, 2, 3): [1.0], (3, 3, 2): [1.0], (2, 2, 2): [1.0]})
    parameters = {"D_values": [2, 3], "ls_D_values": [3], "ls_check_D": [3], "steps": 100, "ls_steps": 400}
    rows = nmse_table(results, parameters, part="long_schedule")
    assert [(r["D"], r["config"], r["nmse"]) for r in rows] == [(3, "(D,D)", 1e-3), (3, "(D-1,D)", 2e-2),
                                                                 (3, "(D,D-1)", 3e-2)]
    s = separation_ratios(rows)[0]
    assert s["ratio"] == pytest.approx(20.0) and s["met"] is True
    assert [r["D"] for r in nmse_table(results, parameters)] == [2, 2, 2, 3, 3, 3]
    during = ratios_during_training(results, parameters, fractions=(0.5, 1.0), part="long_schedule")
    assert [(r["D"], r["step"], r["ratio"]) for r in during] == [(3, 200, pytest.approx(1.0)),
                                                                 (3, 400, pytest.approx(20.0))]
    with pytest.raises(ValueError, match="part must be one of"):
        nmse_table(results, parameters, part="sequence_length")


def test_missing_values_give_no_verdict() -> None:
    rows = nmse_table(_results({(2, 2, 2): [None], (2, 1, 2): [0.1], (2, 2, 1): [0.1]}))
    s = separation_ratios(rows)[0]
    assert s["ratio"] is None and s["met"] is None and s["nmse_missing"] == 0.1
    rows = nmse_table(_results({(5, 5, 5): [1e-3], (5, 4, 5): [4e-3], (5, 5, 4): [2e-3]}), {"D_values": [5]})
    s = separation_ratios(rows)[0]
    assert s["ratio"] == pytest.approx(2.0) and s["bar"] is None and s["met"] is None


def test_sequence_length_table_and_its_criterion() -> None:
    nmse = {8: (1e-3, 2e-3, 3e-3), 16: (1e-3, 4e-3, 5e-3), 32: (2e-3, 4e-3, 8e-3)}
    results = [RunResult({"part": "sequence_length", "D": 2, "h1": h1, "h2": h2, "T": T, "seed": 0}, run_record(v))
               for T, values in nmse.items() for (h1, h2), v in zip(head_configs(2), values)]
    results.append(RunResult({"part": "intrinsic_dimension", "D": 2, "h1": 2, "h2": 2, "T": 8, "seed": 0},
                             run_record(1.0)))
    rows = sequence_length_table(results)
    assert [r["T"] for r in rows] == [8, 16, 32] and all(r["D"] == 2 and r["E"] == 32 for r in rows)
    assert [r["ratio"] for r in rows] == pytest.approx([2.0, 4.0, 2.0])  # the other part's runs are not read
    assert rows[0]["nmse"] == {"(D,D)": 1e-3, "(D-1,D)": 2e-3, "(D,D-1)": 3e-3}
    # the calculator's exponents: 1 with every head, aggregation's max(2, Td/E - 1) with one missing
    assert [r["exponents"] for r in rows] == [{"(D,D)": 1.0, "(D-1,D)": k, "(D,D-1)": k} for k in (2.0, 2.0, 3.0)]
    assert ratio_rises_with_length(rows) == {"8->16": True, "16->32": False}
    before = sequence_length_table([], {"sl_seq_lens": [64, 16]})
    assert [r["T"] for r in before] == [16, 64] and all(r["ratio"] is None for r in before)
    assert before[1]["exponents"]["(D-1,D)"] == 7.0
    assert ratio_rises_with_length(before) == {"16->64": None}


def test_the_claims_are_the_verdicts_on_the_fixed_criteria() -> None:
    """``criterion_met_d<D>`` for each D with a bar, the sequence-length criterion step by step and as a whole, and
    the bars on the longer schedule; D = 5 has no bar, so no claim."""
    values = {"D_values": [2, 5], "ls_D_values": [2], "ls_check_D": [2], "sl_D": 2, "sl_seq_lens": [8, 16],
              "seq_len": 16}
    cells = {(2, 2, 2): [1e-3], (2, 1, 2): [2e-2], (2, 2, 1): [1.5e-2], (5, 5, 5): [1e-3], (5, 4, 5): [2e-3],
             (5, 5, 4): [2e-3]}
    results = _results(cells)
    for part, T, ratio in (("sequence_length", 8, 2.0), ("sequence_length", 16, 4.0), ("long_schedule", 16, 5.0)):
        results += [RunResult({"part": part, "D": 2, "h1": h1, "h2": h2, "T": T, "seed": 0},
                              run_record(1e-3 * (1 if (h1, h2) == (2, 2) else ratio))) for h1, h2 in head_configs(2)]
    claims = EXPERIMENT.claims(results, values, BOOK_STORE)
    assert claims == {"criterion_met_d2": True, "sequence_length_rises_8_16": True, "sequence_length_observed": True,
                      "long_schedule_criterion_met_d2": False}
    tables = EXPERIMENT.tables(results, values)
    assert [s["ratio"] for s in tables["long_schedule_ratios"]] == [pytest.approx(5.0)]
    assert tables["head_count_table"] == [] and len(tables["nmse_table"]) == 6


def test_ratios_during_training_use_the_best_nmse_up_to_each_step() -> None:
    curves = {(2, 2, 2): [0.5, 0.1, 0.01, 0.02], (2, 1, 2): [0.4, 0.2, 0.1, 0.05], (2, 2, 1): [0.6, 0.3, 0.08, None]}
    results = [RunResult({"part": "intrinsic_dimension", "D": D, "h1": h1, "h2": h2, "T": 16, "seed": 0},
                         run_record(history={"step": [25, 50, 75, 100], "val_nmse": v})) for (D, h1, h2), v in curves.items()]
    rows = ratios_during_training(results, {"D_values": [2], "steps": 100}, fractions=(0.1, 0.5, 1.0))
    assert [(r["D"], r["step"]) for r in rows] == [(2, 10), (2, 50), (2, 100)]
    assert rows[0]["ratio"] is None  # no validation yet
    assert rows[1]["ratio"] == pytest.approx(0.2 / 0.1)
    assert rows[2]["ratio"] == pytest.approx(0.05 / 0.01)  # best so far of (2,2) is 0.01, not its last 0.02
    with pytest.raises(ValueError, match="fractions"):
        ratios_during_training(results, {"D_values": [2], "steps": 100}, fractions=(0.0,))


def _one_hot(index: np.ndarray, size: int) -> np.ndarray:
    return np.eye(size)[index]


def test_retrieval_agreement_finds_the_planted_mechanism() -> None:
    """Layer-1 head 0 attends to argmax_t x(s)ᵀA_0 x(t), head 1 to argmax_s (the other orientation) of term 1;
    the CLS heads attend to the outer maximisers of term 1 and term 0: every planted retrieval scores 1."""
    rng = np.random.default_rng(0)
    B, T, D = 200, 12, 2
    X, A = rng.normal(size=(B, T, 4)), rng.normal(size=(D, 4, 4)) / 2
    S = np.einsum("bsd,ide,bte->bist", X, A, X)
    layer1 = np.full((B, 2, T + 1, T + 1), 1e-3)
    layer1[:, 0, :T, :T] += _one_hot(S[:, 0].argmax(-1), T)
    layer1[:, 1, :T, :T] += _one_hot(S[:, 1].transpose(0, 2, 1).argmax(-1), T)
    layer1[:, :, :, T] = 5.0  # attention to CLS is not a retrieval: ignored
    layer2 = np.zeros((B, 2, T + 1))
    layer2[:, 0, :T] = _one_hot(S[:, 1].transpose(0, 2, 1).max(-1).argmax(-1), T)
    layer2[:, 1, :T] = _one_hot(S[:, 0].max(-1).argmax(-1), T)
    rows = {(r["layer"], r["head"], r["term"], r["orientation"]): r["agreement"]
            for r in retrieval_agreement(layer1, layer2, A, X)}
    assert rows[1, 0, 0, "A"] == rows[1, 1, 1, "A^T"] == rows[2, 0, 1, "A^T"] == rows[2, 1, 0, "A"] == 1.0
    assert rows[1, 0, 1, "A"] < 0.5 and rows[2, 1, 1, "A"] < 0.5  # another term's tokens are other tokens
    summary = retrieval_summary(list(retrieval_agreement(layer1, layer2, A, X)))
    assert summary == {"layer1": [1.0, 1.0], "layer2": [1.0, 1.0], "learned": 2}
    layer2[:, 0] = 1.0 / (T + 1)  # layer 2 loses term 1's retrieval (argmax of a uniform row: token 0)
    summary = retrieval_summary(retrieval_agreement(layer1, layer2, A, X))
    assert summary["learned"] == 1 and summary["layer2"][1] < 0.5
    with pytest.raises(ValueError, match="do not match"):
        retrieval_agreement(layer1[:, :, :T, :T], layer2, A, X)


def test_model_retrieval_agreement_reads_the_models_attention() -> None:
    run = next(r.config for r in EXPERIMENT.runs({"D_values": [2], "seeds": [0], "seq_len": 8})
               if r.tags["part"] == "intrinsic_dimension")
    from transformer_theory.training import init_model

    X = np.random.default_rng(1).normal(size=(64, 8, 4))
    rows = model_retrieval_agreement(init_model(run.model, 0), run.tree().params["A"], X)
    assert len(rows) == (2 + 2) * 2 * 2 and all(0 <= r["agreement"] <= 1 for r in rows)  # (h1 + h2) x terms x 2


def test_retrieval_table_reads_the_full_head_models_that_kept_their_weights(tmp_path) -> None:
    from transformer_theory.chapters import run_experiment
    from transformer_theory.training import RunStore, TrainOptions

    store = RunStore(tmp_path)
    run_experiment("10_intrinsic_dimension", TINY, store=store, n_workers=0, options=TrainOptions(progress=False))
    rows = retrieval_table(TINY, store, n_samples=128)
    assert [(r["D"], r["seed"]) for r in rows] == [(2, 0), (2, 1)]  # the (2, 2) runs only
    for r in rows:
        assert 0 <= r["learned"] <= 2
        assert all(len(r[k]) == 2 for k in ("layer1", "layer2", "init_layer1", "init_layer2"))
    full = next(r.config for r in EXPERIMENT.runs(TINY)
                if r.tags.get("h1") == 2 == r.tags.get("h2") and r.tags["seed"] == 1)
    store.weights_path(full.key).unlink()
    assert [r["seed"] for r in retrieval_table(TINY, store, n_samples=128)] == [0]
    long = retrieval_table(TINY, store, n_samples=128, part="long_schedule")
    assert [(r["D"], r["seed"]) for r in long] == [(2, 0)] and long[0]["layer1"] != rows[0]["layer1"]


def test_head_count_table_beside_p1() -> None:
    rows = head_count_table(_results({}, {(16, 3): [1e-3, 2e-3], (16, 4): [1e-5], (12, 4): [1e-5]}))
    assert [(r["T"], r["h"]) for r in rows] == [(12, 4), (16, 3), (16, 4)]
    at = {(r["T"], r["h"]): r for r in rows}
    assert at[(16, 3)]["nmse"] == 1e-3
    assert (at[(16, 3)]["paper_nmse"], at[(16, 3)]["paper_std"]) == P1_SINGLE_LAYER_NMSE[3][16]
    assert at[(12, 4)]["paper_nmse"] is None  # P1 has no T = 12
    assert not at[(16, 3)]["predicted_efficient"] and at[(16, 4)]["predicted_efficient"]


def test_p1_table_2_t64_column() -> None:
    from transformer_theory.infoflow.reference import P1_SINGLE_LAYER_T64_NMSE
    assert P1_SINGLE_LAYER_T64_NMSE == {1: 1.14e-1, 2: 1.31e-2, 3: 1.31e-3, 4: 8.75e-6, 5: 4.19e-6}
