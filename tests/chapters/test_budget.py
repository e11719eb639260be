"""Doubling checks (chapters/budget.py): the doubled runs and the pairing of each with its cell."""

from __future__ import annotations

import pytest

from conftest import run_record
from transformer_theory.chapters import RunResult, experiment
from transformer_theory.chapters.budget import DOUBLE_PART, DoublingCheck, doubled, doubling_check, split_doubled


def runs():
    return experiment("09_aggregation_cost").runs()


def test_doubled_runs_twice_the_steps_of_the_selected_cells_only() -> None:
    chosen = doubled(runs(), lambda tags: tags["seed"] == 0)
    assert chosen and all(r.tags["part"] == DOUBLE_PART and r.tags["seed"] == 0 for r in chosen)
    originals = {repr({k: v for k, v in r.tags.items() if k != "part"}): r for r in runs()}
    for r in chosen:
        base = originals[repr({k: v for k, v in r.tags.items() if k != "part"})]
        assert r.config.steps == 2 * base.config.steps and r.config.key != base.config.key
        assert r.config.warmup == base.config.warmup and r.config.lr == base.config.lr


def result(tags, nmse, steps=100):
    return RunResult(tags, run_record(nmse, config={"steps": steps}))


def test_doubling_check_pairs_each_doubled_run_with_its_cell() -> None:
    results = [result({"T": 8, "seed": 0}, 1e-2), result({"T": 16, "seed": 0}, 4e-2),
               result({"T": 8, "seed": 0, "part": DOUBLE_PART}, 8e-3, 200),
               result({"T": 16, "seed": 0, "part": DOUBLE_PART}, 1e-2, 200)]
    check = doubling_check(results, ["T"])
    assert [c.tags for c in check.cells] == [{"T": 8, "seed": 0}, {"T": 16, "seed": 0}]
    assert [c.sufficient for c in check.cells] == [True, False] and check.stands is False
    assert check.max_change == pytest.approx(4.0) and check.cells[0].steps == 100
    assert check.to_dict()["cells"][1]["change"] == pytest.approx(4.0)
    assert doubling_check(results[:1] + results[2:3], ["T"]).stands is True
    assert len(split_doubled(results)[0]) == 2


def test_doubling_check_without_cells_or_values_judges_nothing() -> None:
    assert DoublingCheck(()).stands is None
    diverged = [result({"T": 8, "seed": 0}, None), result({"T": 8, "seed": 0, "part": DOUBLE_PART}, 1e-3)]
    assert doubling_check(diverged, ["T"]).stands is None


def test_a_doubled_run_without_its_cell_is_refused() -> None:
    with pytest.raises(ValueError, match="no run at the chapter's budget"):
        doubling_check([result({"T": 8, "seed": 1, "part": DOUBLE_PART}, 1e-3)], ["T"])
