"""Paper A's construction chapters (02 hardmax, 03 softmax, 04 complexity) as typed chapters: each analysis, computed
afresh on the committed book parameters, gives the committed ``results/book/<chapter>.json`` key by key, verdicts
included, and its checks and verdicts can fail (on analyses doctored with ``dataclasses.replace``)."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from fractions import Fraction
from typing import Any

import pytest

from conftest import ROOT
from transformer_theory.chapters import complexity, hardmax, softmax
from transformer_theory.chapters.registry import PARAMETERS
from transformer_theory.storage.results import to_jsonable

CHAPTERS = {"02_hardmax_interpolation": hardmax, "03_softmax_interpolation": softmax, "04_complexity": complexity}
#: Below this, a float is a rounding error whose last bits depend on the host's BLAS kernels.
ROUNDING = 1e-12


def _committed(stem: str) -> dict[str, Any]:
    return json.loads((ROOT / "results" / "book" / f"{stem}.json").read_text())


def _same(ours: Any, committed: Any) -> bool:
    if isinstance(ours, dict) and isinstance(committed, dict):
        return ours.keys() == committed.keys() and all(_same(ours[k], committed[k]) for k in ours)
    if isinstance(ours, list) and isinstance(committed, list):
        return len(ours) == len(committed) and all(map(_same, ours, committed))
    if isinstance(ours, float) and isinstance(committed, (int, float)) and not isinstance(committed, bool):
        return math.isclose(ours, committed, rel_tol=1e-9) or max(abs(ours), abs(committed)) < ROUNDING
    return ours == committed


@pytest.fixture(scope="module", params=sorted(CHAPTERS))
def committed_analysis(request):
    stem = request.param
    data = _committed(stem)
    params = PARAMETERS[stem](**data["parameters"])
    return stem, data["values"], CHAPTERS[stem].analyse(params)


def test_the_analysis_gives_the_committed_results_key_by_key(committed_analysis) -> None:
    stem, committed, analysis = committed_analysis
    ours = to_jsonable({**analysis.values(), "verdicts": [c.to_dict() for c in CHAPTERS[stem].verdicts(analysis)]})
    assert set(ours) == set(committed)
    assert [k for k in committed if not _same(ours[k], committed[k])] == []
    assert analysis.failures() == []


def _verdicts(module, analysis) -> list[str]:
    return [c.verdict for c in module.verdicts(analysis)]


def test_hardmax_checks_and_verdicts_can_fail() -> None:
    a = hardmax.analyse(PARAMETERS["02_hardmax_interpolation"](N=4, d=2, n_max=4, n_datasets=2))
    assert a.failures() == [] and _verdicts(hardmax, a) == ["reproduced", "reproduced"]
    inexact = replace(a, exact_errors=(Fraction(0), Fraction(1, 3)))
    assert _verdicts(hardmax, inexact) == ["not observed", "reproduced"]
    assert inexact.failures() == ["exact mode: errors ['0', '1/3'] are not all exactly 0"]
    deep = replace(a, random=(replace(a.random[0], blocks=a.random[0].paper_blocks + 1), *a.random[1:]))
    assert _verdicts(hardmax, deep) == ["reproduced", "not observed"]
    assert [f.split(":")[0] for f in deep.failures()] == ["random dataset 0"]


def test_softmax_checks_and_verdicts_can_fail() -> None:
    a = softmax.analyse(PARAMETERS["03_softmax_interpolation"](tau_ratios=[0.5, 2.0], dims=[3], scales=[1.0], N=4))
    assert a.failures() == [] and _verdicts(softmax, a) == ["reproduced"]
    assert replace(a, refusal=None).failures() == ["a temperature above τ* is refused"]
    soft = replace(a, adversarial=(replace(a.adversarial[0], error_soft=2.0), *a.adversarial[1:]))
    assert _verdicts(softmax, soft) == ["not observed"]
    assert soft.failures() == ["both regimes interpolate every adversarial dataset, the underflow with zero spread"]


def test_complexity_checks_and_verdicts_can_fail() -> None:
    a = complexity.analyse(PARAMETERS["04_complexity"](d=3, N=2, m=1, lengths=[20, 200], m_values=[1, 2],
                                                       N_values=[2, 3], n_fixed=6))
    assert a.failures() == [] and _verdicts(complexity, a) == ["reproduced", "reproduced"]
    last = a.length_rows[-1]
    grows = replace(a, length_rows=(*a.length_rows[:-1], replace(last, hardmax=replace(last.hardmax, blocks=99))))
    assert _verdicts(complexity, grows)[0] == "not observed"
    assert grows.failures()[0] == "the blocks or parameters change with the input length"
    steep = replace(a, m_rows=tuple(replace(r, hardmax=replace(r.hardmax, blocks=3 * r.M * r.hardmax.blocks))
                                    for r in a.m_rows))
    assert _verdicts(complexity, steep)[1] == "not observed"
    assert any(f.startswith("hardmax, N = 2") for f in steep.failures())
