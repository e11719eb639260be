"""Chapter 13's committed book-profile analysis (``results/book/13_training_recipe.json``): the numbers and verdicts
its page quotes, checked here instead of in the notebook (which only displays the analysis)."""

from __future__ import annotations

import json

from conftest import ROOT
from transformer_theory.chapters.verdicts import Claim

DATA = json.loads((ROOT / "results" / "book" / "13_training_recipe.json").read_text())
VALUES, PARAMETERS = DATA["values"], DATA["parameters"]
D = PARAMETERS["D"]
ROWS = {(r["T"], r["h"]): r for r in VALUES["head_count_table"]}
VERDICTS = {v["T"]: v for v in VALUES["head_count_verdicts"]}
HALF = {(r["T"], r["h"]): r["seed_half_gain"] for r in VALUES["head_count_half_gain"]}
READING = VALUES["analysis"]["reading"]


def test_one_layer_meets_the_criterion_at_every_T_with_a_fall_of_hundreds() -> None:
    assert D == 4 and PARAMETERS["seq_lens"] == [8, 16, 32]
    for T, (low, high) in {8: (550, 700), 16: (300, 600), 32: (400, 600)}.items():
        assert VERDICTS[T]["met"] and low < VERDICTS[T]["ratio"] < high, VERDICTS[T]


def test_the_nmse_at_h_D_grows_with_T_and_stays_far_below_h_D_minus_1() -> None:
    at_D = {T: ROWS[(T, D)]["nmse"] for T in (8, 16, 32)}
    assert at_D[8] < at_D[16] < at_D[32] < 3.2e-6 < 1.4e-3 < ROWS[(32, D - 1)]["nmse"] < 1.6e-3, at_D


def test_at_T_16_every_seed_lies_on_its_side_of_P1s_means() -> None:
    full, missing = ROWS[(16, D)], ROWS[(16, D - 1)]
    assert 2.5e-6 < min(full["seed_nmse"].values()) and max(full["seed_nmse"].values()) < 5e-6 < full["paper_nmse"]
    assert 1e-3 < min(missing["seed_nmse"].values()) and max(missing["seed_nmse"].values()) < 2e-3
    assert min(missing["seed_nmse"].values()) > missing["paper_nmse"]
    assert (READING["full_seed_min"], READING["full_seed_max"]) == (min(full["seed_nmse"].values()),
                                                                    max(full["seed_nmse"].values()))


def test_each_earlier_head_gains_little_and_the_fifth_nothing() -> None:
    gains = VALUES["gains_per_head"]["16"]
    assert max(gains[:D - 2]) < 7 and gains[D - 1] < 1.5, gains  # before h = D - 1, and h = 5
    assert 3 < READING["earlier_gain_min"] and READING["earlier_gain_max"] < 6 and READING["next_gain"] < 1


def test_the_budget_check_finds_h_3_settled_and_h_4_still_learning() -> None:
    double = {b["h"]: b for b in VALUES["budget_check"]}
    assert double[3]["sufficient"] and 1.3 < double[3]["change"] < 1.5, double
    assert not double[4]["sufficient"] and 1.7 < double[4]["change"] < 2, double


def test_two_layers_meet_the_criterion_inside_P1s_range() -> None:
    verdict = VALUES["two_layer_verdict"]
    assert verdict["met"] and 3e-6 < verdict["nmse"] < 4e-6 and 200 < verdict["ratio"] < 220, verdict
    tl = {r["h"]: r for r in VALUES["two_layer_head_count_table"]}
    assert tl[2]["paper_nmse"][0] <= tl[2]["nmse"] <= tl[2]["paper_nmse"][1] < tl[1]["paper_nmse"][1] < tl[1]["nmse"]
    assert READING["not_trained"] == {"tl_heads": [3, 4, 5]}


def test_the_cells_at_and_above_D_were_still_learning_and_those_below_had_settled() -> None:
    assert min(g for (T, h), v in HALF.items() if T == 32 and h >= D for g in v) > 2.5
    assert max(g for (T, h), v in HALF.items() if T == 32 and h == D - 1 for g in v) < 1.35
    at_or_above = [g for (T, h), v in HALF.items() if h >= D for g in v]
    below = sorted(g for (T, h), v in HALF.items() if h < D for g in v)
    assert 2.7 <= min(at_or_above) and max(at_or_above) < 12.5, at_or_above
    assert below[-3] < 1.49 and 1.6 < below[-2] < 1.7 and 1.75 < below[-1] < 1.85, below
    assert [(x["T"], x["h"]) for x in READING["below_learning"]] == [(16, 1), (32, 2)]
    assert READING["below_settled_max"] == below[-3]


def test_the_chapters_claims_are_typed_and_agree_with_its_checks() -> None:
    claims = VALUES["claims"]
    assert all(claims[f"head_count_met_t{T}"] == v["met"] for T, v in VERDICTS.items() if v["met"] is not None)
    typed = [Claim.from_dict(c) for c in VALUES["verdicts"]]
    assert [(c.source, c.verdict) for c in typed] == [("P1, Table 2", "reproduced"), ("P1, Table 5", "reproduced")]
    assert typed[0].ours == "0.00097 → 1.5e-06 / 0.0012 → 2.7e-06 / 0.0015 → 3e-06"
    assert "still learning (half_gain 8.73)" in typed[1].reason and claims["two_layer_met"] is True
