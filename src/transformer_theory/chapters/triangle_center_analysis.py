"""Chapter 11's analysis (InfoFlow §4.2, the triangle center): everything the chapter shows and claims, computed once
from its runs (:func:`analyse`), its claim (:func:`verdicts`) and its reading in words (:func:`reading_paragraphs`),
so that the notebook only displays them (the runs, criteria, prediction and tables are in
:mod:`~transformer_theory.chapters.triangle_center`)."""

from __future__ import annotations

import itertools
import time
from dataclasses import asdict, dataclass
from operator import itemgetter
from typing import Any

import numpy as np

from transformer_theory.chapters.prose import significant
from transformer_theory.chapters.experiment import Results, training_seconds
from transformer_theory.chapters.budget import (DoublingCheck, doubling_check, doubling_paragraph, doubling_reason,
                                                split_doubled)
from transformer_theory.chapters.triangle_center import (LEARNED_MAX_NMSE, NEAR_ONE_MIN_NMSE, PAPER_CONFIG, STILL_LEARNING,
                                                         TriangleCenterParameters, budget_table,
                                                         calculator_predictions, comparison_growth,
                                                         equal_budget_observed, judge, nmse_table, paper_key)
from transformer_theory.chapters.verdicts import Claim
from transformer_theory.infoflow import targets
from transformer_theory.training.store import RunStore

__all__ = ["TargetCheck", "TriangleCenterAnalysis", "analyse", "reading_paragraphs", "recorded",
           "target_check", "verdicts"]


@dataclass(frozen=True)
class TargetCheck:
    """The vectorised target against a loop over all triples (``max_diff``, 40 samples at T = 6) and its cost at
    T = 64 (``seconds`` for 1024 samples), with those samples' token norms and target values."""

    max_diff: float
    seconds: float
    norm_min: float
    norm_max: float
    target_mean: float
    target_std: float


def target_check(squared: bool, seed: int) -> TargetCheck:
    """The triangle-center target (InfoFlow §4.2) checked against the definition, a loop over all ``T^3`` triples,
    and timed at T = 64, on inputs drawn from ``numpy.random.default_rng(seed)``."""
    tree = targets.triangle_center(squared)
    rng = np.random.default_rng(seed)
    small = tree.sample_inputs(40, 6, rng)
    power = 2 if squared else 1
    triples = list(itertools.product(range(6), repeat=3))
    loop = np.array([min(np.linalg.norm(x[a] + x[b] + x[c]) ** power for a, b, c in triples) for x in small])
    long = tree.sample_inputs(1024, 64, rng)
    start = time.perf_counter()
    y = tree(long)
    seconds = time.perf_counter() - start
    norms = np.linalg.norm(long, axis=-1)
    return TargetCheck(float(np.max(np.abs(tree(small) - loop))), seconds, float(norms.min()), float(norms.max()),
                       float(y.mean()), float(y.std()))


@dataclass(frozen=True)
class TriangleCenterAnalysis:
    """Everything chapter 11 shows and claims, computed once from its runs (:func:`analyse`): the target check, the
    comparison count against each configuration's capacity (``growth``), the calculator's ``predictions``, the NMSE
    ``table`` (each row with its ``comparison_ratio``), the criteria (``criteria``, :func:`~.triangle_center.judge`),
    the equal-budget prediction (``equal_budget``; ``None`` with fewer than three lengths), the budget check
    (``budget``), the cells still learning, the configurations' spread by T (largest over smallest NMSE) and the
    numbers the prose quotes (``reading``, by name: the notebook glues them)."""

    params: TriangleCenterParameters
    n_runs: int
    training_seconds: float
    target: TargetCheck
    growth: list[dict[str, Any]]
    predictions: list[dict[str, Any]]
    table: list[dict[str, Any]]
    criteria: dict[str, Any]
    equal_budget: dict[str, Any] | None
    budget: list[dict[str, Any]]
    still_learning: list[dict[str, Any]]
    spread: dict[int, float]
    doubling: DoublingCheck
    reading: dict[str, Any]

    @property
    def by_length(self) -> list[dict[str, Any]]:
        """The NMSE table's rows by T, then configuration (the order the chapter prints them in)."""
        return sorted(self.table, key=itemgetter("T", "h1", "h2", "E"))

    @property
    def longer_budget(self) -> list[dict[str, Any]]:
        """The budget check's rows longer than the shortest T (those the claim's "settled" reads)."""
        return [r for r in self.budget if r["T"] > self.criteria["shortest_T"]]


