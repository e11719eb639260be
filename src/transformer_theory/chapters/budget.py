"""Doubling checks: is a chapter's verdict a verdict on its budget only? (issue 34's rule, the book's reading of a
budget as sufficient). The cells a verdict rests on are trained once more with twice the steps; the budget is
**sufficient** for a cell when doubling it changes the cell's best NMSE by less than :data:`BUDGET_TOLERANCE` times.
Chapters 13 and 14 check their budgets this way; :func:`doubled` and :func:`doubling_check` do it for any chapter's
runs."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

from transformer_theory.chapters.experiment import ExperimentRun, Results, RunResult
from transformer_theory.tables import markdown_table, prose_number

__all__ = ["BUDGET_TOLERANCE", "DOUBLE_PART", "DoubledCell", "DoublingCheck", "budget_change", "doubled", "doubling_check",
           "doubling_paragraph", "doubling_reason", "split_doubled"]

#: A cell's budget is sufficient when doubling it changes its best NMSE by less than this factor.
BUDGET_TOLERANCE = 1.5
#: The ``part`` tag of the runs at twice the budget.
DOUBLE_PART = "double_budget"


def budget_change(once: float | None, twice: float | None) -> dict[str, Any]:
    """A cell's best NMSE at a budget (``once``) over its best NMSE at twice the budget (``twice``): ``change`` and
    ``sufficient`` (``change`` < :data:`BUDGET_TOLERANCE`), both ``None`` where a value is missing."""
    cell = DoubledCell({}, 0, once, twice)
    return {"change": cell.change, "sufficient": cell.sufficient}


def doubled(runs: Sequence[ExperimentRun], cell: Callable[[Mapping[str, Any]], bool]) -> list[ExperimentRun]:
    """The runs whose tags ``cell`` selects, once more at twice their steps (a curriculum's stage ends scaled with
    them; warm-up and everything else unchanged), tagged ``part`` = :data:`DOUBLE_PART`."""
    out = []
    for run in runs:
        if cell(run.tags):
            c = run.config
            config = replace(c, steps=2 * c.steps, term_stages=tuple(2 * s for s in c.term_stages))
            out.append(replace(run, tags={**run.tags, "part": DOUBLE_PART}, config=config))
    return out


def split_doubled(results: Results) -> tuple[list[RunResult], list[RunResult]]:
    """``results`` split into the chapter's own runs and those of its doubling check."""
    return ([r for r in results if r.tags.get("part") != DOUBLE_PART],
            [r for r in results if r.tags.get("part") == DOUBLE_PART])


@dataclass(frozen=True)
class DoubledCell:
    """One cell at its budget and at twice it: ``tags`` (the values naming the cell, seed included), the best NMSE
    ``nmse`` at ``steps`` and ``nmse_double`` at twice as many (``None``: diverged), their quotient ``change`` and
    ``sufficient`` (``change`` < :data:`BUDGET_TOLERANCE`; ``None`` where a value is missing)."""

    tags: dict[str, Any]
    steps: int
    nmse: float | None
    nmse_double: float | None

    @property
    def change(self) -> float | None:
        return None if self.nmse is None or not self.nmse_double else self.nmse / self.nmse_double

    @property
    def sufficient(self) -> bool | None:
        return None if self.change is None else self.change < BUDGET_TOLERANCE

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "change": self.change, "sufficient": self.sufficient}


@dataclass(frozen=True)
class DoublingCheck:
    """A chapter's doubling check: its doubled cells. The verdicts resting on them ``stand`` when every cell's budget
    is sufficient (``None``: no cell was doubled, or one lacks a value)."""

    cells: tuple[DoubledCell, ...]

    @property
    def stands(self) -> bool | None:
        flags = [c.sufficient for c in self.cells]
        return None if not flags or None in flags else all(flags)

    @property
    def max_change(self) -> float | None:
        changes = [c.change for c in self.cells if c.change is not None]
        return max(changes, default=None)

    def to_dict(self) -> dict[str, Any]:
        return {"cells": [c.to_dict() for c in self.cells], "stands": self.stands, "max_change": self.max_change}


def doubling_check(results: Results, by: Sequence[str]) -> DoublingCheck:
    """Pairs each run at twice the budget with the chapter's run of the same cell (the same ``by`` tags and seed).

    Raises:
        ValueError: a doubled run whose cell has no run at the chapter's budget.
    """
    own, twice = split_doubled(results)
    names = (*by, "seed")
    once = {tuple(repr(r.tags[k]) for k in names): r for r in own if all(k in r.tags for k in names)}
    cells = []
    for r in twice:
        key = tuple(repr(r.tags[k]) for k in names)
        if key not in once:
            raise ValueError(f"doubling check: the doubled cell {dict(zip(names, key))} has no run at the chapter's "
                             f"budget")
        base = once[key]
        cells.append(DoubledCell({k: r.tags[k] for k in names}, base.record.steps, base.best_nmse,
                                 r.best_nmse))
    return DoublingCheck(tuple(cells))


def doubling_reason(check: DoublingCheck) -> str:
    """A claim's reason on its doubling check: whether the cells it rests on had settled ("" without a check)."""
    if not check.cells:
        return ""
    unsettled = [c for c in check.cells if c.sufficient is False]
    return (f"; doubling the budget changed {len(unsettled)} of {len(check.cells)} of its cells by "
            f"{BUDGET_TOLERANCE:g}x or more (largest {prose_number(check.max_change)}x)"
            + (f": {'those cells were' if len(unsettled) > 1 else 'that cell was'} still learning, a verdict on this "
               "budget" if unsettled else ": the verdict stands"))


def doubling_paragraph(check: DoublingCheck, what: str) -> str:
    """The doubling check in words and as a table (MyST), for a chapter's reading; ``what`` names the cells (e.g. "the
    runs at FFN width 64 of seed 0")."""
    if not check.cells:
        return "*(No doubling check under this profile: `double_seeds` is empty.)*"
    unsettled = sum(c.sufficient is False for c in check.cells)
    steps = sorted({c.steps for c in check.cells})
    head = (f"**The doubling check.** {what[0].upper()}{what[1:]} were trained again with twice the steps "
            f"({' / '.join(str(2 * s) for s in steps)}): {unsettled} of {len(check.cells)} cells changed by "
            f"{BUDGET_TOLERANCE:g} times or more (the largest change {prose_number(check.max_change)} times), "
            + ("so the verdicts resting on them are verdicts on this budget: those cells were still learning."
               if unsettled else "so the verdicts resting on them stand at this budget."))
    rows = [{**c.tags, "NMSE": c.nmse, "NMSE at twice the steps": c.nmse_double, "change": c.change,
             "sufficient": c.sufficient} for c in check.cells]
    return head + "\n\n" + markdown_table(rows)
