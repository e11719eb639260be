"""Chapter 10's recipe part (issue 33): §4.1 retrained on a from-scratch recipe with a control beside it. Its
parameters' checks, its runs (shared with chapter 14's controls, doubled for the budget check), its table against the
bars and its committed prediction judged statement by statement."""

from __future__ import annotations

from dataclasses import replace

import pytest

from conftest import run_record
from transformer_theory.infoflow.reference import INTRINSIC_DIMENSION_NMSE
from transformer_theory.chapters.ablation import AblationParameters, control_runs
from transformer_theory.chapters.budget import DOUBLE_PART, doubling_check
from transformer_theory.chapters.experiment import RunResult
from transformer_theory.chapters.intrinsic_dimension import IntrinsicDimensionParameters, recipe_part_runs
from transformer_theory.chapters.intrinsic_dimension_recipe import (recipe_part, recipe_prediction_check,
                                                                    recipe_table)
from transformer_theory.chapters.recipes import (RECIPE_MAX_FULL, RECIPE_STATEMENTS, RECIPES, head_configs,
                                                 recipe_runs, term_stages)

ONE_CELL = {"rc_cells": [[3, 8]], "rc_seeds": [0], "rc_double_seeds": [], "rc_candidate_cells": []}


def test_the_part_trains_the_recipe_and_its_control_at_every_cell_and_doubles_the_recipe() -> None:
    p = IntrinsicDimensionParameters(rc_cells=[[2, 8], [3, 16]], rc_seeds=[0, 1], rc_double_seeds=[1],
                                     rc_candidate_cells=[])
    runs = recipe_part_runs(p)
    own = [r for r in runs if r.tags["part"] == "recipe"]
    assert len(own) == 2 * 3 * 3 * 2  # cells x recipes x configurations x seeds
    assert {(r.tags["arm"], r.tags["D"], r.tags["T"]) for r in own} == {
        (a, D, T) for a in ("term curriculum", "term curriculum, GeLU FFN", "oracle attention")
        for D, T in ((2, 8), (3, 16))}
    twice = [r for r in runs if r.tags["part"] == DOUBLE_PART]
    assert len(twice) == 2 * 3 and {r.tags["arm"] for r in twice} == {"term curriculum"}
    assert {r.tags["seed"] for r in twice} == {1}
    for r in twice:
        assert r.config.steps == 2 * p.rc_steps
        assert r.config.term_stages == tuple(2 * s for s in term_stages(r.tags["D"], p.rc_steps, 0.4))
    oracle = [r.config for r in own if r.tags["arm"] == "oracle attention"]
    assert {c.init for c in oracle} == {"oracle"} and {c.model.ffn_kind for c in oracle} == {"mlp"}
    assert {r.config.model.ffn_kind for r in own if r.tags["arm"] == "term curriculum"} == {"gated"}
    gelu = [r.config for r in own if r.tags["arm"] == "term curriculum, GeLU FFN"]
    assert {c.model.ffn_kind for c in gelu} == {"mlp"} and all(c.term_stages for c in gelu)


def test_a_run_of_both_chapters_is_the_same_run() -> None:
    """Chapter 14's control at the chapter's defaults and chapter 10's recipe part at the same D, T, seed and steps
    have the same configurations, so the store trains them once."""
    ours = recipe_part_runs(IntrinsicDimensionParameters(**ONE_CELL))
    theirs = control_runs(AblationParameters(controls=["term curriculum", "term curriculum, GeLU FFN",
                                                       "oracle attention"], control_Ds=[3], control_seeds=[0]))
    assert {r.config.key for r in ours} == {r.config.key for r in theirs}