def _span(values: list[float]) -> tuple[float, float]:
    return min(values), max(values)


def _reading(p: TriangleCenterParameters, table: list[dict[str, Any]], budget: list[dict[str, Any]],
             spread: dict[int, float]) -> dict[str, Any]:
    """The numbers the chapter's prose quotes, by name (ranges as ``(smallest, largest)``, per T keyed by T)."""
    lengths = sorted(spread)
    shortest = lengths[0]
    at = {T: [r for r in table if r["T"] == T] for T in lengths}
    ranked = sorted(at[shortest], key=itemgetter("nmse"))
    best, worst = ranked[0], ranked[-1]
    gains = [r["half_gain"] for r in at[shortest] if r["half_gain"] is not None]
    out: dict[str, Any] = {
        "steps": p.steps, "train_size": p.train_size, "reference_steps": list(p.reference_steps),
        "reference_train_size": p.reference_train_size, "n_seeds": len(p.seeds), "lengths": lengths,
        "nmse_range": {T: _span([r["nmse"] for r in at[T]]) for T in lengths},
        "paper_range": {T: _span(paper) for T in lengths if (paper := [r["paper_nmse"] for r in at[T]
                                                                       if r["paper_nmse"] is not None])},
        "best_shortest": paper_key(best["h1"], best["h2"], best["E"]), "best_shortest_nmse": best["nmse"],
        "worst_shortest": paper_key(worst["h1"], worst["h2"], worst["E"]), "worst_shortest_nmse": worst["nmse"],
        "spread_shortest": spread[shortest], "spread_longer_max": max(spread[T] for T in lengths[1:]),
        "half_gain_shortest": _span(gains) if gains else None,
        "half_gain_longer_max": max((r["half_gain"] for r in table if r["T"] > shortest and r["half_gain"] is not None),
                                    default=None)}
    over_paper = [r["nmse"] / r["paper_nmse"] for r in at[shortest] if r["paper_nmse"]]
    if over_paper:
        out["shortest_over_paper"] = _span(over_paper)
    changes = {short: [r["change"] for r in budget if (r["T"] == shortest) == short and r["change"] is not None]
               for short in (True, False)}
    if changes[True]:
        out["change_shortest"] = _span(changes[True])
    if changes[False]:
        out["change_longer_max"] = max(changes[False])
    return out


def analyse(results: Results, p: TriangleCenterParameters, store: RunStore | None = None) -> TriangleCenterAnalysis:
    """Chapter 11's analysis of its runs' ``results`` (no claim reads weights: ``store`` is unused)."""
    parameters = p.settings()
    doubling = doubling_check(results, ["h1", "h2", "E", "T", "steps"])
    n_runs, seconds = len(results), training_seconds(results)  # the doubling check's runs included
    results = split_doubled(results)[0]
    table = nmse_table(results, parameters)
    growth = comparison_growth(p.seq_lens, p.configs)
    ratio = {(g["T"], paper_key(*c)): g[f"ratio {paper_key(*c)}"] for g in growth for c in p.configs}
    for row in table:
        row["comparison_ratio"] = ratio[(row["T"], paper_key(row["h1"], row["h2"], row["E"]))]
    budget = budget_table(results, parameters)
    spread = {T: max(r["nmse"] for r in table if r["T"] == T) / min(r["nmse"] for r in table if r["T"] == T)
              for T in p.seq_lens}
    return TriangleCenterAnalysis(
        params=p, n_runs=n_runs, training_seconds=seconds,
        target=target_check(p.squared, p.seeds[0]), growth=growth, predictions=calculator_predictions(parameters),
        table=table, criteria=judge(table),
        equal_budget=equal_budget_observed(table) if len(p.seq_lens) >= 3 else None, budget=budget,
        still_learning=[r for r in table if r["half_gain"] is not None and r["half_gain"] >= STILL_LEARNING],
        spread=spread, doubling=doubling, reading=_reading(p, table, budget, spread))


