"""Chapter 10's recipe part (InfoFlow §4.1 retrained on a from-scratch recipe, with a control beside it): its table
against the bars, its committed prediction judged statement by statement, its two claims (what the model family
represents, what training finds from a random start) and its reading, computed once (:func:`recipe_part`). The runs
are :func:`~transformer_theory.chapters.intrinsic_dimension.recipe_part_runs`; the recipes, the bar on the full-head
NMSE and the prediction are in :mod:`~transformer_theory.chapters.recipes`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from transformer_theory.chapters.budget import (BUDGET_TOLERANCE, DoublingCheck, doubling_check, doubling_paragraph,
                                                 doubling_reason)
from transformer_theory.chapters.experiment import Results, best_over_seeds, half_gains
from transformer_theory.chapters.intrinsic_dimension import (EXPERIMENT, MIN_RATIOS, IntrinsicDimensionParameters,
                                                             separation_ratios)
from transformer_theory.chapters.prose import enumerated, significant, slashed
from transformer_theory.chapters.recipes import (CLIPPED_EVERY_D_PREDICTION, CLIPPED_PREDICTION, CONFIG_NAMES,
                                                 RECIPE_MAX_FULL, RECIPE_STATEMENTS, RECIPES, head_configs)
from transformer_theory.chapters.verdicts import Claim
from transformer_theory.infoflow.reference import INTRINSIC_DIMENSION_NMSE

__all__ = ["ROLES", "RecipePart", "clipped_check", "clipped_every_d_check", "recipe_part", "recipe_prediction_check",
           "recipe_row", "recipe_table"]

#: The role of each recipe of the part, in the order of ``IntrinsicDimensionParameters.recipes``: the from-scratch
#: recipe, the same recipe with the papers' FFN (where the recipe departs from it) and the control.
ROLES = ("recipe", "papers' FFN", "control")
#: How the reading opens on each role's rows (``{arm}``: the recipe's name).
_SUBJECTS = {"recipe": "From a random start, the {arm} recipe",
             "papers' FFN": "With the papers' GeLU FFN, the same recipe ({arm})",
             "control": "Started at the mechanism, the {arm} control",
             "candidate": "A candidate from a random start, the {arm} recipe,"}
_CLIPPED_WORDS = {"candidate_meets_bar": "the clipped curriculum meets the bar at $D = 4$",
                  "recipe_misses_bar": "the unclipped one misses it", "no_spike": "no loss spike"}
#: The cell of :data:`~transformer_theory.chapters.recipes.CLIPPED_PREDICTION`, and the step from which its (D, D)
#: model's validation NMSE must stay at most 1.
CLIPPED_CELL, CLIPPED_FROM_STEP = (4, 8), 1000
#: The cells of :data:`~transformer_theory.chapters.recipes.CLIPPED_EVERY_D_PREDICTION`.
CLIPPED_EVERY_D_CELLS = ((2, 8), (3, 8), (4, 8))

#: The words of each statement of the prediction, as the reading gives them.
_STATEMENT_WORDS = {"recipe_meets_bars": "the recipe meets the bars", "control_meets_bars": "the control meets them",
                    "ratio_grows_with_T": "the ratio at $D = 2$ grows with $T$",
                    "full_still_learning": "the doubled $(D, D)$ cells at $D \\ge 3$ were still learning"}


def recipe_row(results: Results, part: str, arm: str, D: int, T: int, steps: int,
               seeds: Sequence[int]) -> dict[str, Any]:
    """The §4.1 cell of the runs of ``part`` on ``arm`` (a recipe, or an arm of chapter 14) at ``D`` and ``T``, best
    over ``seeds``: ``arm``, ``D``, ``T``, ``steps``, ``seeds``, ``nmse_full``, ``nmse_missing`` and ``ratio`` (as
    :func:`~transformer_theory.chapters.intrinsic_dimension.separation_ratios`) and ``half_gain`` (of the best (D, D)
    seed: still learning at 1.5 or more)."""
    chosen = [r for r in results if r.tags["part"] == part and r.tags.get("arm") == arm and r.tags["D"] == D
              and r.tags["T"] == T and r.tags["seed"] in seeds]
    measured = {(r["h1"], r["h2"]): r for r in best_over_seeds(chosen)}
    cells = [{"D": D, "config": CONFIG_NAMES[(h1 - D, h2 - D)], "paper_nmse": None,
              "nmse": measured.get((h1, h2), {}).get("nmse")} for h1, h2 in head_configs(D)]
    ratio = separation_ratios(cells)[0]
    full = half_gains([r for r in chosen if (r.tags["h1"], r.tags["h2"]) == (D, D)], ("arm",))
    return {"arm": arm, "D": D, "T": T, "steps": steps, "seeds": list(seeds), "nmse_full": ratio["nmse_full"],
            "nmse_missing": ratio["nmse_missing"], "ratio": ratio["ratio"],
            "half_gain": full[0]["half_gain"] if full else None}


def recipe_table(results: Results, p: IntrinsicDimensionParameters) -> list[dict[str, Any]]:
    """One :func:`recipe_row` per [D, T] of ``rc_cells`` and recipe (``rc_recipe``, ``rc_papers_ffn``, then
    ``rc_control``), then per [D, T] of ``rc_candidate_cells`` on ``rc_candidate`` (role ``"candidate"``), with
    ``role`` (:data:`ROLES`), ``paper_ratio`` (§4.1's quotient at D, T = 64; ``None`` where the
    paper has no D), ``bar`` (``MIN_RATIOS``; ``None`` for a D without one) and ``met``: the ratio meets the bar and
    the (D, D) NMSE is at most ``RECIPE_MAX_FULL`` (``None`` without a bar or a value)."""
    paper = {s["D"]: s["paper_ratio"] for s in separation_ratios(
        [{"D": D, "config": name, "nmse": None, "paper_nmse": INTRINSIC_DIMENSION_NMSE[D].get(name)}
         for D in INTRINSIC_DIMENSION_NMSE for name in CONFIG_NAMES.values()])}
    def row(role: str, arm: str, D: int, T: int) -> dict[str, Any]:
        seeds = p.rc_candidate_seeds if role == "candidate" else p.rc_seeds
        r, bar = recipe_row(results, "recipe", arm, D, T, p.rc_steps, seeds), MIN_RATIOS.get(D)
        met = (None if bar is None or r["ratio"] is None
               else bool(r["ratio"] >= bar and r["nmse_full"] <= RECIPE_MAX_FULL))
        return {"role": role, **r, "paper_ratio": paper.get(D), "bar": bar, "met": met}

    return ([row(role, arm, D, T) for D, T in p.rc_cells for role, arm in zip(ROLES, p.recipes) if arm]
            + [row("candidate", p.rc_candidate, D, T) for D, T in p.rc_candidate_cells if p.rc_candidate])


def recipe_prediction_check(rows: Sequence[dict[str, Any]], check: DoublingCheck) -> dict[str, bool | None]:
    """``RECIPE_PREDICTION`` judged, statement by statement (``RECIPE_STATEMENTS``), on the rows of
    :func:`recipe_table` and the recipe's doubling check: ``None`` where the runs a statement needs are not there (no
    control, no second T at D = 2, no (D, D) cell doubled at D >= 3)."""
    def all_met(role: str) -> bool | None:
        flags = [r["met"] for r in rows if r["role"] == role and r["bar"] is not None]
        return None if not flags or None in flags else all(flags)

    ratio = {r["T"]: r["ratio"] for r in rows if r["role"] == "recipe" and r["D"] == 2}
    Ts = sorted(ratio)
    grows = [ratio[b] > ratio[a] for a, b in zip(Ts, Ts[1:]) if ratio[a] is not None and ratio[b] is not None]
    learning = [c.sufficient is False for c in check.cells
                if c.tags["D"] >= 3 and c.tags["h1"] == c.tags["h2"] == c.tags["D"] and c.sufficient is not None]
    return dict(zip(RECIPE_STATEMENTS, (all_met("recipe"), all_met("control"), all(grows) if grows else None,
                                        all(learning) if learning else None)))


def clipped_check(rows: Sequence[dict[str, Any]], results: Results, p: IntrinsicDimensionParameters) -> dict[str, Any]:
    """:data:`~transformer_theory.chapters.recipes.CLIPPED_PREDICTION` judged at :data:`CLIPPED_CELL` (all ``None``
    unless ``rc_candidate`` is ``term curriculum, clipped`` and its cell is trained): ``candidate_meets_bar``,
    ``recipe_misses_bar``, ``no_spike`` (the candidate's (D, D) validation NMSE at most 1 from
    :data:`CLIPPED_FROM_STEP` on, best seed), ``held`` (all three), and ``largest_late_nmse`` (that largest value)."""
    at = {r["role"]: r for r in rows if (r["D"], r["T"]) == CLIPPED_CELL}
    D, T = CLIPPED_CELL
    full = [r for r in results if r.tags["part"] == "recipe" and r.tags.get("arm") == p.rc_candidate
            and (r.tags["D"], r.tags["T"], r.tags["h1"], r.tags["h2"]) == (D, T, D, D)
            and r.tags["seed"] in p.rc_candidate_seeds]
    if p.rc_candidate != "term curriculum, clipped" or "candidate" not in at or not full:
        return {"candidate_meets_bar": None, "recipe_misses_bar": None, "no_spike": None, "held": None,
                "largest_late_nmse": None}
    best = min(full, key=lambda r: r.best_nmse if r.best_nmse is not None else float("inf")).record.history
    late = [v for s, v in zip(best.step, best.val_nmse) if s >= CLIPPED_FROM_STEP]
    largest = None if not late or None in late else max(late)
    check = {"candidate_meets_bar": at["candidate"]["met"],
             "recipe_misses_bar": None if at.get("recipe", {}).get("met") is None else not at["recipe"]["met"],
             "no_spike": None if largest is None else largest <= 1}
    return {**check, "held": None if None in check.values() else all(check.values()), "largest_late_nmse": largest}


def clipped_every_d_check(rows: Sequence[dict[str, Any]], p: IntrinsicDimensionParameters) -> bool | None:
    """:data:`~transformer_theory.chapters.recipes.CLIPPED_EVERY_D_PREDICTION` judged: the candidate (``term
    curriculum, clipped``) meets the bars at every cell of :data:`CLIPPED_EVERY_D_CELLS`; ``None`` unless that is the
    candidate and every one of those cells has a verdict."""
    met = {(r["D"], r["T"]): r["met"] for r in rows if r["role"] == "candidate"}
    flags = [met.get(cell) for cell in CLIPPED_EVERY_D_CELLS]
    return None if p.rc_candidate != "term curriculum, clipped" or None in flags else all(flags)


def _span(values: Sequence[float]) -> str:
    """``1.2 to 3.4``, or ``1.2`` for one value."""
    lo, hi = significant(min(values)), significant(max(values))
    return lo if lo == hi else f"{lo} to {hi}"


def _cells(rows: Sequence[dict[str, Any]]) -> str:
    """``[2, 8] / [3, 8]``: the [D, T] of recipe rows."""
    return " / ".join(f"[{r['D']}, {r['T']}]" for r in rows)


@dataclass(frozen=True)
class RecipePart:
    """The recipe part of chapter 10 under parameters ``params``: the ``rows`` of :func:`recipe_table`, the recipe's
    ``doubling`` check and the candidate's (``candidate_doubling``), the committed ``prediction`` judged
    (:func:`recipe_prediction_check`) and the candidate's committed predictions judged (``clipped``,
    :func:`clipped_check`; ``clipped_every_d``, :func:`clipped_every_d_check`)."""

    params: IntrinsicDimensionParameters
    rows: list[dict[str, Any]]
    doubling: DoublingCheck
    candidate_doubling: DoublingCheck
    prediction: dict[str, bool | None]
    clipped: dict[str, Any]
    clipped_every_d: bool | None

    @property
    def observed(self) -> bool | None:
        """The prediction as a whole: every statement held (``None`` while one cannot be judged and none failed)."""
        values = list(self.prediction.values())
        return False if False in values else None if None in values else True

    def recorded(self) -> dict[str, Any]:
        """The values the chapter records for this part, by name."""
        return {"recipe_table": self.rows, "recipe_doubling": self.doubling.to_dict(),
                "candidate_doubling": self.candidate_doubling.to_dict(),
                "recipe_prediction": self.prediction, "recipe_prediction_observed": self.observed,
                "clipped_prediction": self.clipped, "clipped_every_d_prediction": self.clipped_every_d}

    def claims(self) -> list[Claim]:
        """What the family represents (the control) and what training finds from a random start (the recipe); a
        claim without every barred cell's ratio is left out."""
        out = []
        for role, statement, why in (
                ("control", "a phase transition at h_1 = h_2 = D: what the model family represents",
                 "the control starts layer 1 at the mechanism, so it shows what the family can represent and learn "
                 "once the retrievals are found, not what training finds"),
                ("recipe", "a phase transition at h_1 = h_2 = D: what training finds from a random start",
                 "the recipe trains from a random start"),
                ("candidate",
                 "a phase transition at h_1 = h_2 = D: what the candidate recipe finds from a random start",
                 "the candidate trains from a random start; it was proposed after the recipe's loss spike at D = 4 "
                 "was seen, and its prediction at every D (CLIPPED_EVERY_D_PREDICTION) is "
                 + {True: "observed", False: "not observed", None: "not yet judged"}[self.clipped_every_d])):
            rows = [r for r in self.rows if r["role"] == role and r["bar"] is not None]
            if not rows or any(r["ratio"] is None for r in rows):
                continue
            arm, gains = rows[0]["arm"], [r["half_gain"] for r in rows if r["half_gain"] is not None]
            out.append(Claim(
                EXPERIMENT.name, "InfoFlow, §4.1", statement, "summaries",
                f"missing-head / full-head NMSE {slashed(r['paper_ratio'] for r in rows)} at D = "
                f"{' / '.join(str(r['D']) for r in rows)} (T = 64)",
                f"{slashed(r['ratio'] for r in rows)} at [D, T] = {_cells(rows)}, (D,D) NMSE "
                f"{slashed(r['nmse_full'] for r in rows)} ({arm}, {rows[0]['steps']} steps)",
                "reproduced qualitatively" if all(r["met"] for r in rows) else "not observed",
                f"our bars: ratio {slashed(r['bar'] for r in rows)} and (D,D) at most {RECIPE_MAX_FULL:g}; {why}"
                + ("; its gated FFN is a labelled departure from the papers' GeLU FFN"
                   + self._papers_ffn(rows) if RECIPES[arm].get("ffn_kind") == "gated" else "")
                + "; T is shorter than the paper's 64"
                + (f"; half_gain {_span(gains)}" + (": still learning, a verdict on this budget"
                                                     if min(gains) >= BUDGET_TOLERANCE else "") if gains else "")
                + doubling_reason({"recipe": self.doubling, "candidate": self.candidate_doubling}.get(
                    role, DoublingCheck(())))
                + self._pending()))
        return out + self._clipped_claim()

    def _clipped_claim(self) -> list[Claim]:
        """The candidate's claim, once :data:`~transformer_theory.chapters.recipes.CLIPPED_PREDICTION` is judged."""
        c = self.clipped
        if c["held"] is None:
            return []
        at = {r["role"]: r for r in self.rows if (r["D"], r["T"]) == CLIPPED_CELL}
        cand, base = at["candidate"], at["recipe"]
        return [Claim(
            EXPERIMENT.name, "this book's own", "clipping each model's gradient norm lets the term curriculum find "
            f"§4.1's mechanism at D = {CLIPPED_CELL[0]}", "book",
            "(this book's prediction, committed before the runs) " + CLIPPED_PREDICTION,
            f"ratio {significant(cand['ratio'])}, (D,D) NMSE {significant(cand['nmse_full'])} at [D, T] = "
            f"{_cells([cand])}, against {significant(base['ratio'])} and {significant(base['nmse_full'])} unclipped; "
            f"largest (D,D) validation NMSE from step {CLIPPED_FROM_STEP}: {significant(c['largest_late_nmse'])}",
            "reproduced" if c["held"] else "not observed",
            f"{cand['steps']} steps, seed{'s' * (len(cand['seeds']) > 1)} {enumerated(cand['seeds'])}; statements: "
            + ", ".join(f"{k} {v}" for k, v in c.items() if k not in ("held", "largest_late_nmse"))
            + "; the gated FFN is a labelled departure from the papers' GeLU FFN")]

    def _papers_ffn(self, rows: Sequence[dict[str, Any]]) -> str:
        """`` (with the GeLU FFN: ratio ...)``: the papers'-FFN rows at the cells of ``rows`` ("" without them)."""
        cells = {(r["D"], r["T"]) for r in rows}
        same = [r for r in self.rows
                if r["role"] == "papers' FFN" and (r["D"], r["T"]) in cells and r["ratio"] is not None]
        return (f" (with the GeLU FFN, {same[0]['arm']}: ratio {slashed(r['ratio'] for r in same)}, (D,D) NMSE "
                f"{slashed(r['nmse_full'] for r in same)} at [D, T] = {_cells(same)})" if same else "")

    def _pending(self) -> str:
        """What the chapter's design trains that these parameters leave out ("" if nothing)."""
        design, p = IntrinsicDimensionParameters(), self.params
        cells = [c for c in design.rc_cells if c not in p.rc_cells]
        seeds = sorted({s for s in design.rc_seeds if s not in p.rc_seeds}
                       | {s for s in design.rc_candidate_seeds if s not in p.rc_candidate_seeds and p.rc_candidate})
        missing = ([f"[D, T] = {' / '.join(f'[{D}, {T}]' for D, T in cells)}"] if cells else []) + (
            [f"seed{'s' * (len(seeds) > 1)} {enumerated(seeds)}"] if seeds else []) + (
            ["the doubling check"] if design.rc_double_seeds and not p.rc_double_seeds else [])
        return f"; not yet trained: {enumerated(missing)} (the chapter's design)" if missing else ""

    def paragraph(self) -> str:
        """The part in words (MyST): the recipe and its control against the bars, the prediction, the doubling check."""
        p = self.params
        if all(r["ratio"] is None for r in self.rows):
            return "*(The recipe part has no ratio in this profile.)*"
        text = ""
        for role in (*ROLES, "candidate"):
            rows = [r for r in self.rows if r["role"] == role and r["ratio"] is not None]
            if not rows:
                continue
            barred = [r for r in rows if r["bar"] is not None]
            met = [r for r in barred if r["met"]]
            one = len(rows) == 1
            text += (f"**{_SUBJECTS[role].format(arm=rows[0]['arm'])} "
                     + ("meets the bars" if barred and len(met) == len(barred) else "does not meet the bars"
                        if not met else f"meets the bars at only {len(met)} of {len(barred)} cells")
                     + ".** " + f"Its ratio{' is' if one else 's are'} {slashed(r['ratio'] for r in rows)} and its "
                     f"$(D, D)$ NMSE {slashed(r['nmse_full'] for r in rows)} at $[D, T]$ = {_cells(rows)} (best over "
                     f"seed{'s' * (len(rows[0]['seeds']) > 1)} {enumerated(rows[0]['seeds'])}, {p.rc_steps} steps), "
                     "against "
                     f"InfoFlow's ratio{'' if one else 's'} {slashed(r['paper_ratio'] for r in rows)} at $T = 64$. ")
            gains = [r["half_gain"] for r in rows if r["half_gain"] is not None]
            if gains:
                whom = "The full-head model" if len(gains) == 1 else "Every full-head model"
                text += (f"{whom} was still learning" if min(gains) >= BUDGET_TOLERANCE else
                         f"{'The' if len(gains) == 1 else 'Not every'} full-head model "
                         f"{'was not' if len(gains) == 1 else 'was'} still learning") + f" (half_gain {_span(gains)}). "
        judged = {k: v for k, v in self.prediction.items() if v is not None}
        seeds = f"seed{'s' * (len(p.rc_double_seeds) > 1)} {enumerated(p.rc_double_seeds)}"
        unjudged = [_STATEMENT_WORDS[k] for k, v in self.prediction.items() if v is None]
        text += ("\n\n**The prediction committed before these runs** (`RECIPE_PREDICTION`): "
                 + ("; ".join(f"{_STATEMENT_WORDS[k]}: {'held' if v else 'failed'}" for k, v in judged.items())
                    if judged else "no statement can be judged in this profile")
                 + (f"; not judged here: {enumerated(unjudged)}" if unjudged else "")
                 + ". It is " + {True: "observed", False: "not observed", None: "not yet judged in full"}[self.observed]
                 + "." + ("" if self.clipped["held"] is None else
                          f" **The candidate's prediction** (`CLIPPED_PREDICTION`, committed before its runs) is "
                          f"{'observed' if self.clipped['held'] else 'not observed'}: "
                          + "; ".join(f"{_CLIPPED_WORDS[k]}: {'held' if v else 'failed'}"
                                      for k, v in self.clipped.items() if k in _CLIPPED_WORDS) + ".")
                 + ("" if self.clipped_every_d is None else
                    " **Its prediction at every $D$** (`CLIPPED_EVERY_D_PREDICTION`, committed before its runs at "
                    f"$D = 2$) is {'observed' if self.clipped_every_d else 'not observed'}: the candidate "
                    f"{'meets' if self.clipped_every_d else 'does not meet'} the bars at every $[D, T]$ = "
                    + " / ".join(f"[{D}, {T}]" for D, T in CLIPPED_EVERY_D_CELLS) + ".")
                 + "\n\n" + (doubling_paragraph(self.doubling, f"the recipe runs of {seeds}") if p.rc_double_seeds else
                                "*(No doubling check under this profile: `rc_double_seeds` is empty.)*")
                 + ("\n\n" + doubling_paragraph(self.candidate_doubling, f"the candidate's runs of {seeds}")
                    if self.candidate_doubling.cells else ""))
        return text


def recipe_part(results: Results, p: IntrinsicDimensionParameters) -> RecipePart:
    """The recipe part of chapter 10's ``results`` under the parameters ``p``."""
    rows, by = recipe_table(results, p), ("arm", "D", "T", "h1", "h2")
    check, candidate = (doubling_check([r for r in results if r.tags.get("arm") == arm], by)
                        for arm in (p.rc_recipe, p.rc_candidate))
    return RecipePart(p, rows, check, candidate, recipe_prediction_check(rows, check),
                      clipped_check(rows, results, p), clipped_every_d_check(rows, p))
