"""Chapter 11's committed book-profile analysis (``results/book/11_triangle_center.json``): the numbers and verdicts its
page quotes, checked here instead of in the notebook (which only displays the analysis)."""

from __future__ import annotations

import json

import pytest

from conftest import ROOT
from transformer_theory.chapters import experiment
from transformer_theory.chapters.triangle_center import STILL_LEARNING
from transformer_theory.chapters.verdicts import Claim

DATA = json.loads((ROOT / "results" / "book" / "11_triangle_center.json").read_text())
VALUES, PARAMETERS = DATA["values"], DATA["parameters"]
READING = VALUES["analysis"]["reading"]
NMSE_AT = {T: [r["nmse"] for r in VALUES["nmse_table"] if r["T"] == T] for T in PARAMETERS["seq_lens"]}


def test_the_target_equals_the_loop_over_all_triples() -> None:
    assert VALUES["target_check_max_diff"] < 1e-12
    target = VALUES["analysis"]["target"]
    assert 0.2 - 1e-12 <= target["norm_min"] <= target["norm_max"] <= 4.0 + 1e-12


def test_the_comparison_number_outgrows_every_configuration_and_nothing_is_predicted_efficient() -> None:
    growth = VALUES["comparison_growth"]
    for h1, h2, E in PARAMETERS["configs"]:
        ratios = [g[f"ratio ({h1},{h2}),E={E}"] for g in growth]
        assert all(b > a for a, b in zip(ratios, ratios[1:])), ratios
    assert VALUES["predictions"] and not any(r["predicted_efficient"] for r in VALUES["predictions"])


def test_every_run_is_committed_with_a_finite_nmse() -> None:
    assert VALUES["n_runs"] == len(experiment("11_triangle_center").runs(PARAMETERS)) == 24 + 3  # and the doubling check's
    assert all(r["nmse"] is not None for r in VALUES["nmse_table"])


def test_the_criteria_and_the_equal_budget_prediction_hold() -> None:
    criteria = VALUES["criteria"]
    assert criteria["shortest_T"] == min(PARAMETERS["seq_lens"]) == 8
    assert criteria["largest_T"] == max(PARAMETERS["seq_lens"]) == 64 and criteria["observed"]
    assert VALUES["equal_budget_prediction"]["observed"] and VALUES["still_learning"] == []


def test_the_nmse_the_reading_quotes() -> None:
    assert all(0.13 < v < 0.18 for v in NMSE_AT[8]) and all(0.87 < v < 0.89 for v in NMSE_AT[16])
    assert all(0.95 < v < 0.96 for v in NMSE_AT[32]) and all(0.975 < v < 0.985 for v in NMSE_AT[64])
    assert READING["nmse_range"]["8"] == [min(NMSE_AT[8]), max(NMSE_AT[8])]
    assert (round(READING["shortest_over_paper"][0], 1), round(READING["shortest_over_paper"][1], 1)) == (1.7, 2.2)
    assert READING["best_shortest"] == "(4,4),E=48" and READING["worst_shortest"] == "(2,2),E=24"


def test_the_budget_check_settles_the_longer_lengths() -> None:
    check = VALUES["budget_check"]
    assert all(r["settled"] and r["change"] < 1.1 for r in check if r["T"] > 8), check
    assert all(2.5 < r["change"] < 3.5 for r in check if r["T"] == 8)
    rows = VALUES["nmse_table"]
    assert all(1.2 < r["half_gain"] < STILL_LEARNING for r in rows if r["T"] == 8)
    assert all(r["half_gain"] < 1.02 for r in rows if r["T"] > 8)
    assert READING["change_longer_max"] == pytest.approx(max(r["change"] for r in check if r["T"] > 8))


def test_heads_and_width_do_not_separate_the_configurations() -> None:
    spread = VALUES["configuration_spread"]
    assert max(spread[T] for T in ("16", "32", "64")) < 1.005 and 1.2 < spread["8"] < 1.3, spread
    assert READING["spread_longer_max"] == max(spread[T] for T in ("16", "32", "64"))


def test_the_claim_is_typed_and_agrees_with_the_flags() -> None:
    claims = [Claim.from_dict(c) for c in VALUES["verdicts"]]
    assert [c.verdict for c in claims] == ["reproduced"]
    assert claims[0].ours == "0.17 / 0.88 / 0.96 / 0.98" and "differ by at most 0.4%" in claims[0].reason
    flags = VALUES["claims"]
    assert flags["observed"] == VALUES["criteria"]["observed"]
    assert flags["equal_budget_prediction"] == VALUES["equal_budget_prediction"]["observed"]
    assert flags["settled_longer_t"] == all(r["settled"] for r in VALUES["budget_check"] if r["T"] > 8)


def test_the_doubling_check_of_the_papers_configuration() -> None:
    """Issue 34: the paper's configuration (2, 2, 24) at T = 16, 32, 64 (seed 0) at twice the steps changes by less
    than 1.01x: the cells the claim rests on had settled, now by a doubled budget, not only by a smaller one."""
    check = VALUES["doubling_check"]
    assert PARAMETERS["double_seeds"] == [0] and [c["tags"]["T"] for c in check["cells"]] == [16, 32, 64]
    assert check["stands"] is True and check["max_change"] < 1.01
    assert "the verdict stands" in Claim.from_dict(VALUES["verdicts"][0]).reason