def recorded(a: TriangleCenterAnalysis) -> dict[str, Any]:
    """The values the chapter records (``record(name, value)``, its results file's ``values``), by name: the target
    check, the tables (the NMSE table's and the predictions' main columns), the criteria, the equal-budget prediction,
    the budget check, the cells still learning, the spread by T, and ``analysis`` (``reading`` and ``target``)."""
    return {
        "target_check_max_diff": a.target.max_diff, "target_seconds_T64_1024": a.target.seconds,
        "comparison_growth": a.growth,
        "predictions": [{k: r[k] for k in ("h1", "h2", "E", "T", "predicted_efficient", "predicted_exponent")}
                        for r in a.predictions],
        "learned_max_nmse": LEARNED_MAX_NMSE, "near_one_min_nmse": NEAR_ONE_MIN_NMSE,
        "nmse_table": [{k: r[k] for k in ("h1", "h2", "E", "T", "nmse", "half_gain", "paper_nmse")} for r in a.table],
        "n_runs": a.n_runs, "training_wall_time_s": a.training_seconds, "criteria": a.criteria,
        "equal_budget_prediction": a.equal_budget, "budget_check": a.budget,
        "still_learning": [{k: r[k] for k in ("h1", "h2", "E", "T", "half_gain")} for r in a.still_learning],
        "configuration_spread": a.spread, "analysis": {"reading": a.reading, "target": asdict(a.target)},
        "doubling_check": a.doubling.to_dict()}


def verdicts(a: TriangleCenterAnalysis) -> list[Claim]:
    """Chapter 11's claim (InfoFlow §4.2 as summarised): the triangle center is not learnable at long T whatever the
    heads and width. Reproduced when both criteria and the equal-budget prediction hold and every cell longer than the
    shortest T had settled (the budget check); not judged without the paper's configuration :data:`PAPER_CONFIG`,
    three lengths or a budget check."""
    rows = [r for r in a.table if (r["h1"], r["h2"], r["E"]) == PAPER_CONFIG and r["paper_nmse"] is not None]
    longer = a.longer_budget
    if not rows or a.equal_budget is None or not longer:
        return []
    settled = all(r["settled"] for r in longer)
    held = a.criteria["observed"] and a.equal_budget["observed"] and settled
    unsettled = sum(not r["settled"] for r in longer)
    paper = f"NMSE {' / '.join(significant(r['paper_nmse']) for r in rows)} at T = {' / '.join(str(r['T']) for r in rows)}"
    budget = ("every cell had settled" if settled else
              f"{unsettled} of {len(longer)} cells changed by {STILL_LEARNING:g} times or more")
    return [Claim(
        "11_triangle_center", "InfoFlow, §4.2", "the triangle center is not learnable at long T, whatever the heads and "
        "width", "summaries", paper, " / ".join(significant(r["nmse"]) for r in rows),
        "reproduced" if held else "not observed",
        f"one budget ({a.params.steps} steps) at every T; from T = {a.reading['lengths'][1]} on the configurations "
        f"differ by at most {(a.reading['spread_longer_max'] - 1):.1%} and {budget} (budget check)"
        + doubling_reason(a.doubling))]


