"""The claims-at-a-glance page: generated from the committed book results, in step with what the chapters assert."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import ROOT
from transformer_theory.infoflow.efficiency import EFFICIENCY
from transformer_theory.pipeline import claims
from transformer_theory.pipeline.notebooks import list_notebooks


def test_every_claim_names_a_chapter_and_gets_a_verdict() -> None:
    every = claims.claim_rows()
    rows = [r for r in every if r["verdict"] is not None]
    assert len(rows) >= 15
    stems = {p.stem for p in list_notebooks()}
    assert {r["chapter"] for r in every} <= stems
    assert {r["verdict"] for r in rows} <= set(claims.VERDICTS)
    assert all(r["paper"] and r["ours"] and r["reason"] for r in rows)
    assert {r["source"].split(",")[0] for r in rows} >= {"Paper A", "InfoFlow", "P1"}


def _values(stem: str) -> dict:
    return json.loads((ROOT / "results" / "book" / f"{stem}.json").read_text())["values"]


def _verdict(rows: list[dict], chapter: str, source: str) -> str:
    return next(r["verdict"] for r in rows if r["chapter"] == chapter and r["source"] == source)


def _claim(rows: list[dict], chapter: str, claim: str) -> dict:
    return next(r for r in rows if r["chapter"] == chapter and r["claim"].startswith(claim))


def test_the_page_agrees_with_what_the_chapters_assert() -> None:
    rows = claims.claim_rows()
    reproduced = lambda flag: "reproduced" if flag else "not observed"  # noqa: E731
    assert _verdict(rows, "10_intrinsic_dimension", "InfoFlow, §4.1") == reproduced(
        all(_values("10_intrinsic_dimension")["criteria_met"].values()))
    assert _verdict(rows, "09_aggregation_cost", "InfoFlow, §4.4") == reproduced(
        _values("09_aggregation_cost")["attention_observed"])
    assert _verdict(rows, "08_max_position_retrieval", "InfoFlow, §4.3") == reproduced(
        _values("08_max_position_retrieval")["probe_observed"])
    assert _verdict(rows, "02_hardmax_interpolation", "Paper A, Theorem (hardmax)") == reproduced(
        _values("02_hardmax_interpolation")["exact_errors_all_zero"])
    calibration = _values("13_training_recipe")
    assert _verdict(rows, "13_training_recipe", "P1, Table 2") == reproduced(
        all(v["met"] for v in calibration["head_count_verdicts"]))
    met = calibration["two_layer_verdict"]["met"]  # None: the two-layer runs are not in the book profile yet
    assert _verdict(rows, "13_training_recipe", "P1, Table 5") == (None if met is None else reproduced(met))
    qualitatively = lambda flag: "reproduced qualitatively" if flag else "not observed"  # noqa: E731
    depth = _values("07_depth_separation")
    assert _claim(rows, "07_depth_separation", "depth separation")["verdict"] == qualitatively(
        depth["separation_ratio"] >= depth["min_ratio"])
    judged = _values("08_max_position_retrieval")["judged"]
    assert _verdict(rows, "08_max_position_retrieval", "InfoFlow, Theorem 2") == qualitatively(
        judged["top1_stays_low"] and all(judged["kth_degrades"].values()))
    assert _claim(rows, "10_intrinsic_dimension", "the penalty for a missing head")["verdict"] == reproduced(
        _values("10_intrinsic_dimension")["sequence_length_observed"])
    triangle = _values("11_triangle_center")
    assert _verdict(rows, "11_triangle_center", "InfoFlow, §4.2") == reproduced(
        triangle["criteria"]["observed"] and triangle["equal_budget_prediction"]["observed"])
    held = _values("14_mechanism_ablation")["analysis"]["prediction"]["held"]
    assert _verdict(rows, "14_mechanism_ablation", "this book's own") == (None if held is None else reproduced(held))
    # a chapter that records its Claim objects is shown as it recorded them
    recorded = _values("14_mechanism_ablation")["verdicts"]
    assert [r["ours"] for r in rows if r["chapter"] == "14_mechanism_ablation"] == [c["ours"] for c in recorded]


def _copy_results(tmp_path: Path) -> Path:
    shutil.copytree(ROOT / "results" / "book", tmp_path / "results" / "book",
                    ignore=shutil.ignore_patterns("runs"))
    return tmp_path


def test_the_page_shows_the_claims_the_chapter_recorded(tmp_path: Path) -> None:
    """The page judges nothing: it shows the claims a chapter's analysis recorded, whatever their verdict."""
    data = json.loads((ROOT / "results" / "book" / "09_aggregation_cost.json").read_text())
    root = _copy_results(tmp_path)
    path = root / "results" / "book" / "09_aggregation_cost.json"
    recorded = data["values"]["verdicts"]
    data["values"]["verdicts"] = [{**c, "verdict": "not testable on CPU"} for c in recorded]
    path.write_text(json.dumps(data))
    rows = [r for r in claims.claim_rows(root) if r["chapter"] == "09_aggregation_cost"]
    assert [r["verdict"] for r in rows] == ["not testable on CPU"] * len(recorded)


