"""The claims of the chapters that do not compute their own :class:`~transformer_theory.chapters.verdicts.Claim`
objects from a typed analysis yet (a chapter that does computes them in its ``*_analysis`` module's ``verdicts``,
chapter 14's :func:`~transformer_theory.chapters.ablation_analysis.verdicts` the worked example): each judged from the
values the chapter's notebook recorded and its parameters, in the notebook itself (:func:`chapter_claims`), which
records the claims and shows them in its "Verdict" box; the claims page only displays them.

Nothing here is typed by hand except the wording of the claims and the reasons' templates: the paper's numbers come
from the reference modules (:mod:`transformer_theory.interpolation.reference` holds Paper A's official figure data,
:mod:`transformer_theory.infoflow.reference` InfoFlow's and its predecessor's tables, through the chapters' records),
ours and the verdicts from the values each chapter recorded. Where a chapter asserts a claim (a recorded flag such
as ``criteria_met``), the verdict is computed from that flag, so the page and the chapter cannot disagree.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from transformer_theory.chapters.prose import significant, slashed
from transformer_theory.chapters.verdicts import Claim

__all__ = ["JUDGES", "Judge", "chapter_claims"]

Values = Mapping[str, Any]
Judged = tuple[str, str, str, str] | None


@dataclass(frozen=True)
class Judge:
    """A claim whose chapter does not record its :class:`~transformer_theory.chapters.verdicts.Claim` objects yet,
    judged here from the values it recorded. One row: ``chapter`` (notebook stem), ``source`` (theorem, section or "this book's own"), ``claim`` (as the
    paper states it, or as this book poses it), ``origin`` (a key of :data:`ORIGINS`: whose the "paper" cell is),
    ``judge`` (the chapter's recorded values and its parameters → ``(paper, ours, verdict, reason)``, or ``None``
    where the committed results do not yet hold the claim's runs)."""

    chapter: str
    source: str
    claim: str
    origin: str
    judge: Callable[[Values, Values], Judged]


def _yes(flag: bool, then: str, otherwise: str = "not observed") -> str:
    return then if flag else otherwise


def _hardmax(v: Values, p: Values) -> Judged:
    exact = bool(v["exact_errors_all_zero"])
    return ("exact interpolation", f"max error {significant(v['max_error'])} (float64)", _yes(exact, "reproduced"),
            "every target met to rounding on every dataset of the chapter")


def _hardmax_blocks(v: Values, p: Values) -> Judged:
    ours, bound = v["random_blocks"], v["random_paper_blocks"]
    within = all(a <= b for a, b in zip(ours, bound)) and v["toy_blocks"] <= v["toy_paper_blocks"]
    return (f"2Σm_j + 2N + 1 = {' / '.join(map(str, bound))}", f"{' / '.join(map(str, ours))} blocks",
            _yes(within, "reproduced"), "our construction stays within the paper's count on every random dataset")


def _softmax(v: Values, p: Values) -> Judged:
    within = v["blocks_toy"] <= v["paper_blocks_toy"] and v["max_error_over_tol_soft"] < 1
    return (f"exact below τ*, 2Σm_j + 3N = {v['paper_blocks_toy']} blocks",
            f"{v['blocks_toy']} blocks, error {significant(v['max_error_toy'])} at τ = {significant(v['temperature_toy'])}",
            _yes(within, "reproduced"), "τ* and the exactification layers are this book's reconstruction")


def _length_free(v: Values, p: Values) -> Judged:
    flag = bool(v["blocks_constant_in_n"])
    return ("depth independent of the input lengths", f"{v['hardmax_blocks']} blocks at n = "
            f"{v['lengths'][0]} … {v['lengths'][-1]}", _yes(flag, "reproduced"),
            "same block count at every input length; the weights' size grows instead")


def _parameters(v: Values, p: Values) -> Judged:
    per, slopes = v["max_params_per_d_per_block"], v["blocks_per_M"]
    linear = all(x <= 2 + 1e-9 for x in slopes.values())
    return ("O(d Σm_j) parameters", f"{slashed(slopes.values())} blocks per unit of Σm_j, at most {significant(per)} "
            "parameters per d per block", _yes(linear, "reproduced"),
            "blocks grow linearly in Σm_j with a bounded count per block: the structured count (dense storage is not)")


def _tikhonov_rate(v: Values, p: Values) -> Judged:
    ours, paper, tol = v["fig1b_slope"], v["paper_fig1b_slope"], p["paper_rel_tol"]
    close = all(abs(o - q) <= tol * abs(q) for o, q in zip(v["fig1b_min_losses"], v["paper_fig1b_min_losses"]))
    return (f"loss O(ε): slope {significant(paper)} (official Fig. 1b data)", f"slope {significant(ours)}",
            _yes(close and abs(ours - paper) <= tol * abs(paper), "reproduced"),
            f"our retraining of the official setting; every minimal loss within {tol:.0%} of the official data")


def _tikhonov_diagnostic(v: Values, p: Values) -> Judged:
    flags = v["failed_certified_not_global"]
    return ("a loss above the O(ε) bound certifies a non-global minimum", f"{sum(flags)} of {len(flags)} "
            "failed trainings flagged", _yes(all(flags), "reproduced"),
            "the bound is computed from the constructed interpolant (this book's demonstration)")


def _calculator(v: Values, p: Values) -> Judged:
    agree, judged = v["n_agree_with_papers"], v["n_judged"]
    return ("the papers' observed (in)efficiencies", f"{agree} of {judged} configurations agree",
            _yes(agree == judged, "consistent by construction"),
            "the calculator is this book's reconstruction of InfoFlow's rules, calibrated on these very configurations: "
            "agreement here is not a test (the held-out test is chapter 12's row)")


#: The judged claims, in the book's order.
JUDGES: tuple[Judge, ...] = (
    Judge("02_hardmax_interpolation", "Paper A, Theorem (hardmax)", "a hardmax transformer interpolates any "
          "dataset of sequences exactly", "paper", _hardmax),
    Judge("02_hardmax_interpolation", "Paper A, Theorem (hardmax)", "with 2Σm_j + 2N + 1 blocks", "paper",
          _hardmax_blocks),
    Judge("03_softmax_interpolation", "Paper A, Theorem (softmax)", "a softmax transformer interpolates exactly "
          "below a temperature τ*, with 2Σm_j + 3N blocks", "paper", _softmax),
    Judge("04_complexity", "Paper A, complexity", "depth independent of the input lengths", "paper", _length_free),
    Judge("04_complexity", "Paper A, complexity", "O(d Σm_j) parameters", "paper", _parameters),
    Judge("05_tikhonov", "Paper A, Tikhonov result", "global minimisers of the regularised loss have training "
          "loss O(ε)", "paper", _tikhonov_rate),
    Judge("05_tikhonov", "Paper A, Tikhonov result", "deviations from O(ε) tell a local from a global minimum",
          "paper", _tikhonov_diagnostic),
    Judge("06_infoflow_framework", "InfoFlow, framework (reconstructed)", "information sets and propagation "
          "modes predict which configurations are efficient", "summaries", _calculator),
)


def chapter_claims(chapter: str, values: Mapping[str, Any], parameters: Mapping[str, Any]) -> list[Claim]:
    """The claims of ``chapter`` (a notebook's stem) judged on the ``values`` its notebook recorded and its
    ``parameters``; a claim whose runs or values the parameters leave out (a reader's own profile may drop the
    configurations a judge compares) is left out."""
    out = []
    for j in (j for j in JUDGES if j.chapter == chapter):
        try:
            judged = j.judge(values, parameters)
            claim = None if judged is None else Claim(chapter, j.source, j.claim, j.origin, *judged)
        except (KeyError, IndexError, StopIteration, TypeError, ValueError):  # a value it needs is not in these runs
            claim = None
        if claim is not None:
            out.append(claim)
    return out