def _range(span: tuple[float, float], fmt: str = ".3f") -> str:
    lo, hi = (format(x, fmt) for x in span)
    return lo if lo == hi else f"{lo} to {hi}"


def _observed(flag: bool) -> str:
    return "observed" if flag else "not observed"


def _results(a: TriangleCenterAnalysis, learned: bool) -> str:
    """The NMSE by T beside the paper's, the prediction's and the criteria's verdicts."""
    r, e, lengths = a.reading, a.equal_budget, a.reading["lengths"]
    both = a.criteria["observed"] and e is not None and e["observed"]
    paper = [f"{_range(r['paper_range'][T])} at $T = {T}$" for T in lengths[1:] if T in r["paper_range"]]
    shortest = lengths[0]
    return (
        f"**At one budget, the paper's table is {'reproduced' if both else 'not reproduced'} from $T = {lengths[1]}$ "
        f"on.** With {r['steps']} steps on {r['train_size']} samples at every $T$, the configurations' best NMSE is "
        + ", ".join(f"{_range(r['nmse_range'][T])} at $T = {T}$" for T in lengths)
        + (". The paper reports " + ", ".join(paper) if paper else "")
        + ". The prediction committed before these runs (the NMSE rises with $T$, stays at least "
          f"{NEAR_ONE_MIN_NMSE:g} at the largest $T$ and is above {LEARNED_MAX_NMSE:g} at the second) is "
        + ("not judged here (fewer than three lengths)" if e is None else _observed(e["observed"]))
        + f", and the chapter's two criteria are {_observed(a.criteria['observed'])}. "
        + (f"At $T = {shortest}$ the models {'learn' if learned else 'do not all learn'} the target, with an NMSE "
           f"{_range(r['shortest_over_paper'], '.1f')} times the paper's ({_range(r['paper_range'][shortest])}). "
           "The paper's budget is not known." if "shortest_over_paper" in r else ""))


def _budget(a: TriangleCenterAnalysis, learned: bool) -> str:
    """The budget check in words: whether the cells longer than the shortest T had settled, and what that says of
    the jump from the shortest T to the next."""
    r, lengths = a.reading, a.reading["lengths"]
    if "change_longer_max" not in r:
        return "*(No budget check in this profile: `reference_steps` is empty.)*"
    shortest, second = lengths[0], lengths[1]
    settled = all(x["settled"] for x in a.longer_budget)
    gains = r["half_gain_shortest"]
    if settled and learned:
        conclusion = f"So the jump from $T = {shortest}$ to $T = {second}$ is a jump in $T$, not in budget."
    elif settled:
        conclusion = f"Not every configuration learns at $T = {shortest}$ at this budget: there is no jump to read."
    else:
        conclusion = "So the table does not separate the effect of $T$ from that of the budget."
    return (
        f"**The verdicts at $T \\ge {second}$ rest on {'settled cells' if settled else 'cells still learning'}.** "
        f"Between {' and '.join(map(str, r['reference_steps']))} steps on {r['reference_train_size']} samples and "
        f"{r['steps']} steps on {r['train_size']} samples, every cell at $T \\ge {second}$ changed by at most "
        f"{r['change_longer_max']:.2f} times. The book's rule asks a doubling of the budget to change a cell by less "
        f"than {STILL_LEARNING:g} times. "
        + (f"No run at $T \\ge {second}$ lowered its best NMSE by more than {r['half_gain_longer_max']:.2f} times "
           "over the second half of its schedule. " if r["half_gain_longer_max"] is not None else "")
        + (f"The cells at $T = {shortest}$ changed {_range(r['change_shortest'], '.1f')} times between the two "
           f"budgets. Their `half_gain` ({_range(gains, '.2f')}) is {'' if gains[1] < STILL_LEARNING else 'not '}"
           f"under {STILL_LEARNING:g}"
           + (f", and their criterion (NMSE $\\le {LEARNED_MAX_NMSE:g}$) is a bound that more training keeps. "
              if learned else ". ") if "change_shortest" in r and gains else "")
        + conclusion + "\n\n" + doubling_paragraph(
            a.doubling, f"the runs of the paper's configuration {PAPER_CONFIG} at $T > {shortest}$, seed"
                        f"{'s' * (len(a.params.double_seeds) > 1)} {' and '.join(map(str, a.params.double_seeds))},"))