def test_the_recipe_part_can_leave_out_the_control_the_doubling_and_itself() -> None:
    runs = recipe_part_runs(IntrinsicDimensionParameters(rc_control="", **ONE_CELL))
    assert {r.tags["arm"] for r in runs} == {"term curriculum", "term curriculum, GeLU FFN"} and len(runs) == 6
    runs = recipe_part_runs(IntrinsicDimensionParameters(rc_control="", rc_papers_ffn="", **ONE_CELL))
    assert {r.tags["arm"] for r in runs} == {"term curriculum"} and len(runs) == 3
    # the candidate alone: 3 cells x 3 configurations x 2 seeds, and its seed-0 runs doubled
    assert len(recipe_part_runs(IntrinsicDimensionParameters(rc_cells=[]))) == 3 * 3 * 2 + 3 * 3
    p = IntrinsicDimensionParameters(rc_cells=[], rc_candidate_cells=[])
    assert recipe_part_runs(p) == [] and recipe_part([], p).paragraph().startswith("*(The recipe part has no ratio")
    assert recipe_part([], p).claims() == []


def test_the_candidate_has_its_own_seeds() -> None:
    """``rc_candidate_seeds`` seeds the candidate's runs (and its rows) alone; a bad list is refused by its name."""
    p = IntrinsicDimensionParameters(rc_cells=[[4, 8]], rc_seeds=[0], rc_double_seeds=[], rc_control="",
                                     rc_papers_ffn="", rc_candidate_cells=[[4, 8]], rc_candidate_seeds=[0, 1])
    seeds = {arm: sorted({r.tags["seed"] for r in recipe_part_runs(p) if r.tags["arm"] == arm})
             for arm in ("term curriculum", "term curriculum, clipped")}
    assert seeds == {"term curriculum": [0], "term curriculum, clipped": [0, 1]}
    full = {("term curriculum", 4, 8): 0.22, ("term curriculum, clipped", 4, 8): 2e-5}
    ratio = {("term curriculum", 4, 8): 1.6, ("term curriculum, clipped", 4, 8): 130.0}
    rows = recipe_table(_results(p, full, ratio), p)
    assert {r["role"]: r["seeds"] for r in rows} == {"recipe": [0], "candidate": [0, 1]}
    assert "(best over seeds 0 and 1, 32000 steps)" in recipe_part(_results(p, full, ratio), p).paragraph()
    with pytest.raises(ValueError, match="rc_candidate_seeds"):
        IntrinsicDimensionParameters(rc_candidate_seeds=[0, -1])


@pytest.mark.parametrize("values, message", [
    ({"rc_recipe": "term curiculum"}, "rc_recipe: unknown recipe 'term curiculum'. Did you mean 'term curriculum'"),
    ({"rc_recipe": ""}, "rc_recipe: unknown recipe ''"),
    ({"rc_control": "oracle"}, "rc_control: unknown recipe 'oracle'"),
    ({"rc_papers_ffn": "GeLU"}, "rc_papers_ffn: unknown recipe 'GeLU'"),
    ({"rc_cells": "2, 8"}, "rc_cells must be a list of \\[D, T\\] pairs"),
    ({"rc_cells": [[3]]}, r"rc_cells\[0\] must be a pair \[D, T\]"),
    ({"rc_cells": [[2, 8], [1, 8]]}, r"rc_cells\[1\]: D must be at least 2"),
    ({"rc_cells": [[2, 0]]}, r"rc_cells\[0\] T"),
    ({"rc_double_seeds": [2]}, "rc_double_seeds: \\[2\\] must be among rc_seeds"),
    ({"rc_steps": 3, "rc_cells": [[4, 8]]}, "rc_steps: 3 steps are too few for a curriculum over 4 terms"),
])
def test_bad_recipe_parameters_name_the_problem(values, message) -> None:
    with pytest.raises(ValueError, match=message):
        IntrinsicDimensionParameters(**values)


def test_the_clipped_curriculum_changes_only_the_gradient_clip() -> None:
    """``term curriculum, clipped`` (CLIPPED_PREDICTION) is the term curriculum with each model's gradient norm clipped
    at 1: same models, stages and settings otherwise; no other recipe clips (their run keys are unchanged)."""
    settings = IntrinsicDimensionParameters().settings()
    plain, clipped = (recipe_runs(settings, name, 4, 8, 32000, [0], {}) for name in ("term curriculum",
                                                                                       "term curriculum, clipped"))
    assert [r.config.grad_clip for r in clipped] == [1.0] * 3
    assert [replace(r.config, grad_clip=None) for r in clipped] == [r.config for r in plain]
    assert all(r.config.grad_clip is None for name in RECIPES if name != "term curriculum, clipped"
               for r in recipe_runs(settings, name, 2, 8, 1000, [0], {}))


