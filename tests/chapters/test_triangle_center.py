"""Chapter 11's experiment (the triangle center, InfoFlow §4.2): its run list, its table beside the paper's
values, the comparison count against the models' capacity, and the criteria."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import pytest  # noqa: E402

from dataclasses import replace  # noqa: E402

from conftest import ROOT, run_record  # noqa: E402
from transformer_theory.infoflow.reference import TRIANGLE_CENTER_NMSE  # noqa: E402
from transformer_theory.models import Transformer  # noqa: E402
from transformer_theory.pipeline.notebooks import notebook_parameters  # noqa: E402
from transformer_theory.plotting.triangle_center import configuration_label, plot_triangle_center  # noqa: E402
from transformer_theory.chapters import experiment  # noqa: E402
from transformer_theory.chapters.experiment import RunResult  # noqa: E402
from transformer_theory.training import plan_tasks  # noqa: E402
from transformer_theory.chapters.triangle_center import (DEFAULTS, EXPERIMENT, LEARNED_MAX_NMSE,  # noqa: E402
                                                         NEAR_ONE_MIN_NMSE, TriangleCenterParameters, budget_table,
                                                         calculator_predictions, comparison_growth,
                                                         equal_budget_observed, judge, model, nmse_table)
from transformer_theory.chapters.triangle_center_analysis import (analyse, reading_paragraphs, recorded,  # noqa: E402
                                                                  verdicts)
from transformer_theory.training import default_store  # noqa: E402

#: The run store the claims read weights from: the book profile's (committed runs first).
BOOK_STORE = default_store("book")

NOTEBOOK = ROOT / "notebooks" / "11_triangle_center.ipynb"


def test_registry_and_notebook_hold_the_module_experiment() -> None:
    assert experiment("11_triangle_center") is EXPERIMENT
    assert notebook_parameters(NOTEBOOK) == DEFAULTS


def test_run_list() -> None:
    runs = EXPERIMENT.runs()
    assert {(r.tags["h1"], r.tags["h2"], r.tags["E"]) for r in runs} == {(2, 2, 24), (4, 4, 24), (4, 4, 48)}
    assert sorted({r.tags["T"] for r in runs}) == [8, 16, 32, 64] and len(runs) == 24
    assert sorted({r.tags["steps"] for r in runs}) == [500, 6000]  # one budget at every T, and the budget check
    for r in runs:
        m, c = r.config.model, r.config
        assert c.target == "triangle_center" and c.target_args == {"squared": False} and m.d == 2
        assert m.heads == (r.tags["h1"], r.tags["h2"]) and m.width == r.tags["E"]
        assert m.head_dim * r.tags["h1"] == r.tags["E"] and m.max_len is None and m.cls_only_last
        main = r.tags["steps"] == DEFAULTS["steps"]
        assert c.steps == r.tags["steps"] and (main or c.steps == DEFAULTS["reference_steps"][0])
        assert c.train_size == (DEFAULTS["train_size"] if main else DEFAULTS["reference_train_size"])
    assert len(plan_tasks([r.config for r in runs])) == 24  # three architectures at four lengths, two budgets
    assert len(EXPERIMENT.runs({"reference_steps": []})) == 12  # no budget check
    with pytest.raises(ValueError, match="multiple of h1"):
        model(4, 4, 30, DEFAULTS)
    with pytest.raises(ValueError, match="unknown parameter"):
        EXPERIMENT.runs({"seq_len": 8})


@pytest.mark.parametrize("change, message", [
    ({"seq_lens": []}, "seq_lens must be a non-empty list"),
    ({"seeds": []}, "seeds must be a non-empty list"),
    ({"configs": []}, "configs must be a non-empty list"),
    ({"configs": [[2, 2]]}, r"configs must hold \[h1, h2, E\] triples"),
    ({"configs": [[2, 2, 24], [4, "4", 24]]}, r"configs\[1\]\[1\]"),
    ({"configs": [[4, 4, 30]]}, "configs: E = 30 is not a multiple of h1 = 4"),
    ({"seq_lens": [8, 16.0]}, r"seq_lens\[1\]"),
    ({"seeds": ["0"]}, r"seeds\[0\]"),
    ({"reference_steps": [0]}, r"reference_steps\[0\] must be a positive integer"),
    ({"reference_steps": 500}, "reference_steps must be a list"),
    ({"reference_steps": [6000]}, "reference_steps must differ from steps = 6000"),
    ({"reference_train_size": -1}, "reference_train_size must be a positive integer"),
    ({"train_size": 0}, "train_size must be a positive integer"),
    ({"val_size": 0}, "val_size must be a positive integer"),
    ({"squared": 1}, "squared must be True or False"),
])
def test_bad_parameters_are_refused_naming_the_parameter(change, message) -> None:
    with pytest.raises(ValueError, match=message):
        EXPERIMENT.runs(change)


def test_the_parameters_are_checked_once_on_construction() -> None:
    with pytest.raises(ValueError, match="configs"):
        TriangleCenterParameters(configs=[[2, 2, 24, 1]])
    p = TriangleCenterParameters(**DEFAULTS)
    assert p.configs == ((2, 2, 24), (4, 4, 24), (4, 4, 48)) and p.seq_lens == (8, 16, 32, 64)
    assert DEFAULTS["configs"] == [[2, 2, 24], [4, 4, 24], [4, 4, 48]] and DEFAULTS["train_size"] == 50_000


def _results(nmse: dict[tuple, list], steps: int = DEFAULTS["steps"], half_gain: float = 1.2) -> list[RunResult]:
    """Fake records: ``nmse[(h1, h2, E, T)]`` each seed's best NMSE, reached at the end of a schedule of ``steps``
    whose first half got to ``half_gain`` times it."""
    out = []
    for (h1, h2, E, T), values in nmse.items():
        for seed, v in enumerate(values):
            history = {"step": [steps // 2, steps], "val_nmse": [None if v is None else v * half_gain, v]}
            out.append(RunResult({"h1": h1, "h2": h2, "E": E, "T": T, "steps": steps, "seed": seed},
                                 run_record(v, best_step=steps, final_nmse=v, config={"steps": steps},
                                            history=history)))
    return out


def test_nmse_table_beside_the_paper() -> None:
    results = _results({(2, 2, 24, 8): [0.2, 0.15], (2, 2, 24, 64): [0.99, None], (4, 4, 48, 12): [0.5]})
    rows = nmse_table(results)
    assert [(r["h1"], r["E"], r["T"], r["nmse"]) for r in rows] == [(2, 24, 8, 0.15), (2, 24, 64, 0.99),
                                                                     (4, 48, 12, 0.5)]
    assert rows[0]["half_gain"] == pytest.approx(1.2) and rows[1]["half_gain"] == pytest.approx(1.2)
    assert rows[0]["paper_nmse"] == TRIANGLE_CENTER_NMSE[8]["(2,2),E=24"] == 0.086
    assert rows[1]["paper_nmse"] == 0.985 and rows[2]["paper_nmse"] is None  # T = 12 is not in the paper's table
    assert rows[0]["parameters"] == Transformer(model(2, 2, 24, DEFAULTS)).num_parameters()
    assert rows[2]["parameters"] > rows[0]["parameters"]


def test_predictions() -> None:
    rows = calculator_predictions({"seq_lens": [8, 64], "configs": [[2, 2, 24], [4, 4, 48]]})
    assert [(r["h1"], r["E"], r["T"]) for r in rows] == [(2, 24, 8), (2, 24, 64), (4, 48, 8), (4, 48, 64)]
    assert not any(r["predicted_efficient"] for r in rows)  # order-3 comparisons: no fixed model suffices
    assert rows[0]["parameters"] == Transformer(model(2, 2, 24, DEFAULTS)).num_parameters()
    assert rows[1]["predicted_exponent"] > rows[0]["predicted_exponent"]  # T d > E: the exponent grows with T


def test_comparison_number_grows_as_t_cubed_past_the_capacity() -> None:
    growth = comparison_growth([8, 16, 32, 64], [[2, 2, 24], [4, 4, 48]])
    for g in growth:
        T = g["T"]
        assert g["comparison_number"] == T ** 3 + T ** 2 + T and g["triples"] == T ** 3
        assert g["capacity (2,2),E=24"] == 4 * (T + 1) ** 2 and g["capacity (4,4),E=48"] == 8 * (T + 1) ** 2
        assert g["ratio (4,4),E=48"] == g["comparison_number"] / g["capacity (4,4),E=48"]
    ratios = [g["ratio (2,2),E=24"] for g in growth]
    assert all(b / a > 1.8 for a, b in zip(ratios, ratios[1:]))  # ~T^3 / T^2: doubling T about doubles the ratio


def test_criteria() -> None:
    rows = nmse_table(_results({(2, 2, 24, 8): [0.2], (2, 2, 24, 64): [0.98], (4, 4, 48, 8): [0.25],
                                (4, 4, 48, 16): [0.8], (4, 4, 48, 64): [0.9]}))
    judged = judge(rows)
    assert judged["shortest_T"] == 8 and judged["largest_T"] == 64 and judged["observed"]
    assert judged["configs"]["(4,4),E=48"] == {"learned": True, "near_one": True}
    bad = judge(nmse_table(_results({(2, 2, 24, 8): [LEARNED_MAX_NMSE + 0.01], (2, 2, 24, 64): [0.98],
                                     (4, 4, 48, 8): [0.1], (4, 4, 48, 64): [NEAR_ONE_MIN_NMSE - 0.01]})))
    assert bad["configs"] == {"(2,2),E=24": {"learned": False, "near_one": True},
                              "(4,4),E=48": {"learned": True, "near_one": False}} and not bad["observed"]
    with pytest.raises(ValueError, match="no finite NMSE at T = 64"):
        judge(nmse_table(_results({(2, 2, 24, 8): [0.1], (2, 2, 24, 64): [None], (4, 4, 48, 64): [0.9]})))
    with pytest.raises(ValueError, match="two sequence lengths"):
        judge(nmse_table(_results({(2, 2, 24, 8): [0.1]})))


def test_the_claims_are_the_criteria() -> None:
    values = {"seq_lens": [8, 64], "configs": [[2, 2, 24], [4, 4, 48]]}
    results = _results({(2, 2, 24, 8): [LEARNED_MAX_NMSE + 0.01], (2, 2, 24, 64): [0.98], (4, 4, 48, 8): [0.1],
                        (4, 4, 48, 64): [0.9]})
    assert EXPERIMENT.claims(results, values, BOOK_STORE) == {"observed": False, "learned_2_2_e_24": False,
                                                  "near_one_2_2_e_24": True, "learned_4_4_e_48": True,
                                                  "near_one_4_4_e_48": True}
    assert set(EXPERIMENT.tables(results, values)) == {"nmse_table", "budget_check", "comparison_growth"}
    assert EXPERIMENT.predictions(values)["predictions"] == calculator_predictions(values)


def test_figure() -> None:
    rows = nmse_table(_results({(c[0], c[1], c[2], T): [0.1 * T / 8] for c in ([2, 2, 24], [4, 4, 48])
                                for T in (8, 16)}))
    fig = plot_triangle_center(rows, comparison_growth([8, 16], [[2, 2, 24], [4, 4, 48]]))
    left, right = fig.axes
    labels = [line.get_label() for line in left.get_lines()]
    assert labels[:4] == [f"{configuration_label(2, 2, 24)} (ours)", f"{configuration_label(2, 2, 24)} (paper)",
                          f"{configuration_label(4, 4, 48)} (ours)", f"{configuration_label(4, 4, 48)} (paper)"]
    assert list(left.get_lines()[0].get_ydata()) == pytest.approx([0.1, 0.2])
    assert list(left.get_lines()[1].get_ydata()) == [0.086, 0.843]  # the paper's values at T = 8, 16
    assert [line.get_label() for line in right.get_lines()] == [
        "comparison number", "$T^3$", "attention comparisons (2,2),E=24", "attention comparisons (4,4),E=48"]
    assert right.get_yscale() == "log" and list(right.get_lines()[2].get_ydata()) == [4 * 81, 4 * 289]
    with pytest.raises(ValueError, match="non-empty"):
        plot_triangle_center([], [])


def test_the_table_takes_the_main_budget_and_the_budget_check_compares() -> None:
    main = _results({(2, 2, 24, 16): [0.9], (2, 2, 24, 64): [0.98], (4, 4, 48, 16): [0.5]})
    reference = _results({(2, 2, 24, 16): [0.95], (2, 2, 24, 64): [0.99], (4, 4, 48, 16): [0.9]}, steps=500)
    assert [r["nmse"] for r in nmse_table(reference + main)] == [0.9, 0.98, 0.5]  # the main budget only
    rows = budget_table(reference + main)
    assert [(r["T"], r["reference_steps"], r["reference_nmse"], r["nmse"]) for r in rows] == [
        (16, 500, 0.95, 0.9), (64, 500, 0.99, 0.98), (16, 500, 0.9, 0.5)]
    assert rows[2]["change"] == pytest.approx(1.8) and [r["settled"] for r in rows] == [True, True, False]
    assert budget_table(main) == []  # no budget check in these results


def test_the_equal_budget_prediction_is_judged() -> None:
    rising = {(2, 2, 24, T): [v] for T, v in ((8, 0.15), (16, 0.87), (32, 0.95), (64, 0.98))}
    judged = equal_budget_observed(nmse_table(_results(rising)))
    assert judged == {"configs": {"(2,2),E=24": {"rises": True, "near_one": True, "above_at_second": True}},
                      "observed": True}
    flat = {**rising, (2, 2, 24, 32): [0.99]}  # falls from T = 32 to 64
    assert equal_budget_observed(nmse_table(_results(flat)))["configs"]["(2,2),E=24"]["rises"] is False
    learned = {**rising, (2, 2, 24, 16): [0.2]}
    judged = equal_budget_observed(nmse_table(_results(learned)))
    assert judged["configs"]["(2,2),E=24"]["above_at_second"] is False and not judged["observed"]
    with pytest.raises(ValueError, match="three sequence lengths"):
        equal_budget_observed(nmse_table(_results({(2, 2, 24, 8): [0.1], (2, 2, 24, 16): [0.9]})))


def _analysis(nmse: dict[int, float], reference: dict[int, float] | None = None, seq_lens=(8, 16, 64)):
    """The analysis of fake runs of (2, 2, 24) and (4, 4, 48) at ``seq_lens``: (2, 2, 24)'s NMSE ``nmse[T]``, (4, 4,
    48)'s 0.9 times it; the budget check at 500 steps ``reference[T]`` for both (``None``: no budget check)."""
    configs = ((2, 2, 24), (4, 4, 48))
    cells = {(*c, T): [nmse[T] * (1 if c[2] == 24 else 0.9)] for c in configs for T in seq_lens}
    results = _results(cells) + (_results({k: [reference[k[3]]] for k in cells}, steps=500) if reference else [])
    results = [RunResult(r.tags, replace(r.record, task={**r.record.task, "key": str(i)}, wall_time_s=60.0))
               for i, r in enumerate(results)]
    p = TriangleCenterParameters(**{**DEFAULTS, "seq_lens": list(seq_lens), "configs": [list(c) for c in configs],
                                    "reference_steps": [500] if reference else []})
    return analyse(results, p)


