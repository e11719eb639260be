"""The ablation of chapter 10's recipe: its arms, runs, parameter checks and table."""

from __future__ import annotations

from dataclasses import replace

import pytest

from conftest import run_record
from transformer_theory.chapters import ablation as ab
from transformer_theory.chapters.ablation_analysis import analyse, control_claims, reading_controls, verdicts
from transformer_theory.chapters.experiment import RunResult
from transformer_theory.chapters.registry import experiment
from transformer_theory.chapters.intrinsic_dimension import DEFAULTS as CHAPTER_10, sequence_length_runs
from transformer_theory.training import default_store

#: The run store the claims read weights from: the book profile's (committed runs first).
BOOK_STORE = default_store("book")


def test_each_arm_changes_only_its_settings() -> None:
    runs = ab.ablation_runs(ab.AblationParameters(arms=["baseline", "wide FFN", "lower lr"], steps=50, double_arms=[],
                                                  controls=[]))
    assert len(runs) == 3 * 3 * 2 and len({r.config.key for r in runs}) == len(runs)
    by_arm = {arm: [r.config for r in runs if r.tags["arm"] == arm] for arm in ("baseline", "wide FFN", "lower lr")}
    for base, wide, low in zip(*by_arm.values()):
        assert wide.model.ffn_width == 4 * base.model.ffn_width == 128 * 2
        assert (wide.lr, wide.steps, wide.seed) == (base.lr, base.steps, base.seed)
        assert low.lr == 1e-3 and low.model == base.model
        assert base.steps == 50 and base.train_size is None and base.seq_len == 8


def test_the_baseline_is_chapter_10s_recipe() -> None:
    """The baseline arm at chapter 10's budget is the sequence-length part's T = 8 runs: trained once."""
    baseline = {r.config.key for r in ab.ablation_runs(ab.AblationParameters(arms=["baseline"], double_arms=[], controls=[]))}
    chapter_10 = {r.config.key for r in sequence_length_runs(dict(CHAPTER_10)) if r.tags["T"] == 8}
    assert baseline == chapter_10


@pytest.mark.parametrize("values, message", [
    ({"arms": []}, "arms must be a non-empty list"),
    ({"arms": ["wider"]}, "unknown arm 'wider'"),
    ({"seeds": []}, "seeds must be a non-empty list of seeds"),
    ({"D": 1}, "D must be at least 2"),
    ({"steps": 0}, "steps"),
    ({"arms": ["wide FFN"]}, "double_arms: 'baseline' is not one of the arms"),
    ({"double_arms": "baseline"}, "double_arms must be a list"),
    ({"double_seeds": [2]}, r"double_seeds: \[2\] must be among the seeds \[0, 1\]"),
    ({"double_seeds": []}, "double_seeds must be a non-empty list"),
])
def test_bad_parameters_are_refused(values, message) -> None:
    with pytest.raises(ValueError, match=message):
        experiment("14_mechanism_ablation").runs(values)


def _result(arm: str, h1: int, h2: int, seed: int, nmse: float, part: str = "ablation", D: int = 2,
            half_gain: float = 1.0) -> RunResult:
    """A run whose best NMSE is ``nmse``, reached at the end of a 200-step schedule, ``half_gain`` times lower than at
    step 100."""
    history = {"step": [100, 200], "val_nmse": [nmse * half_gain, nmse]}
    record = run_record(nmse, best_step=200, final_nmse=nmse, history=history, config={"steps": 200})
    return RunResult({"part": part, "arm": arm, "D": D, "h1": h1, "h2": h2, "T": 8, "seed": seed}, record)


def test_the_table_judges_each_arm_against_the_baseline() -> None:
    p = ab.AblationParameters(arms=["baseline", "wide FFN", "lower lr"])
    results = []
    for arm, full, missing in (("baseline", 1e-3, 5e-3), ("wide FFN", 1e-4, 5e-3), ("lower lr", 2e-3, 2e-2)):
        for seed in (0, 1):
            results += [_result(arm, 2, 2, seed, full * (1 + seed)), _result(arm, 1, 2, seed, missing),
                        _result(arm, 2, 1, seed, 2 * missing)]
    rows = {r["arm"]: r for r in ab.ablation_table(results, p)}
    assert rows["baseline"]["ratio"] == pytest.approx(5) and rows["baseline"]["helps"] is None
    assert rows["wide FFN"]["gain"] == pytest.approx(10) and rows["wide FFN"]["helps"] is True
    # a higher ratio with a worse (D, D) model does not count as help
    assert rows["lower lr"]["gain"] == pytest.approx(2) and rows["lower lr"]["helps"] is False
    assert rows["wide FFN"]["setting"] == "ffn_width_per_D = 128" and rows["baseline"]["setting"] == "chapter 10"
    assert all(r["retrieved_terms"] is None for r in rows.values())
    alone = ab.ablation_table([r for r in results if r.tags["arm"] == "wide FFN"],
                             ab.AblationParameters(arms=["wide FFN"], double_arms=[]))
    assert alone[0]["gain"] is None and alone[0]["helps"] is None