def test_an_unknown_recipe_is_refused_by_the_run_builder() -> None:
    with pytest.raises(ValueError, match="unknown recipe 'gated'. Did you mean 'gated FFN'"):
        recipe_runs({}, "gated", 2, 8, 100, [0], {})
    assert head_configs(3) == [(3, 3), (2, 3), (3, 2)] and set(RECIPES) >= {"term curriculum", "oracle attention"}


def _results(p: IntrinsicDimensionParameters, full: dict[tuple, float], ratio: dict[tuple, float],
             doubled_change: float | None = None, late: float | None = None) -> list[RunResult]:
    """The part's runs with best NMSE ``full[arm, D, T]`` for (D, D) and ``ratio[arm, D, T]`` times it for a missing
    head (a cell not in ``full``: not trained); the doubled runs ``doubled_change`` times lower; with ``late``, every
    history is 5 at step 500, ``late`` at step 1 000 and the best NMSE at step 2 000."""
    out = []
    for run in recipe_part_runs(p):
        t = run.tags
        cell = (t["arm"], t["D"], t["T"])
        if cell not in full:
            continue
        v = full[cell] * (1 if t["h1"] == t["h2"] == t["D"] else ratio[cell])
        if t["part"] == DOUBLE_PART:
            v /= doubled_change
        history = ({"step": [1, 2], "val_nmse": [2 * v, v]} if late is None else
                   {"step": [500, 1000, 2000], "val_nmse": [5.0, late, v]})
        out.append(RunResult(t, run_record(v, history=history)))
    return out


def test_the_table_judges_each_cell_on_the_ratio_bar_and_the_full_head_bar() -> None:
    p = IntrinsicDimensionParameters(rc_cells=[[2, 8], [4, 8], [5, 8]], rc_seeds=[0], rc_double_seeds=[])
    full = {("term curriculum", 2, 8): 1e-4, ("term curriculum", 4, 8): 5e-3, ("term curriculum", 5, 8): 1e-4,
            ("oracle attention", 2, 8): 1e-5, ("oracle attention", 4, 8): 1e-4, ("oracle attention", 5, 8): 1e-4}
    ratio = {**{k: 20.0 for k in full}, ("oracle attention", 4, 8): 2.0}
    rows = recipe_table(_results(p, full, ratio), p)
    got = {(r["role"], r["D"]): (r["ratio"], r["bar"], r["met"]) for r in rows}
    assert got[("recipe", 2)] == (pytest.approx(20.0), 10.0, True)
    assert got[("recipe", 4)] == (pytest.approx(20.0), 3.0, False)  # ratio met, but (D,D) above RECIPE_MAX_FULL
    assert got[("control", 4)] == (pytest.approx(2.0), 3.0, False)  # (D,D) fine, ratio below the bar
    assert got[("recipe", 5)][1:] == (None, None)  # no bar at D = 5
    paper = INTRINSIC_DIMENSION_NMSE[2]
    assert rows[0]["paper_ratio"] == pytest.approx(min(paper["(D-1,D)"], paper["(D,D-1)"]) / paper["(D,D)"])
    assert 5e-3 > RECIPE_MAX_FULL > 1e-4


@pytest.mark.parametrize("ratio_16, change, expected", [
    (40.0, 2.0, {"recipe_meets_bars": True, "control_meets_bars": True, "ratio_grows_with_T": True,
                 "full_still_learning": True}),
    (15.0, 1.2, {"recipe_meets_bars": True, "control_meets_bars": True, "ratio_grows_with_T": False,
                 "full_still_learning": False}),
])
def test_the_prediction_is_judged_statement_by_statement(ratio_16, change, expected) -> None:
    p = IntrinsicDimensionParameters(rc_cells=[[2, 8], [3, 8], [2, 16]], rc_seeds=[0], rc_double_seeds=[0])
    cells = [(a, D, T) for a in ("term curriculum", "oracle attention") for D, T in p.rc_cells]
    full = {c: 1e-4 for c in cells}
    ratio = {**{c: 20.0 for c in cells}, ("term curriculum", 2, 16): ratio_16}
    results = _results(p, full, ratio, change)
    check = recipe_prediction_check(recipe_table(results, p), doubling_check(results, ("arm", "D", "T", "h1", "h2")))
    assert tuple(check) == RECIPE_STATEMENTS and check == expected