def test_the_analysis_judges_the_claim_as_the_chapter_did() -> None:
    a = _analysis({8: 0.15, 16: 0.88, 64: 0.99}, {8: 0.5, 16: 0.9, 64: 0.99})
    assert a.criteria["observed"] and a.equal_budget["observed"] and a.n_runs == 12
    assert a.reading["lengths"] == [8, 16, 64] and a.reading["change_shortest"][0] == pytest.approx(0.5 / 0.15)
    assert a.by_length[0]["T"] == 8 and a.table[0]["comparison_ratio"] == pytest.approx(584 / 324)
    assert a.target.max_diff < 1e-12 and a.spread[16] == pytest.approx(1 / 0.9)
    [claim] = verdicts(a)
    assert claim.verdict == "reproduced" and claim.ours == "0.15 / 0.88 / 0.99"
    assert claim.paper == "NMSE 0.086 / 0.84 / 0.98 at T = 8 / 16 / 64" and "differ by at most 11.1%" in claim.reason
    assert "every cell had settled" in claim.reason
    reading = reading_paragraphs(a)
    assert "is reproduced from $T = 16$ on" in reading["results"] and "rest on settled cells" in reading["budget"]
    assert "do not help" in reading["configurations"] and "a jump in $T$, not in budget" in reading["budget"]
    assert set(recorded(a)) >= {"nmse_table", "budget_check", "criteria", "configuration_spread", "analysis"}


def test_an_unsettled_budget_check_is_not_reproduced_and_says_so() -> None:
    a = _analysis({8: 0.15, 16: 0.88, 64: 0.99}, {8: 0.5, 16: 0.9, 64: 2.0})
    [claim] = verdicts(a)
    assert claim.verdict == "not observed" and "2 of 4 cells changed by 1.5 times or more" in claim.reason
    assert "rest on cells still learning" in reading_paragraphs(a)["budget"]


def test_without_a_part_the_claim_is_not_judged_and_the_prose_says_why() -> None:
    no_check = _analysis({8: 0.15, 16: 0.88, 64: 0.99})
    assert verdicts(no_check) == [] and "`reference_steps` is empty" in reading_paragraphs(no_check)["budget"]
    two = _analysis({8: 0.5, 64: 0.99}, {8: 0.5, 64: 0.99}, seq_lens=(8, 64))
    assert verdicts(two) == [] and two.equal_budget is None
    reading = reading_paragraphs(two)
    assert "three sequence lengths" in reading["prediction"] and "**not met**" in reading["criteria"]
    assert "Not every configuration learns at $T = 8$" in reading["budget"]