def test_the_budget_check_doubles_the_chosen_arms_at_the_chosen_seeds() -> None:
    p = ab.AblationParameters(arms=["baseline", "wide FFN", "lower lr"], steps=50, seeds=[3, 4], double_seeds=[3])
    double = [r for r in ab.ablation_runs(p) if r.tags["part"] == "double_budget"]
    assert sorted({r.tags["arm"] for r in double}) == ["baseline", "wide FFN"] and len(double) == 2 * 3
    assert {(r.config.steps, r.config.seed) for r in double} == {(100, 3)}
    once = {r.config.key for r in ab.ablation_runs(p) if r.tags["part"] == "ablation"}
    assert once.isdisjoint(r.config.key for r in double)
    assert ab.doubled(p).steps == 100 and ab.doubled(p).seeds == (3,) and ab.doubled(p).arms == ("baseline", "wide FFN")


def test_the_budget_check_table_compares_a_cell_with_itself_at_twice_the_budget() -> None:
    p = ab.AblationParameters(arms=["baseline", "wide FFN"])
    results = [_result("wide FFN", 2, 2, 0, 3e-3), _result("wide FFN", 2, 2, 1, 1e-3),
               _result("wide FFN", 2, 2, 0, 1e-3, "double_budget"), _result("wide FFN", 1, 2, 0, 1e-2),
               _result("wide FFN", 1, 2, 0, 8e-3, "double_budget"), _result("baseline", 2, 1, 0, 4e-3, "double_budget")]
    rows = {(r["arm"], r["config"]): r for r in ab.budget_check_table(results, p)}
    assert rows["wide FFN", "(D,D)"]["change"] == pytest.approx(3) and rows["wide FFN", "(D,D)"]["sufficient"] is False
    assert rows["wide FFN", "(D-1,D)"]["change"] == pytest.approx(1.25) and rows["wide FFN", "(D-1,D)"]["sufficient"]
    assert rows["baseline", "(D,D-1)"]["nmse"] is None and rows["baseline", "(D,D-1)"]["sufficient"] is None
    # the doubled runs are their own ablation: the table of their part does not mix the two budgets
    doubled = ab.ablation_table(results, ab.doubled(p), part="double_budget")
    assert [r["nmse_full"] for r in doubled] == [None, pytest.approx(1e-3)]
    # a table takes the seeds of its parameters only
    other_seed = [RunResult({**r.tags, "seed": 5}, run_record(1e-6)) for r in results[:1]]
    assert ab.ablation_table(results + other_seed, p)[1]["nmse_full"] == pytest.approx(1e-3)


def test_the_curves_are_the_full_head_models_of_the_chosen_arms() -> None:
    p = ab.AblationParameters(arms=["wide FFN"], double_arms=[])
    history = run_record(history={"step": [100, 200], "val_nmse": [0.5, 0.1]}).history
    results = [RunResult(r.tags, replace(r.record, history=history)) for arm in ("baseline", "wide FFN")
               for r in (_result(arm, 2, 2, 0, 0.1), _result(arm, 1, 2, 0, 0.2))]
    curves = ab.ablation_curves(results, p)
    assert curves == [{"label": "seed 0", "group": "wide FFN", "steps": [100, 200], "nmse": [0.5, 0.1]}]


def _row(arm: str, ratio: float, helps: bool | None) -> dict:
    return {"arm": arm, "ratio": ratio, "helps": helps}


def test_the_prediction_is_judged_statement_by_statement() -> None:
    rows = [_row("baseline", 5, None), _row("wide FFN", 40, True), _row("lower lr", 3, False),
            _row("large batch", 4, False), _row("wide heads", 6, False)]
    assert ab.prediction_check(rows) == {"wide_ffn_helps": True, "no_other_arm_helps": True,
                                         "batch_and_lr_lower_the_ratio": True, "held": True}
    rows[4] = _row("wide heads", 20, True)  # a second arm helps
    rows[3] = _row("large batch", 6, False)  # and the large batch raises the ratio
    check = ab.prediction_check(rows)
    assert check["no_other_arm_helps"] is False and check["batch_and_lr_lower_the_ratio"] is False
    assert check["held"] is False
    partial = ab.prediction_check(rows[:2])  # without the large batch and the lower learning rate
    assert partial["batch_and_lr_lower_the_ratio"] is None and partial["held"] is None


def test_the_doubling_prediction_is_judged_statement_by_statement() -> None:
    budget = [{"arm": arm, "config": "(D,D)", "change": change}
              for arm, change in (("baseline", 2.0), ("wide FFN", 3.5))]
    doubled = [{"arm": "baseline", "helps": None}, {"arm": "wide FFN", "helps": True}]
    assert ab.doubling_check(budget, doubled) == {"both_still_learning": True, "wide_ffn_helps_doubled": True,
                                                  "held": True}
    budget[0]["change"] = 1.2  # the baseline had settled
    assert ab.doubling_check(budget, doubled)["held"] is False
    assert ab.doubling_check(budget[:1], doubled[:1]) == {"both_still_learning": None, "wide_ffn_helps_doubled": None,
                                                          "held": None}


