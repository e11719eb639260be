"""Chapter 06 (InfoFlow's framework) as a typed chapter: its analysis, computed afresh on the committed book parameters,
gives the committed ``results/book/06_infoflow_framework.json`` key by key, verdicts included, and its checks and its
verdict can fail (on analyses doctored with ``dataclasses.replace``)."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest

from conftest import ROOT
from transformer_theory.chapters.computed import InfoFlowFrameworkParameters
from transformer_theory.chapters.framework import FrameworkAnalysis, analyse, verdicts
from transformer_theory.storage.results import to_jsonable

COMMITTED = json.loads((ROOT / "results" / "book" / "06_infoflow_framework.json").read_text())


@pytest.fixture(scope="module")
def analysis() -> FrameworkAnalysis:
    return analyse(InfoFlowFrameworkParameters(**COMMITTED["parameters"]))


def _as_recorded(value: Any) -> Any:
    """``value`` as the results file holds it (JSON types, string keys)."""
    return json.loads(json.dumps(to_jsonable(value)))


def _one_disagreement(a: FrameworkAnalysis) -> FrameworkAnalysis:
    """``a`` with its first judged configuration turned into a disagreement with the papers."""
    rows = [dict(r) for r in a.prediction_rows]
    first = next(r for r in rows if r["agrees"] is not None)
    first["agrees"] = False
    return replace(a, prediction_rows=rows)


def test_the_analysis_gives_the_committed_results_key_by_key(analysis) -> None:
    assert analysis.params == InfoFlowFrameworkParameters()  # the book runs the defaults
    assert analysis.failures() == []
    ours = _as_recorded({**analysis.values(), "verdicts": [c.to_dict() for c in verdicts(analysis)]})
    committed = COMMITTED["values"]
    assert set(ours) == set(committed)
    assert [k for k in committed if ours[k] != committed[k]] == []


def test_the_verdict_is_consistent_by_construction_and_can_fail(analysis) -> None:
    (claim,) = verdicts(analysis)
    assert claim.verdict == "consistent by construction"
    assert claim.ours == f"{analysis.n_judged} of {analysis.n_judged} configurations agree"
    (doctored,) = verdicts(_one_disagreement(analysis))
    assert doctored.verdict == "not observed"
    assert doctored.ours == f"{analysis.n_judged - 1} of {analysis.n_judged} configurations agree"


def test_a_disagreement_is_named(analysis) -> None:
    assert _one_disagreement(analysis).failures() == [
        "the prediction agrees with the papers on every judged configuration (it does not on pairwise_max(D=2) "
        "with heads [2, 2] at T = 64)"]


@pytest.mark.parametrize("change, failure", [
    ({"nope_message": None}, "(c) without positional encoding the prediction is refused with an error naming "
                             "positional=True"),
    ({"k_hop_depths": {1: 2, 2: 2, 4: 3, 8: 4, 16: 5, 32: 7}}, "the k-hop pointer chase needs ceil(log2(k + 2)) "
                                                               "layers of one head"),
])
def test_a_broken_check_is_named(analysis, change: dict, failure: str) -> None:
    assert replace(analysis, **change).failures() == [failure]


def test_a_wrong_evaluation_is_named(analysis) -> None:
    broken = replace(analysis, own_brute_force=analysis.own_brute_force + 1e-3)
    assert broken.failures() == ["the reader's own target evaluates to b^T x(s*(t*)) by brute force"]