def test_a_statement_without_its_runs_is_not_judged() -> None:
    p = IntrinsicDimensionParameters(rc_control="", **ONE_CELL)
    results = _results(p, {("term curriculum", 3, 8): 1e-4}, {("term curriculum", 3, 8): 30.0})
    check = recipe_prediction_check(recipe_table(results, p), doubling_check(results, ("arm", "D", "T", "h1", "h2")))
    assert check == {"recipe_meets_bars": True, "control_meets_bars": None, "ratio_grows_with_T": None,
                     "full_still_learning": None}


def test_the_claims_and_the_reading_say_what_the_part_shows() -> None:
    """The control meets the bars and the recipe misses one cell: the control's claim is reproduced qualitatively, the
    recipe's not observed (with the gated FFN named as a departure), and the reading says which statement failed."""
    p = IntrinsicDimensionParameters(rc_cells=[[2, 8], [3, 8]], rc_seeds=[0], rc_double_seeds=[0])
    cells = [(a, D, 8) for a in ("term curriculum", "term curriculum, GeLU FFN", "oracle attention") for D in (2, 3)]
    ratio = {**{c: 20.0 for c in cells}, ("term curriculum", 3, 8): 4.0, ("term curriculum, GeLU FFN", 2, 8): 2.5}
    part = recipe_part(_results(p, {c: 1e-4 for c in cells}, ratio, 3.0), p)
    control, recipe = part.claims()
    assert control.verdict == "reproduced qualitatively" and control.ours.startswith("20 / 20 at [D, T] = [2, 8] / [3, 8]")
    assert recipe.verdict == "not observed" and "gated FFN is a labelled departure" in recipe.reason
    assert "(with the GeLU FFN, term curriculum, GeLU FFN: ratio 2.5 / 20, (D,D) NMSE" in recipe.reason
    assert "doubling the budget changed 6 of 6 of its cells" in recipe.reason
    assert part.observed is False and part.recorded()["recipe_prediction_observed"] is False
    text = part.paragraph()
    assert "the term curriculum recipe meets the bars at only 1 of 2 cells" in text
    assert "With the papers' GeLU FFN, the same recipe (term curriculum, GeLU FFN) meets the bars at only 1 of 2" in text
    assert "the recipe meets the bars: failed" in text and "the control meets them: held" in text
    assert "not judged here: the ratio at $D = 2$ grows with $T$" in text and "It is not observed" in text


@pytest.mark.parametrize("late, held", [(0.5, True), (3.0, False)])
def test_the_candidates_prediction_is_judged_at_d4_against_the_recipe(late, held) -> None:
    """CLIPPED_PREDICTION: the clipped curriculum meets the D = 4 bar, the unclipped one misses it, and the clipped
    (D, D) model's validation NMSE stays at most 1 from step 1 000 on (a spike of 3 fails it)."""
    p = IntrinsicDimensionParameters(rc_cells=[[4, 8]], rc_seeds=[0], rc_double_seeds=[], rc_control="",
                                     rc_papers_ffn="")
    full = {("term curriculum", 4, 8): 0.22, ("term curriculum, clipped", 4, 8): 2e-5}
    ratio = {("term curriculum", 4, 8): 1.6, ("term curriculum, clipped", 4, 8): 130.0}
    part = recipe_part(_results(p, full, ratio, late=late), p)
    assert part.clipped == {"candidate_meets_bar": True, "recipe_misses_bar": True, "no_spike": held, "held": held,
                            "largest_late_nmse": pytest.approx(late)}
    claim = part.claims()[-1]
    assert claim.verdict == ("reproduced" if held else "not observed") and "ratio 130, (D,D) NMSE 2e-05" in claim.ours
    assert f"The candidate's prediction** (`CLIPPED_PREDICTION`, committed before its runs) is " \
           f"{'observed' if held else 'not observed'}" in part.paragraph()
    other = IntrinsicDimensionParameters(**{**{k: getattr(p, k) for k in ("rc_cells", "rc_seeds", "rc_double_seeds",
                                                                         "rc_control", "rc_papers_ffn")},
                                          "rc_candidate": "gated FFN"})
    unjudged = recipe_part(_results(other, {**full, ("gated FFN", 4, 8): 2e-5}, {**ratio, ("gated FFN", 4, 8): 9.0},
                                    late=late), other)
    assert unjudged.clipped["held"] is None and all(c.source != "this book's own" for c in unjudged.claims())