def test_the_claims_are_the_two_predictions_statements() -> None:
    """The claims: :func:`prediction_check` and :func:`doubling_check` on the chapter's tables, a statement without a
    verdict left out (here the arms the prediction's third statement needs are not trained)."""
    values = {"arms": ["baseline", "wide FFN"], "double_arms": ["baseline", "wide FFN"], "seeds": [0],
              "double_seeds": [0]}
    results = []
    for arm, full, doubled_full in (("baseline", 1e-3, 5e-4), ("wide FFN", 1e-4, 2e-5)):
        for part, value in (("ablation", full), ("double_budget", doubled_full)):
            results += [_result(arm, 2, 2, 0, value, part), _result(arm, 1, 2, 0, 5e-3, part),
                        _result(arm, 2, 1, 0, 1e-2, part)]
    claims = experiment("14_mechanism_ablation").claims(results, values, BOOK_STORE)
    assert claims == {"wide_ffn_helps": True, "no_other_arm_helps": True, "both_still_learning": True,
                      "wide_ffn_helps_doubled": True, "doubling_prediction_held": True}
    tables = experiment("14_mechanism_ablation").tables(results, values)
    assert set(tables) == {"ablation_table", "budget_check", "doubled_table"} and len(tables["budget_check"]) == 6


def test_the_controls_claims_say_what_the_family_represents_and_what_training_finds() -> None:
    """Issue 33: at each D, oracle attention (layer 1 set at the mechanism) answers whether the family represents the
    mechanism, the best control from a random start whether training finds it; each claim meets CONTROL_BAR or not,
    and the reading names the best from-scratch control."""
    values = {"arms": ["baseline"], "double_arms": [], "seeds": [0], "double_seeds": [0],
              "controls": ["random start", "oracle attention", "gated FFN"], "control_Ds": [3], "control_seeds": [0]}
    p = ab.AblationParameters(**experiment("14_mechanism_ablation").parameters(values))
    results = [_result("baseline", h1, h2, 0, v) for (h1, h2), v in {(2, 2): 1e-3, (1, 2): 5e-3, (2, 1): 1e-2}.items()]
    controls = {"random start": (5e-3, 1e-2), "oracle attention": (2e-5, 3e-3), "gated FFN": (8e-4, 2e-2)}
    for arm, (full, missing) in controls.items():
        results += [_result(arm, h1, h2, 0, v, part="control", D=3)
                    for (h1, h2), v in {(3, 3): full, (2, 3): missing, (3, 2): 2 * missing}.items()]
    a = analyse(results, p)
    represents, finds = control_claims(a)
    assert represents.verdict == "reproduced qualitatively" and "oracle attention" in represents.ours
    assert finds.verdict == "reproduced qualitatively" and "gated FFN" in finds.ours and "departure" in finds.reason
    assert control_claims(a)[1] in verdicts(a) and "The best from-scratch control, gated FFN, **meets the bar**" \
        in reading_controls(a)
    slow = analyse([r for r in results if r.tags["arm"] != "gated FFN"], replace(p, controls=("random start",
                                                                                                 "oracle attention")))
    assert control_claims(slow)[1].verdict == "not observed" and "random start" in control_claims(slow)[1].ours


@pytest.mark.parametrize("gelu, held", [((1e-4, 5e-3), True), ((4e-3, 5e-3), False)])
def test_the_gelu_curriculum_prediction_is_judged_and_claimed(gelu, held) -> None:
    """GELU_CURRICULUM_PREDICTION: the GeLU term curriculum helps against random start at every D and meets the bar at
    D = 3; judged only where both controls are trained, claimed once judged."""
    values = {"arms": ["baseline"], "double_arms": [], "seeds": [0], "double_seeds": [0],
              "controls": ["random start", "term curriculum, GeLU FFN"], "control_Ds": [2, 3], "control_seeds": [0]}
    p = ab.AblationParameters(**experiment("14_mechanism_ablation").parameters(values))
    results = [_result("baseline", h1, h2, 0, v) for (h1, h2), v in {(2, 2): 1e-3, (1, 2): 5e-3, (2, 1): 1e-2}.items()]
    for D in (2, 3):
        for arm, (full, missing) in {"random start": (5e-3, 1e-2), "term curriculum, GeLU FFN": gelu}.items():
            heads = {(D, D): full, (D - 1, D): missing, (D, D - 1): 2 * missing}
            results += [_result(arm, h1, h2, 0, v, part="control", D=D) for (h1, h2), v in heads.items()]
    a = analyse(results, p)
    assert a.gelu_curriculum == {"helps": held, "meets_bar_at_3": held, "held": held}
    claim = next(c for c in verdicts(a) if "GeLU FFN" in c.statement)
    assert claim.verdict == ("reproduced" if held else "not observed") and "D = 2" in claim.ours
    alone = analyse([r for r in results if r.tags["arm"] != "random start"],
                    replace(p, controls=("term curriculum, GeLU FFN",)))
    assert alone.gelu_curriculum["helps"] is None and alone.gelu_curriculum["held"] is None
    assert not any("GeLU FFN" in c.statement for c in verdicts(alone))