def _configurations(a: TriangleCenterAnalysis) -> str:
    """Whether more heads or a wider E help: the configurations' spread by T and who learns past the shortest T."""
    r, lengths = a.reading, a.reading["lengths"]
    learned_longer = [x for x in a.table if x["T"] > lengths[0] and x["nmse"] <= LEARNED_MAX_NMSE]
    bar = f"the learned bar (NMSE $\\le {LEARNED_MAX_NMSE:g}$)"
    seeds = "one seed" if r["n_seeds"] == 1 else f"{r['n_seeds']} seeds"
    return (
        f"**More heads or a wider $E$ {'help' if learned_longer else 'do not help'}, at this budget.** "
        f"At $T \\ge {lengths[1]}$ the {len(a.params.configs)} configurations end within "
        f"{100 * (r['spread_longer_max'] - 1):.1f} % of one another"
        + (f", and none gets off its plateau near 1 to {bar}, which is how the summaries read the paper's table. "
           if not learned_longer else
           "; " + ", ".join(f"{paper_key(x['h1'], x['h2'], x['E'])} at $T = {x['T']}$" for x in learned_longer)
           + f" reach {bar}. ")
        + f"At $T = {lengths[0]}$ the {r['best_shortest']} model is best: {r['best_shortest_nmse']:.3f}, against "
          f"{r['worst_shortest_nmse']:.3f} for {r['worst_shortest']}, a factor of {r['spread_shortest']:.2f}. Two "
          "limits remain. The experiment shows the NMSE approaching 1, the prediction's qualitative content, but not a "
          f"rate or an exponent. And each cell has {seeds}.")


def reading_paragraphs(a: TriangleCenterAnalysis) -> dict[str, str]:
    """The chapter's reading of its results as MyST paragraphs, by name (``criteria``, ``prediction``, ``results``,
    ``budget``, ``configurations``), every number and verdict-dependent word computed from ``a`` (the notebook glues
    them, so a page executed under any profile says what its own tables show)."""
    c, e = a.criteria, a.equal_budget
    shortest, largest, second = c["shortest_T"], c["largest_T"], a.reading["lengths"][1]
    learned = all(v["learned"] for v in c["configs"].values())
    said = {True: "met", False: "**not met**"}
    out = {"criteria": "**The criteria, configuration by configuration:** " + "; ".join(
        f"{key}: learns at $T = {shortest}$ (NMSE $\\le {LEARNED_MAX_NMSE:g}$) {said[v['learned']]}, near the "
        f"trivial predictor at $T = {largest}$ (NMSE $\\ge {NEAR_ONE_MIN_NMSE:g}$) {said[v['near_one']]}"
        for key, v in c["configs"].items()) + f". Both criteria are **{_observed(c['observed'])}**."}
    if e is None:
        out["prediction"] = "*(The prediction needs three sequence lengths or more; this profile has fewer.)*"
    else:
        names = {"rises": "rises with $T$", "near_one": f"at least {NEAR_ONE_MIN_NMSE:g} at $T = {largest}$",
                 "above_at_second": f"above {LEARNED_MAX_NMSE:g} at $T = {second}$"}
        out["prediction"] = "**The prediction, configuration by configuration:** " + "; ".join(
            f"{key}: " + ", ".join(f"{names[k]} {'yes' if held else '**no**'}" for k, held in v.items())
            for key, v in e["configs"].items()) + f". As a whole it is **{_observed(e['observed'])}**."
    return {**out, "results": _results(a, learned), "budget": _budget(a, learned),
            "configurations": _configurations(a)}
