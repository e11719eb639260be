"""Chapter 13's calibration on P1 Tables 2 and 5: its runs, parameter checks, tables, verdicts and analysis."""

from __future__ import annotations

import pytest

from conftest import run_record
from transformer_theory.chapters import calibration as cal
from transformer_theory.chapters.calibration_analysis import analyse, reading_paragraphs, verdicts
from transformer_theory.chapters.experiment import RunResult
from transformer_theory.chapters.registry import experiment
from transformer_theory.training import default_store

#: The run store the claims read weights from: the book profile's (committed runs first).
BOOK_STORE = default_store("book")

TINY = dict(heads=[3, 4], seq_lens=[4, 6], head_dim=4, ffn_width=8, steps=20, seeds=[0, 1, 2], double_heads=[4],
            double_seq_len=4, tl_heads=[1, 2, 3], tl_seq_len=4, tl_embed_dim=8, tl_ffn_width=8, tl_steps=30,
            tl_seeds=[0, 1])


def test_the_runs_of_each_part() -> None:
    p = cal.CalibrationParameters(**TINY)
    runs = cal.calibration_runs(p)
    parts = [r.tags["part"] for r in runs]
    assert parts.count("head_count") == 2 * 2 * 3 and parts.count("double_budget") == 1
    assert parts.count("two_layer") == 3 * 2
    assert len({r.config.key for r in runs}) == len(runs)
    for r in runs:
        assert r.config.train_size is None and r.config.target == "max_retrieval"
        assert r.config.target_args == {"D": 4, "d": 4, "seed": 0}
        model = r.config.model
        if r.tags["part"] == "two_layer":
            assert model.heads == (r.tags["h"],) * 2 and model.embed_dim == 8 and model.head_dim == 8 // r.tags["h"]
            assert r.config.steps == 30
        else:
            assert model.heads == (r.tags["h"],) and model.embed_dim == 4 * r.tags["h"] and model.head_dim == 4
    double = next(r for r in runs if r.tags["part"] == "double_budget")
    base = next(r for r in runs if r.tags["part"] == "head_count" and r.tags["h"] == 4 and r.tags["T"] == 4
                and r.tags["seed"] == 0)
    assert double.config.steps == 2 * base.config.steps
    assert double.config.model == base.config.model and double.config.seed == base.config.seed


def test_the_experiment_is_registered_with_the_notebooks_defaults() -> None:
    assert experiment("13_training_recipe").defaults == cal.DEFAULTS
    assert cal.DEFAULTS["seq_lens"] == [8, 16, 32] and cal.DEFAULTS["seeds"] == [0, 1, 2]
    with pytest.raises(ValueError, match="unknown parameter 'seq_len'"):
        experiment("13_training_recipe").runs({"seq_len": [8]})


@pytest.mark.parametrize("name, value, message", [
    ("seeds", [], "seeds must be a non-empty list of seeds"),
    ("tl_seeds", "0", "tl_seeds must be a non-empty list of seeds"),
    ("heads", 8, "heads must be a non-empty list of integers"),
    ("seq_lens", [8, 0], r"seq_lens\[1\]"),
    ("steps", 0, "steps"),
    ("lr", -1e-3, "lr"),
    ("tl_heads", [1, 40], "tl_embed_dim >= h"),
])
def test_bad_parameters_are_named_before_any_run(name, value, message) -> None:
    with pytest.raises(ValueError, match=message):
        cal.CalibrationParameters(**{**TINY, name: value})


def _result(part: str, h: int, T: int, seed: int, nmse: float | None) -> RunResult:
    tags = {"part": part, "D": 4, "h": h, "layers": 2 if part == "two_layer" else 1, "T": T, "seed": seed,
            "steps": 20}
    return RunResult(tags, run_record(nmse, history={"step": [10, 20], "val_nmse": [1.0, nmse]}))


def test_head_count_verdicts_follow_the_criteria() -> None:
    p = cal.CalibrationParameters(**{**TINY, "heads": [3, 4, 5], "seq_lens": [8, 16]})
    results = [_result("head_count", 3, 8, s, 1e-3 * (s + 1)) for s in range(3)]
    results += [_result("head_count", 4, 8, s, 5e-5 * (s + 1)) for s in range(3)]  # ratio 20, 5e-5: met
    results += [_result("head_count", 3, 16, s, 1e-3) for s in range(3)]
    results += [_result("head_count", 4, 16, s, 2e-4) for s in range(3)]  # ratio 5 and above 1.5e-4: not met
    rows = cal.head_count_table(results, p)
    assert [(r["T"], r["h"]) for r in rows] == [(8, 3), (8, 4), (16, 3), (16, 4)]
    first = rows[1]
    assert first["nmse"] == 5e-5 and first["mean"] == pytest.approx(1e-4) and first["paper_nmse"] == 6.10e-5
    verdicts = {v["T"]: v for v in cal.head_count_verdicts(rows)}
    assert verdicts[8]["ratio"] == pytest.approx(20) and verdicts[8]["met"] is True
    assert verdicts[16]["ratio"] == pytest.approx(5) and verdicts[16]["met"] is False
    # a low NMSE alone does not pass: the ratio must reach the bar too
    close = [_result("head_count", 3, 8, 0, 1e-4), _result("head_count", 4, 8, 0, 5e-5)]
    assert cal.head_count_verdicts(cal.head_count_table(close, p))[0]["met"] is False
    missing = [_result("head_count", 4, 8, 0, None), _result("head_count", 3, 8, 0, 1e-3)]
    assert cal.head_count_verdicts(cal.head_count_table(missing, p))[0]["met"] is None