ANSWERS = {True: "observed", False: "not observed", None: "not yet judged"}


@pytest.mark.parametrize("d3_ratio, trained, expected", [(20.0, (2, 3, 4), True), (4.0, (2, 3, 4), False),
                                                         (20.0, (3, 4), None)])
def test_the_candidates_prediction_at_every_d_needs_every_cell(d3_ratio, trained, expected) -> None:
    """CLIPPED_EVERY_D_PREDICTION: the clipped curriculum meets the bars at D = 2, 3 and 4 (T = 8); a miss at one D
    fails it, a D not trained leaves it unjudged; the candidate's claim covers its cells."""
    p = IntrinsicDimensionParameters(rc_cells=[[4, 8]], rc_seeds=[0], rc_double_seeds=[], rc_control="",
                                     rc_papers_ffn="", rc_candidate_cells=[[D, 8] for D in trained])
    full = {("term curriculum", 4, 8): 0.22, **{("term curriculum, clipped", D, 8): 2e-5 for D in trained}}
    ratio = {("term curriculum", 4, 8): 1.6, **{("term curriculum, clipped", D, 8): 130.0 for D in trained},
             ("term curriculum, clipped", 3, 8): d3_ratio}
    part = recipe_part(_results(p, full, ratio, late=0.5), p)
    assert part.clipped_every_d is expected and part.recorded()["clipped_every_d_prediction"] is expected
    candidate = next(c for c in part.claims() if "candidate recipe" in c.statement)
    assert candidate.verdict == ("reproduced qualitatively" if d3_ratio >= 10 else "not observed")
    assert f"at every D (CLIPPED_EVERY_D_PREDICTION) is {ANSWERS[expected]}" in candidate.reason
    assert ("Its prediction at every $D$" in part.paragraph()) is (expected is not None)



def test_the_candidate_has_its_own_doubling_check() -> None:
    """The candidate's seed-0 runs are doubled beside the recipe's, and judged apart: its claim and its reading give its
    own check (here every candidate cell changed 3x: still learning), the recipe's claim only the recipe's."""
    p = IntrinsicDimensionParameters(rc_cells=[[4, 8]], rc_seeds=[0], rc_double_seeds=[0], rc_control="",
                                     rc_papers_ffn="", rc_candidate_cells=[[4, 8]], rc_candidate_seeds=[0])
    twice = [r for r in recipe_part_runs(p) if r.tags["part"] == DOUBLE_PART]
    assert sorted({r.tags["arm"] for r in twice}) == ["term curriculum", "term curriculum, clipped"] and len(twice) == 6
    full = {("term curriculum", 4, 8): 0.22, ("term curriculum, clipped", 4, 8): 2e-5}
    ratio = {("term curriculum", 4, 8): 1.6, ("term curriculum, clipped", 4, 8): 130.0}
    part = recipe_part(_results(p, full, ratio, 3.0), p)
    assert [c.tags["arm"] for c in part.candidate_doubling.cells] == ["term curriculum, clipped"] * 3
    assert [c.tags["arm"] for c in part.doubling.cells] == ["term curriculum"] * 3
    candidate = next(c for c in part.claims() if "candidate recipe" in c.statement)
    assert "doubling the budget changed 3 of 3 of its cells" in candidate.reason
    assert "the candidate's runs of seed 0 were trained again with twice the steps" in part.paragraph().lower()