def test_missing_or_failed_results_are_named(tmp_path: Path) -> None:
    root = _copy_results(tmp_path)
    path = root / "results" / "book" / "07_depth_separation.json"
    data = json.loads(path.read_text())
    path.write_text(json.dumps({**data, "status": "failed"}))
    with pytest.raises(ValueError, match="07_depth_separation.json is not a finished run"):
        claims.claim_rows(root)
    path.write_text("{not json")
    with pytest.raises(ValueError, match="07_depth_separation.json is not valid JSON"):
        claims.claim_rows(root)
    path.unlink()
    with pytest.raises(ValueError, match="07_depth_separation.json is missing"):
        claims.claim_rows(root)


def test_the_page_links_every_chapter_and_counts_the_verdicts(tmp_path: Path) -> None:
    out = claims.write_claims_page(tmp_path / "claims.md")
    text = out.read_text()
    every = claims.claim_rows()
    rows = [r for r in every if r["verdict"] is not None]
    assert text.startswith("# Claims at a glance")
    assert f"{len(rows)} claims: " in text
    for r in every:
        assert f"(notebooks/{r['chapter']}.ipynb)" in text
    assert sum(text.count(f"**{v}**") for v in claims.VERDICTS) == len(rows) == len(every)


def test_the_page_states_the_books_one_efficiency_criterion() -> None:
    text = claims.claims_page()
    assert "**What \"efficient\" means in this book.**" in text
    assert f"at most {EFFICIENCY['nmse_threshold']:g} and at most {EFFICIENCY['max_growth']:g} times" in text
    assert "`transformer_theory.infoflow.efficiency.EFFICIENCY`" in text


def test_the_page_defines_its_terms_and_says_whose_each_paper_cell_is() -> None:
    page = claims.claims_page()
    glossary = page[page.index("**Glossary.**"):page.index("| chapter")]
    for term in ("**NMSE**: the normalised mean squared error", "**(D, D)**", "**half_gain**", "**P1**",
                 "**the calculator**", "**reconstruction**"):
        assert term in glossary, term
    rows = claims.claim_rows()
    assert {r["origin"] for r in rows} <= set(claims.ORIGINS) and {"paper", "summaries", "book"} <= {
        r["origin"] for r in rows}
    assert all(f"({claims.ORIGINS[r['origin']]})" in page for r in rows if r["verdict"] is not None)


def test_each_published_table_is_claimed_once_and_calibration_data_test_nothing() -> None:
    rows = claims.claim_rows()
    sources = [r["source"] for r in rows if r["source"].startswith("P1")]
    assert len(sources) == len(set(sources)), sources
    calculator = _claim(rows, "06_infoflow_framework", "information sets")
    assert calculator["verdict"] in ("consistent by construction", "not observed")
    held_out = _values("12_predictions_vs_training")
    scoreboard = _claim(rows, "12_predictions_vs_training", "the calculator's predictions")
    assert (scoreboard["verdict"] == "reproduced") == (held_out["agreement_rate"] >= 0.9)
    # the penalty growing with T is the calculator's prediction, not InfoFlow's statement
    in_T = _claim(rows, "10_intrinsic_dimension", "the penalty for a missing head grows with T")
    assert in_T["origin"] == "book" and "InfoFlow" not in in_T["source"].split("(")[0]
    assert "(T = 64)" in _claim(rows, "10_intrinsic_dimension", "a phase transition")["paper"]