def test_two_layer_table_and_verdict() -> None:
    p = cal.CalibrationParameters(**TINY)
    results = [_result("two_layer", 1, 16, s, 8e-4) for s in range(2)]
    results += [_result("two_layer", 2, 16, s, v) for s, v in enumerate((4e-6, 3e-5))]
    rows = cal.two_layer_head_count_table(results, p)
    assert [r["h"] for r in rows] == [1, 2] and rows[1]["nmse"] == 4e-6
    assert rows[0]["paper_nmse"] == (1.85e-4, 4.28e-4)
    verdict = cal.two_layer_verdict(rows, p)
    assert verdict["h"] == 2 and verdict["ratio"] == pytest.approx(200) and verdict["met"] is True
    worse = [_result("two_layer", 1, 16, 0, 8e-4), _result("two_layer", 2, 16, 0, 3e-5)]
    assert cal.two_layer_verdict(cal.two_layer_head_count_table(worse, p), p)["met"] is False
    with pytest.raises(ValueError, match="even D"):
        cal.two_layer_verdict(rows, cal.CalibrationParameters(**{**TINY, "D": 3}))


def test_budget_check_compares_the_same_cell_at_twice_the_steps() -> None:
    p = cal.CalibrationParameters(**TINY)
    results = [_result("head_count", 4, 4, 0, 3e-6), _result("head_count", 4, 4, 1, 1e-6),
               _result("double_budget", 4, 4, 0, 1e-6), _result("head_count", 3, 4, 0, 1e-3),
               _result("double_budget", 3, 4, 0, 8e-4)]
    rows = cal.budget_check_table(results, p)
    assert [(r["h"], r["seed"]) for r in rows] == [(3, 0), (4, 0)]
    assert rows[0]["change"] == pytest.approx(1.25) and rows[0]["sufficient"] is True
    assert rows[1]["change"] == pytest.approx(3) and rows[1]["sufficient"] is False


def test_validation_curves_select_part_heads_and_length() -> None:
    results = [_result("head_count", 3, 8, 0, 1e-3), _result("head_count", 4, 8, 0, 1e-4),
               _result("head_count", 4, 16, 0, 1e-4), _result("two_layer", 1, 16, 0, 1e-3)]
    curves = cal.validation_curves(results, "head_count", (4,), 8)
    assert [(c["group"], c["label"]) for c in curves] == [("h = 4", "seed 0")]
    assert curves[0]["nmse"] == [1.0, 1e-4]
    assert len(cal.validation_curves(results, "head_count", (3, 4))) == 3


def test_a_profile_may_leave_the_optional_parts_out_and_the_verdicts_say_so() -> None:
    p = cal.CalibrationParameters(**{**TINY, "double_heads": [], "tl_heads": []})
    assert p.double_heads == () and p.tl_heads == ()
    parts = {r.tags["part"] for r in cal.calibration_runs(p)}
    assert parts == {"head_count"}
    assert cal.two_layer_verdict([], p)["met"] is None and cal.budget_check_table([], p) == []
    with pytest.raises(ValueError, match="heads must be a non-empty list"):
        cal.CalibrationParameters(**{**TINY, "heads": []})
    with pytest.raises(ValueError, match=r"tl_heads\[0\]"):
        cal.CalibrationParameters(**{**TINY, "tl_heads": [0]})


def test_the_claims_are_the_verdicts_on_the_criteria() -> None:
    """``head_count_met_t<T>``, ``budget_sufficient_h<h>_t<T>`` and ``two_layer_met``; a verdict without a value (a
    missing cell, a part left out) is not a claim."""
    values = {**TINY, "seq_lens": [4, 6], "tl_heads": [1, 2]}
    results = [_result("head_count", 3, 4, s, 1e-3) for s in range(3)]
    results += [_result("head_count", 4, 4, s, 5e-5) for s in range(3)]  # ratio 20: met
    results += [_result("head_count", 4, 6, s, 5e-5) for s in range(3)]  # h = 3 missing at T = 6: no verdict
    results += [_result("double_budget", 4, 4, 0, 4e-5)]  # changed 1.25x: sufficient
    results += [_result("two_layer", h, 4, s, v) for h, v in ((1, 8e-4), (2, 4e-6)) for s in range(2)]
    claims = experiment("13_training_recipe").claims(results, values, BOOK_STORE)
    assert claims == {"head_count_met_t4": True, "budget_sufficient_h4_t4": True, "two_layer_met": True}
    left_out = {**values, "double_heads": [], "tl_heads": []}
    assert experiment("13_training_recipe").claims(results[:6], left_out, BOOK_STORE) == {"head_count_met_t4": True}


def _run(part: str, h: int, T: int, seed: int, nmse: float, first_half: float | None = None) -> RunResult:
    """A run whose validation NMSE is ``first_half`` (default ``nmse``) at mid-schedule and ``nmse`` at its end."""
    tags = {"part": part, "D": 4, "h": h, "layers": 2 if part == "two_layer" else 1, "T": T, "seed": seed,
            "steps": 20}
    return RunResult(tags, run_record(nmse, best_step=20, final_nmse=nmse, config={"steps": 20},
                                      task=f"{part} {h} {T} {seed}", wall_time_s=1.0,
                                      history={"step": [10, 20], "val_nmse": [first_half or nmse, nmse]}))


CALIBRATED = ([_run("head_count", 3, 4, s, 1e-3, 1.1e-3) for s in range(3)]
              + [_run("head_count", 4, 4, s, 5e-6 * (s + 1), 5e-5) for s in range(3)]
              + [_run("double_budget", 3, 4, 0, 9e-4), _run("double_budget", 4, 4, 0, 2.5e-6)]
              + [_run("two_layer", h, 4, s, v, 10 * v) for h, v in ((1, 8e-4), (2, 4e-6)) for s in range(2)])


def test_the_analysis_judges_the_claims_and_words_the_reading_from_its_runs() -> None:
    p = cal.CalibrationParameters(**{**TINY, "seq_lens": [4], "double_heads": [3, 4], "tl_heads": [1, 2]})
    a = analyse(CALIBRATED, p)
    assert a.n_runs == 12 and a.training_seconds == 12.0 and a.parts_left_out == []
    assert a.gains_per_head == {4: [pytest.approx(200)]} and a.below_D_max_half_gain == {4: pytest.approx(1.1)}
    assert list(a.curves) == ["one layer, T = 4", "two layers, T = 4"] and len(a.curves["one layer, T = 4"]) == 6
    one, two = verdicts(a)
    assert (one.source, one.verdict, one.paper) == ("P1, Table 2", "reproduced", "h = 3 → 4 at T = 4: n/a → n/a")
    assert one.ours == "0.001 → 5e-06" and "NMSE at h = D ≤ 1.5e-4 and a ratio ≥ 10" in one.reason
    assert (two.paper, two.ours) == ("h = 2: 2.7e-06-7.2e-06", "h = 1 0.0008, h = 2 4e-06")
    assert two.reason.startswith("criteria: h = 2 ≤ 2e-5 and a ratio ≥ 10 (best of 2 seeds); the h = 2 run was")
    text = reading_paragraphs(a)
    assert "The criterion is met" in text["one_layer"] and "a fall of 200 times" in text["one_layer"]
    assert text["budget"].startswith("**Budget.** As predicted") and "widen the gap" in text["budget"]
    assert "inside P1's range" in text["two_layer"] and "above P1's range" in text["two_layer"]
    assert "at $T = 4$ only" in text["other_T"] and "all were still learning" in text["learning"]
    assert "one-layer h = 1, 2, 5" in text["not_trained"] and "one-layer T = 8, 16, 32" in text["not_trained"]
    assert set(a.recorded()) >= {"head_count_table", "head_count_verdicts", "budget_check", "two_layer_verdict",
                                 "gains_per_head", "below_D_max_half_gain", "head_count_half_gain", "analysis"}


def test_a_failed_calibration_is_not_observed_and_a_part_left_out_is_named() -> None:
    p = cal.CalibrationParameters(**{**TINY, "seq_lens": [4], "double_heads": [], "tl_heads": []})
    failed = [r for r in CALIBRATED if r.tags["part"] == "head_count" and r.tags["h"] == 3]
    failed += [_run("head_count", 4, 4, s, 2e-4) for s in range(3)]  # ratio 5, above the bar
    a = analyse(failed, p)
    assert a.parts_left_out == ["double_heads", "tl_heads"]
    assert [(c.source, c.verdict) for c in verdicts(a)] == [("P1, Table 2", "not observed")]
    text = reading_paragraphs(a)
    assert "**not met**" in text["one_layer"] and "does not reproduce" in text["one_layer"]
    assert "`double_heads` is empty" in text["budget"] and "`tl_heads` is empty" in text["two_layer"]
