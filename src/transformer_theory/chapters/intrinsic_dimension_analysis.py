"""Chapter 10's analysis (InfoFlow §4.1, intrinsic dimension; the predecessor's Table 2, one layer): everything the
chapter shows and claims, computed once from its runs (:func:`analyse`), its claims (:func:`verdicts`) and its
reading in words (:func:`reading_paragraphs`), so that the notebook only displays them (the runs, the tables and the
criteria fixed before the runs are in :mod:`~transformer_theory.chapters.intrinsic_dimension`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from transformer_theory.chapters.prose import enumerated, significant, slashed
from transformer_theory.tables import prose_number
from transformer_theory.chapters.budget import BUDGET_TOLERANCE, DOUBLE_PART
from transformer_theory.chapters.calibration import CalibrationParameters
from transformer_theory.chapters.experiment import (Results, book_efficiency, criterion_changes, curve_summary,
                                                    efficiency_reason, training_seconds)
from transformer_theory.chapters.intrinsic_dimension import (MIN_RATIOS, RETRIEVAL_THRESHOLD,
                                                             IntrinsicDimensionParameters,
                                                             claim_verdicts, head_count_table, nmse_table,
                                                             prediction_table, ratio_rises_with_length,
                                                             ratios_during_training, retrieval_table,
                                                             separation_ratios, sequence_length_table)
from transformer_theory.chapters.intrinsic_dimension_recipe import RecipePart, recipe_part
from transformer_theory.chapters.verdicts import Claim
from transformer_theory.infoflow.efficiency import SIBLING_GAP
from transformer_theory.training.store import RunStore

__all__ = ["CONFIGS", "LONG_SCHEDULE_ESTIMATE", "IntrinsicDimensionAnalysis", "analyse", "reading_paragraphs",
           "verdicts"]

CHAPTER = "10_intrinsic_dimension"

#: The longer schedule's estimate of its ratio at each D, written with its prediction before its runs (the chapter's
#: section on the longer schedule gives the reasoning); the reading says where it was too low or too high.
LONG_SCHEDULE_ESTIMATE: dict[int, float] = {2: 5.0, 3: 5.0, 4: 3.0}

#: The configuration names of the sequence-length part, in the order its tables show them.
CONFIGS = ("(D,D)", "(D-1,D)", "(D,D-1)")


@dataclass(frozen=True)
class IntrinsicDimensionAnalysis:
    """Everything chapter 10 shows and claims, computed once from its runs (:func:`analyse`): the calculator's
    ``predictions``, the §4.1 ``table`` and its ``ratios`` (with the ratios ``during`` training and the validation
    ``curves`` by D), the ``retrieval`` count of the full-head models, the sequence-length part (``length``,
    ``length_rising``, the book's criterion on it: ``efficiency``), the longer schedule (prefix ``long_``), the
    single-layer ``head_count`` table, the ``recipe`` part (the §4.1 cells on a from-scratch recipe and its control), the
    ``half_gain`` of every two-layer run of the first three parts, the longest task of each part
    (``task_minutes``), whether every main run reached its best NMSE in the last tenth of its schedule
    (``best_late``), the chapter's ``claims`` and
    ``reading`` (every number its prose quotes, by name: the notebook glues them)."""

    params: IntrinsicDimensionParameters
    n_runs: int
    training_seconds: float
    predictions: list[dict[str, Any]]
    table: list[dict[str, Any]]
    ratios: list[dict[str, Any]]
    during: list[dict[str, Any]]
    curves: dict[int, list[dict[str, Any]]]
    retrieval: list[dict[str, Any]]
    length: list[dict[str, Any]]
    length_rising: dict[str, bool | None]
    efficiency: list[dict[str, Any]]
    long_table: list[dict[str, Any]]
    long_ratios: list[dict[str, Any]]
    long_same_seed_ratio: dict[int, float | None]
    long_during: list[dict[str, Any]]
    long_curves: dict[int, list[dict[str, Any]]]
    long_retrieval: list[dict[str, Any]]
    head_count: list[dict[str, Any]]
    recipe: RecipePart
    half_gain: dict[tuple[str, int, int, int, int, int], float]
    task_minutes: dict[str, float]
    best_late: bool
    claims: dict[str, bool]
    reading: dict[str, Any]

    @property
    def full(self) -> dict[int, dict[str, Any]]:
        """The (D, D) row of :attr:`table` of each D."""
        return {r["D"]: r for r in self.table if r["h1"] == r["h2"] == r["D"]}

    @property
    def criteria_met(self) -> dict[int, bool | None]:
        """The bars of :data:`~transformer_theory.chapters.intrinsic_dimension.MIN_RATIOS`, by D, on the main part."""
        return {s["D"]: s["met"] for s in self.ratios if s["bar"] is not None}

    @property
    def long_criteria_met(self) -> dict[int, bool | None]:
        """The same bars on the longer schedule."""
        return {s["D"]: s["met"] for s in self.long_ratios if s["bar"] is not None}

    @property
    def rising(self) -> dict[int, bool]:
        """Whether the ratio of each D never fell from one quarter of the schedule to the next."""
        at = {(r["D"], r["fraction"]): r["ratio"] for r in self.during}
        fractions = sorted({r["fraction"] for r in self.during})
        return {D: all(at[D, a] is not None and at[D, b] is not None and at[D, b] >= at[D, a]
                       for a, b in zip(fractions, fractions[1:])) for D in self.params.D_values}

    @property
    def length_observed(self) -> bool:
        """The sequence-length prediction: the ratio rises strictly from each trained T to the next."""
        return all(v is True for v in self.length_rising.values())

    @property
    def long_wider(self) -> dict[int, bool]:
        """The longer schedule's prediction, by D: a larger ratio than the main part's."""
        short = {s["D"]: s["ratio"] for s in self.ratios}
        return {s["D"]: s["ratio"] is not None and short.get(s["D"]) is not None and s["ratio"] > short[s["D"]]
                for s in self.long_ratios}

    @property
    def worse_every_seed(self) -> dict[int, bool]:
        """Whether every seed of both missing-head configurations ends above every (D, D) seed, by D."""
        full = self.full
        return {D: all(v > max(full[D]["seed_nmse"].values()) for r in self.table if r["D"] == D and r is not full[D]
                       for v in r["seed_nmse"].values()) for D in full}

    @property
    def retrieved_terms_by_layer(self) -> dict[str, int]:
        """How many terms' best head reaches the retrieval threshold in each layer, summed over the (D, D) models."""
        return {layer: sum(v >= RETRIEVAL_THRESHOLD for r in self.retrieval for v in r[layer])
                for layer in ("layer1", "layer2")}

    @property
    def head_count_drops(self) -> dict[int, dict[str, float]]:
        """``NMSE(h) / NMSE(h + 1)`` of the head-count table at each T (rounded to 0.1)."""
        out = {}
        for T in self.params.hc_seq_lens:
            rows = [r for r in self.head_count if r["T"] == T]
            out[T] = {f"{a['h']}->{b['h']}": round(a["nmse"] / b["nmse"], 1) for a, b in zip(rows, rows[1:])}
        return out

    @property
    def complete(self) -> bool:
        """Every cell of the main table, the longer schedule and the head count has a finite NMSE."""
        return all(r["nmse"] is not None for r in self.table + self.long_table + self.head_count)

    @property
    def efficiency_changes(self) -> list[str]:
        """The configurations whose verdict the calibrated criterion changed (expected: none)."""
        return criterion_changes(self.efficiency, ["configuration"])

    def recorded(self) -> dict[str, Any]:
        """The values the chapter records, by name (the committed tests and the claims page read them)."""
        keys = ("D", "h1", "h2")
        return {
            "predictions": [{k: r[k] for k in (*keys, "predicted_efficient", "predicted_exponent")}
                            for r in self.predictions],
            "min_ratios": {str(D): v for D, v in MIN_RATIOS.items()},
            "nmse_table": [{k: r[k] for k in (*keys, "nmse", "paper_nmse", "predicted_efficient")} for r in self.table],
            "separation_ratios": self.ratios, "n_runs": self.n_runs, "training_wall_time_s": self.training_seconds,
            "criteria_met": {str(D): v for D, v in self.criteria_met.items()},
            "directions": {str(s["D"]): s["ratio"] is not None and s["ratio"] > 1 for s in self.ratios},
            "ratios_during_training": self.during, "ratio_rising": {str(D): v for D, v in self.rising.items()},
            "retrievals": [{k: r[k] for k in ("D", "seed", "learned", "layer1", "layer2")} for r in self.retrieval],
            "retrieved_terms_by_layer": self.retrieved_terms_by_layer,
            "sequence_length_exponents": {str(r["T"]): r["exponents"] for r in self.length},
            "sequence_length_table": [{k: r[k] for k in ("T", "nmse", "ratio", "exponents")} for r in self.length],
            "sequence_length_rising": self.length_rising, "sequence_length_observed": self.length_observed,
            "book_efficiency": self.efficiency,
            "long_schedule_table": [{k: r[k] for k in (*keys, "nmse", "seed_nmse")} for r in self.long_table],
            "long_schedule_ratios": self.long_ratios,
            "long_schedule_criteria_met": {str(D): v for D, v in self.long_criteria_met.items()},
            "long_schedule_wider": {str(D): v for D, v in self.long_wider.items()},
            "long_schedule_same_seed_ratio_at_steps": {str(D): v for D, v in self.long_same_seed_ratio.items()},
            "long_schedule_ratios_during_training": self.long_during,
            "long_schedule_retrievals": [{k: r[k] for k in ("D", "seed", "learned", "layer1", "layer2")}
                                         for r in self.long_retrieval],
            "head_count_table": [{k: r[k] for k in ("T", "h", "nmse", "paper_nmse", "predicted_efficient")}
                                 for r in self.head_count],
            "head_count_drops": self.head_count_drops,
            **self.recipe.recorded(),
            "missing_head_worse_every_seed": {str(D): v for D, v in self.worse_every_seed.items()},
            "half_gain_range": [min(self.half_gain.values()), max(self.half_gain.values())],
            "claims": self.claims, "analysis": {"reading": self.reading, "efficiency_changes": self.efficiency_changes},
            "verdicts": [c.to_dict() for c in verdicts(self)]}


def _curves(results: Results, part: str) -> dict[int, list[dict[str, Any]]]:
    """The validation curves of ``part``'s runs by D, in the form of
    :func:`~transformer_theory.plotting.intrinsic_dimension.plot_validation_curves`."""
    out: dict[int, list[dict[str, Any]]] = {}
    for r in results:
        t, history = r.tags, r.record.history
        if t["part"] == part:
            out.setdefault(t["D"], []).append({"label": f"({t['h1']}, {t['h2']}) seed {t['seed']}",
                                               "group": f"({t['h1']}, {t['h2']})", "steps": list(history.step),
                                               "nmse": list(history.val_nmse)})
    return dict(sorted(out.items()))


def analyse(results: Results, p: IntrinsicDimensionParameters, store: RunStore) -> IntrinsicDimensionAnalysis:
    """Chapter 10's analysis of its runs' ``results`` (``store``: the weights the retrieval count reads)."""
    table, long_table = nmse_table(results, p), nmse_table(results, p, "long_schedule")
    ratios, long_ratios = separation_ratios(table), separation_ratios(long_table)
    length = sequence_length_table(results, p)
    long_seeds = {(r.tags["D"], r.tags["seed"]) for r in results if r.tags["part"] == "long_schedule"}
    same_seeds = [r for r in results if r.tags["part"] == "intrinsic_dimension"
                  and (r.tags["D"], r.tags["seed"]) in long_seeds]
    rising = ratio_rises_with_length(length)
    sl_rows = [{"configuration": c, "D": r["D"], "T": r["T"], "nmse": r["nmse"][c],
                "predicted_efficient": c == CONFIGS[0]}
               for r in length for c in r["nmse"]]
    tasks: dict[str, dict[str, float]] = {}
    for r in results:
        tasks.setdefault(r.tags["part"], {})[r.record.task["key"]] = r.record.wall_time_s / 60
    analysis = IntrinsicDimensionAnalysis(
        params=p, n_runs=len(results), training_seconds=training_seconds(results), predictions=prediction_table(p),
        table=table, ratios=ratios, during=ratios_during_training(results, p),
        curves=_curves(results, "intrinsic_dimension"),
        retrieval=retrieval_table(p, store, n_samples=1024, seed=p.seeds[0]), length=length, length_rising=rising,
        efficiency=book_efficiency(sl_rows, ["configuration"], siblings=["D"]), long_table=long_table,
        long_ratios=long_ratios,
        long_same_seed_ratio={s["D"]: s["ratio"] for s in separation_ratios(nmse_table(same_seeds, p))},
        long_during=ratios_during_training(results, p, part="long_schedule"),
        long_curves=_curves(results, "long_schedule"),
        long_retrieval=retrieval_table(p, store, n_samples=1024, seed=p.seeds[0], part="long_schedule"),
        head_count=head_count_table(results, p), recipe=recipe_part(results, p),
        half_gain={(t["part"], t["D"], t["T"], t["h1"], t["h2"], t["seed"]): g for r in results
                   if (t := r.tags)["part"] not in ("head_count", "recipe", DOUBLE_PART)
                   and (g := curve_summary(r.record)["half_gain"]) is not None},
        task_minutes={part: max(times.values()) for part, times in tasks.items()},
        best_late=all(r.record.best_step >= 0.9 * r.record.steps for r in results
                      if r.tags["part"] == "intrinsic_dimension"),
        claims=claim_verdicts(ratios, rising, long_ratios), reading={})
    return replace(analysis, reading=_reading(analysis))


def _Ds(Ds: Sequence[int]) -> str:
    """``$D = 2$``, ``$D = 3$ and $4$``."""
    return "$D = " + enumerated([f"{D}$" if i == 0 else f"${D}$" for i, D in enumerate(Ds)]) if Ds else "no $D$"


def _reading(a: IntrinsicDimensionAnalysis) -> dict[str, Any]:
    """The numbers the chapter's prose quotes, by name (``None`` where a part they need has no value)."""
    p, full = a.params, a.full
    ratios = [s["ratio"] for s in a.ratios if s["ratio"] is not None]
    over_paper = [r["nmse"] / r["paper_nmse"] for r in full.values() if r["nmse"] and r["paper_nmse"]]
    missing = [r["nmse_missing"] for r in a.length if r["nmse_missing"] is not None]
    full_gains = [g for (part, D, T, h1, h2, seed), g in a.half_gain.items() if (h1, h2) == (D, D)]
    long_full = {s["D"]: s["nmse_full"] for s in a.long_ratios}
    factors = [full[D]["nmse"] / v for D, v in long_full.items() if v and full.get(D, {}).get("nmse")]
    checked = (p.ls_check_D or p.ls_D_values)[0]
    first = {r["config"]: r["seed_nmse"].get(p.ls_seeds[0]) for r in a.long_table if r["D"] == checked}
    first_ratio = (min(first["(D-1,D)"], first["(D,D-1)"]) / first["(D,D)"]
                   if None not in first.values() and first else None)
    hc_rows = [r for r in a.head_count if r["T"] == p.hc_seq_lens[0]]
    over_p1 = [r["nmse"] / r["paper_nmse"] for r in hc_rows if r["h"] >= p.hc_D - 1 and r["paper_nmse"] and r["nmse"]]
    gains = list(a.half_gain.values())
    D = min(p.D_values)
    retrieved = {x["seed"]: x["learned"] for x in a.retrieval if x["D"] == D}
    nmse = {s: v for s, v in full[D]["seed_nmse"].items() if s in retrieved and v is not None}
    best = min(nmse, key=nmse.get) if len(nmse) > 1 else None
    return {"T": p.seq_len, "steps": p.steps, "ls_steps": p.ls_steps, "long_times": p.ls_steps / p.steps,
            "task_minutes_max": a.task_minutes.get("intrinsic_dimension"),
            "long_task_minutes_max": a.task_minutes.get("long_schedule"),
            "ratio_min": min(ratios, default=None), "ratio_max": max(ratios, default=None),
            "full_over_paper_min": min(over_paper, default=None), "full_over_paper_max": max(over_paper, default=None),
            "length_ratios": [r["ratio"] for r in a.length],
            "missing_spread": max(missing) / min(missing) if missing else None,
            "half_gain_min": min(gains, default=None), "half_gain_max": max(gains, default=None),
            "half_gain_full_min": min(full_gains, default=None),
            "long_checked_D": checked, "long_first_seed_ratio": first_ratio,
            "long_first_seed_met": None if first_ratio is None or checked not in MIN_RATIOS
            else first_ratio >= MIN_RATIOS[checked],
            "long_full_factor_min": min(factors, default=None), "long_full_factor_max": max(factors, default=None),
            "long_growth": {s["D"]: s["ratio"] / a.long_same_seed_ratio[s["D"]] for s in a.long_ratios
                            if s["ratio"] and a.long_same_seed_ratio.get(s["D"])},
            "hc_budget_times": CalibrationParameters().steps / p.hc_steps,
            "hc_over_p1_min": min(over_p1, default=None), "hc_over_p1_max": max(over_p1, default=None),
            "retrieved_most": max((r["learned"] for r in a.retrieval), default=None),
            "layer1_above_init": all(sum(x["layer1"]) > sum(x["init_layer1"]) for x in a.retrieval),
            "best_seed_D": D, "best_seed_retrieves_most": None if best is None else all(
                retrieved[best] > v for s, v in retrieved.items() if s != best),
            "best_late": a.best_late,
            **{f"{layer}_heads": n for layer, n in a.retrieved_terms_by_layer.items()}}


def verdicts(a: IntrinsicDimensionAnalysis) -> list[Claim]:
    """Chapter 10's claims (:class:`~transformer_theory.chapters.verdicts.Claim`): InfoFlow §4.1's phase transition at
    h_1 = h_2 = D against the chapter's bars (:data:`~transformer_theory.chapters.intrinsic_dimension.MIN_RATIOS`),
    and the calculator's prediction that the missing-head penalty grows with T (the sequence-length part); a claim
    whose runs the parameters leave out is left out."""
    out = []
    rows = [s for s in a.ratios if s["bar"] is not None]
    if rows and all(s["ratio"] is not None for s in rows):
        short = [s["nmse_full"] / a.full[s["D"]]["paper_nmse"] for s in rows]
        out.append(Claim(
            CHAPTER, "InfoFlow, §4.1", "a phase transition at h_1 = h_2 = D (intrinsic dimension)", "summaries",
            f"missing-head / full-head NMSE {slashed(s['paper_ratio'] for s in rows)} at D = "
            f"{', '.join(str(s['D']) for s in rows)} (T = 64)",
            f"{slashed(s['ratio'] for s in rows)} (T = {a.params.seq_len}, not the paper's 64)",
            "reproduced" if all(a.criteria_met.values()) else "not observed",
            f"our bars {slashed(s['bar'] for s in rows)}; our (D,D) NMSE is {slashed(short)} times the paper's: a verdict "
            "on our training (chapter 13)"))
    r, rising = a.reading, list(a.length_rising.values())
    if len(a.length) > 1 and None not in r["length_ratios"] and r["half_gain_min"] is not None:
        trend = "rises" if all(rising) else "falls" if not any(rising) else "does not rise at every step"
        out.append(Claim(
            CHAPTER, "this book's calculator (a prediction, not InfoFlow's)",
            "the penalty for a missing head grows with T",
            "book", "the calculator's exponents grow with T; InfoFlow's summaries say the transition holds whatever T",
            f"missing-head / full-head NMSE {slashed(r['length_ratios'])} at T = "
            f"{' / '.join(str(x['T']) for x in a.length)}", "reproduced" if a.length_observed else "not observed",
            f"the ratio {trend} with T; "
            + ("every run was still learning" if r["half_gain_min"] > 1 else "not every run was still learning")
            + f" (half_gain {significant(r['half_gain_min'])} to {significant(r['half_gain_max'])})"))
    return out + a.recipe.claims()


def _direction(a: IntrinsicDimensionAnalysis) -> str:
    """The main table against the criterion and the paper."""
    r = a.reading
    direction = {s["D"]: s["ratio"] is not None and s["ratio"] > 1 for s in a.ratios}
    barred = [s for s in a.ratios if s["bar"] is not None]
    missed = [s for s in barred if not s["met"]]
    free = [s for s in a.ratios if s["bar"] is None and s["ratio"] is not None]
    smaller = free and barred and max(s["ratio"] for s in free) < min(s["ratio"] or 0 for s in barred)
    worse, rising = a.worse_every_seed, a.rising
    text = ("**The direction is the paper's, the size is not.** " if all(direction.values()) and missed
            else "**The direction and the size are the paper's.** " if all(direction.values())
            else "**The direction is not the paper's at every $D$.** ")
    text += ("At every $D$ trained, the best seed of both configurations that miss a head ends above the best of "
             "$(D, D)$" if all(direction.values()) else
             "The best missing-head configuration ends above $(D, D)$ at "
             + _Ds([D for D, v in direction.items() if v]))
    text += f", and the ratios lie between {prose_number(r['ratio_min'])} and {prose_number(r['ratio_max'])} (the ratio table)"
    if missed:
        bars = sorted({s["bar"] for s in missed}, reverse=True)
        text += (": the bar" + "s" * (len(missed) > 1) + " "
                 + enumerated([f"of {b:g} at {_Ds([s['D'] for s in missed if s['bar'] == b])}" for b in bars])
                 + (" is" if len(missed) == 1 else " are") + " missed with this schedule"
                 + (f" (a {r['long_times']:.3g} times longer one follows)" if a.long_ratios else ""))
    if len(missed) < len(barred):
        text += f"; the bar is met at {_Ds([s['D'] for s in barred if s['met']])}"
    text += ". "
    if free:
        text += (f"At {_Ds([s['D'] for s in free])}, where no bar is set, the ratios are "
                 + ("smaller still, as the paper's are" if smaller else "not smaller, while the paper's are")
                 + f" ({enumerated([prose_number(s['paper_ratio']) for s in free])}). ")
    above, overlap = [D for D, v in worse.items() if v], [D for D, v in worse.items() if not v]
    text += ((f"At {_Ds(above)} every missing-head seed ends above every $(D, D)$ seed" if above else
              "At no $D$ does every missing-head seed end above every $(D, D)$ seed")
             + (f"; at {_Ds(overlap)} the seeds of the three configurations overlap" if overlap else "") + ". ")
    text += ("Every run reaches its best NMSE in the last tenth of its schedule (the validation curves). "
             if r["best_late"] else "Not every run reaches its best NMSE in the last tenth of its schedule. ")
    if r["full_over_paper_min"] is not None:
        text += (f"The full-head models end {prose_number(r['full_over_paper_min'])} to {prose_number(r['full_over_paper_max'])} "
                 "times above the paper's $(D, D)$ values. ")
    text += ("At every $D$ the ratio rose from each quarter of the schedule to the next (the table of ratios during "
             "training): a longer schedule widens the gap" if all(rising.values()) else
             f"The ratio did not rise from each quarter of the schedule to the next at "
             f"{_Ds([D for D, v in rising.items() if not v])} (the table of ratios during training)")
    return text + (f". Two differences from the paper bound what a CPU run can show: the sequence is shorter ($T = "
                   f"{r['T']}$ against 64) and the schedule is {r['steps']} steps of {a.params.batch_size} samples.")


def _length(a: IntrinsicDimensionAnalysis) -> str:
    """The sequence-length part against the calculator's prediction."""
    r, rows = a.reading, a.length
    rising = list(a.length_rising.values())
    falls = bool(rising) and not any(rising)
    full = [x["nmse_full"] for x in rows]
    full_rises = None not in full and all(b > x for x, b in zip(full, full[1:]))
    flat = r["missing_spread"] is not None and r["missing_spread"] < 1.25
    k = [x["exponents"]["(D-1,D)"] for x in rows]
    text = ("**The theory's prediction in $T$ is observed.** " if a.length_observed else
            "**The theory's prediction in $T$ is not observed, and the shorter sequence is not why the gap is small.** "
            if falls else "**The theory's prediction in $T$ is not observed.** ")
    text += ("The calculator predicts that the ratio rises with $T$ (the missing-head exponent grows with $T$, the "
             "full-head one stays 1), and the sequence-length part committed that prediction before its runs. The "
             "ratio "
             + ("rises" if a.length_observed else "falls instead" if falls else "does not rise at every step")
             + f", from each trained $T$ to the next: {enumerated([prose_number(x) for x in r['length_ratios']])} at $T$ = "
             + enumerated([x["T"] for x in rows]) + " (its table). The prediction is "
             + ("observed. " if a.length_observed else "not observed. "))
    if flat:
        text += (f"The better missing-head configuration ends at about the same NMSE at every $T$ (within "
                 f"{100 * (r['missing_spread'] - 1):.2g} %), while the full-head model's NMSE "
                 + ("rises with $T$: within this schedule a longer sequence makes the full-head model's retrievals "
                    "harder to learn, rather than a missing head's aggregation costlier. " if full_rises
                    else "does not rise at every $T$. "))
    if k[-1] > k[0]:
        text += ("The calculator's missing-head exponent, larger at the longest $T$ (the exponent table), "
                 + ("shows in these runs. " if a.length_observed else "does not show in these runs. "))
    return text + ("So the paper's $T = 64$ would not by itself widen our gap; what is missing is the full-head "
                   "models' training (next paragraph)." if falls else "")


def _mechanism(a: IntrinsicDimensionAnalysis) -> str:
    """What the full-head models retrieve."""
    r, rows = a.reading, a.retrieval
    if not rows:
        return "**No retrieval count** in this run (the weights of the $(D, D)$ models are not kept)."
    whole = [x for x in rows if x["learned"] == x["D"]]
    none = sum(x["learned"] == 0 for x in rows)
    gap = all(s["ratio"] is not None and s["ratio"] > 1 for s in a.ratios)
    text = ("**Why the gap is small: no full-head model found the whole mechanism.** " if not whole and gap else
            "**No full-head model found the whole mechanism.** " if not whole else
            f"**{len(whole)} of the {len(rows)} full-head models found the whole mechanism.** ")
    text += (f"The retrieval table shows that no $(D, D)$ model retrieves more than {r['retrieved_most']} of its $D$ "
             f"terms in both layers; {none} of the {len(rows)} retrieve none. ")
    low = r["layer2_heads"] > 2 * r["layer1_heads"]
    above = r["layer1_above_init"]
    text += (("Layer 1 is where the mechanism is missing: its" if low else "In layer 1 the")
             + f" best heads reach the threshold for a term {r['layer1_heads']} times, the CLS heads of layer 2 "
             f"{r['layer2_heads']} times (summed over the models), "
             + ("although every model's layer-1 agreement is above its initialisation's. " if above else
                "and not every model's layer-1 agreement is above its initialisation's. "))
    if not whole and gap:
        text += ("A $(D, D)$ model that has not learned its $D$ layer-1 retrievals uses its heads no better than a "
                 "model that lacks one, and so it ends only a little below them. ")
    if r["best_seed_retrieves_most"] is not None:
        text += (f"At $D = {r['best_seed_D']}$ the seed with the lowest NMSE "
                 + ("is the one that retrieves the most terms." if r["best_seed_retrieves_most"]
                    else "does not retrieve more terms than the others."))
    return text


def _long_schedule(a: IntrinsicDimensionAnalysis) -> str:
    """The longer schedule against its prediction and the bars."""
    r, p = a.reading, a.params
    if not a.long_ratios or None in [s["ratio"] for s in a.long_ratios]:
        return "*(The longer schedule has no ratio in this profile.)*"
    by = {s["D"]: s for s in a.long_ratios}
    met = [D for D, s in by.items() if s["met"]]
    close = [D for D, s in by.items() if s["met"] is False and s["ratio"] >= 0.8 * s["bar"]]
    far = [D for D, s in by.items() if s["met"] is False and D not in close]
    steps = "`ls_steps`"
    text = (f"**{r['long_times']:.3g} times the steps: "
            + ", ".join(f"{what} at {_Ds(Ds)}" for what, Ds in (("the bar met", met), ("close to the bar", close),
                                                                ("far from it", far)) if Ds) + ".** ")
    D, seeds = r["long_checked_D"], sorted({*p.ls_seeds, *(p.ls_check_seeds if r["long_checked_D"] in p.ls_check_D
                                                          else ())})
    if r["long_first_seed_met"] is not None:
        text += (f"With {steps} steps the first seed {'reached' if r['long_first_seed_met'] else 'stayed below'} the "
                 f"bar of {by[D]['bar']:g} at $D = {D}$ (ratio {prose_number(r['long_first_seed_ratio'])})")
        text += (f"; over seeds {enumerated(seeds)} the best of each configuration gives {prose_number(by[D]['ratio'])}"
                 if len(seeds) > 1 else "")
        how = [f"{w} at {_Ds(Ds)}" for w, Ds in (("narrowly", close), ("far", far)) if Ds]
        text += (": the bar is " + ("missed at every $D$" if not met else f"met at {_Ds(met)}")
                 + (", " + enumerated(how) if how else "") + " (the longer schedule's table). ")
    estimate = {D: LONG_SCHEDULE_ESTIMATE[D] for D in by if D in LONG_SCHEDULE_ESTIMATE}
    if estimate:
        low = [D for D, e in estimate.items() if by[D]["ratio"] > e]
        high = [D for D, e in estimate.items() if by[D]["ratio"] <= e]
        text += (f"The estimate written with its prediction (about {enumerated([f'{e:g}' for e in estimate.values()])}) was "
                 + enumerated([f"too {w} at {_Ds(Ds)}" for w, Ds in (("low", low), ("high", high)) if Ds]) + ", and ")
    wider = a.long_wider
    text += ("its criterion, a larger ratio than the best over the seeds at `steps` steps, holds at "
             + _Ds([D for D, v in wider.items() if v])
             + (f" but not at {_Ds([D for D, v in wider.items() if not v])}" if not all(wider.values()) else "")
             + f", so the prediction is {'observed' if all(wider.values()) else 'not observed'}. ")
    growth = r["long_growth"]
    if growth:
        at = {(x["D"], x["fraction"]): x["ratio"] for x in a.long_during}
        fr = sorted({x["fraction"] for x in a.long_during})
        climbs = all(at[d, f] is not None and at[d, g] is not None and at[d, f] < at[d, g]
                     for d in by for f, g in zip(fr, fr[1:]))
        text += ("Against the same seeds at `steps` steps the ratio grew "
                 + enumerated([f"{prose_number(g)} times at $D = {d}$" for d, g in growth.items()])
                 + (", most at " + _Ds([max(growth, key=growth.get)]) if len(growth) > 1 else "")
                 + (", and it rose through every quarter of the longer schedule. " if climbs else
                    "; it did not rise through every quarter of the longer schedule. "))
    if r["long_full_factor_min"] is not None:
        text += (("Every full-head model ends below" if r["long_full_factor_min"] > 1 else "Not every full-head model "
                  "ends below") + f" its NMSE at `steps` steps ({prose_number(r['long_full_factor_min'])} to "
                 f"{prose_number(r['long_full_factor_max'])} times lower). ")
    if a.long_retrieval:
        learned = {D: [x["learned"] for x in a.long_retrieval if x["D"] == D] for D in by}
        text += ("The longer-trained $(D, D)$ models retrieve "
                 + enumerated([f"{', '.join(map(str, n))} of their {D} terms at $D = {D}$" for D, n in learned.items() if n])
                 + " in both layers"
                 + (": more steps lower the errors, but they do not make the full-head models find the whole mechanism."
                    if all(x["learned"] < x["D"] for x in a.long_retrieval) else "."))
    return text


def _budget(a: IntrinsicDimensionAnalysis) -> str:
    """Whether the runs were still learning."""
    r = a.reading
    if r["half_gain_min"] is None:
        return "*(No run has a half_gain in this profile.)*"
    learning = r["half_gain_full_min"] is not None and r["half_gain_full_min"] >= BUDGET_TOLERANCE
    text = ("**Every run was still learning when its schedule ended.** " if r["half_gain_min"] > 1 else
            "**Not every run was still learning when its schedule ended.** ")
    text += (f"Over the second half of its schedule, every run of the main table, the sequence-length part and the "
             f"longer schedule lowered its best NMSE by a factor between {prose_number(r['half_gain_min'])} and "
             f"{prose_number(r['half_gain_max'])} (`half_gain`: the best NMSE of the first half over the best of the whole); "
             f"the full-head runs by {prose_number(r['half_gain_full_min'])} or more. A budget is sufficient when doubling it "
             f"changes the result by less than {BUDGET_TOLERANCE:g} times, so ")
    text += ((f"no budget of this chapter is sufficient for its full-head models: its ratios and its verdicts are "
              f"verdicts on these schedules ({r['steps']} and {r['ls_steps']} steps), not on what this recipe can "
              f"reach. ") if learning else
             "by this measure not every full-head model's budget was too short. ")
    if r["long_full_factor_min"] is not None:
        text += (f"The longer schedule, {r['long_times']:.3g} times the steps, is the chapter's budget check: it "
                 f"lowered the full-head NMSE {prose_number(r['long_full_factor_min'])} to "
                 f"{prose_number(r['long_full_factor_max'])} times.")
    return text


def _head_count(a: IntrinsicDimensionAnalysis) -> str:
    """The single-layer head count against P1 Table 2 and chapter 13's budget."""
    r, p = a.reading, a.params
    drops = a.head_count_drops[p.hc_seq_lens[0]]
    times = r["hc_budget_times"]
    at_D = drops.get(f"{p.hc_D - 1}->{p.hc_D}")
    text = (f"**The head-count part is {'a tenth' if times == 10 else f'1/{times:.0f}'} of the calibrated "
            f"budget.** The head-count runs here ({p.hc_steps} steps) "
            + ("fall steadily with $h$" if all(v > 1 for v in drops.values()) else "do not fall at every $h$")
            + " (the factors $\\mathrm{NMSE}(h)/\\mathrm{NMSE}(h+1)$: "
            + enumerated([f"{v:g} for {k.replace('->', ' → ')}" for k, v in drops.items()]) + ")")
    if at_D is None:
        text += f"; the head counts trained do not include both $h = {p.hc_D - 1}$ and $h = D = {p.hc_D}$. "
    elif at_D < max(drops.values()):
        text += ", without a sharper break at $h = D$: the fall from $h = D - 1$ to $h = D$ is not the largest. "
    else:
        text += ", with the largest fall from $h = D - 1$ to $h = D$. "
    if r["hc_over_p1_min"] is not None:
        text += (f"For $h \\ge {p.hc_D - 1}$ they stay {prose_number(r['hc_over_p1_min'])} to {prose_number(r['hc_over_p1_max'])} "
                 "times above the predecessor's levels. ")
    return text + (f"That is a verdict on the budget, not on the predecessor's result: [chapter 13]"
                   f"(13_training_recipe.ipynb) trains the same model {times:g} times longer and finds the "
                   "predecessor's sharp break at $h = D$.")


def _efficiency(a: IntrinsicDimensionAnalysis) -> str:
    """The book's criterion on the sequence-length part, and what its calibration changed."""
    if not a.efficiency:
        return "*(The book's criterion needs two sequence lengths; this profile trains one.)*"
    agree = all(x["agrees"] for x in a.efficiency)

    def said(x: dict[str, Any]) -> str:
        (lo, v_lo), (hi, v_hi) = list(x["nmse_by_T"].items())[0], list(x["nmse_by_T"].items())[-1]
        return (f"${x['configuration']}$ is {'efficient' if x['observed_efficient'] else 'not efficient'} "
                f"({prose_number(v_lo)} at $T = {lo}$ to {prose_number(v_hi)} at $T = {hi}$; predicted "
                f"{'efficient' if x['predicted_efficient'] else 'inefficient'})")

    bar = MIN_RATIOS.get(a.params.sl_D)
    below = bar is not None and all(x["ratio"] is not None and x["ratio"] < bar for x in a.length)
    changed = a.efficiency_changes
    return (f"By it the {len(a.efficiency)} configurations "
            + ("behave as the calculator predicts" if agree else "do not all behave as the calculator predicts")
            + ": " + "; ".join(said(x) for x in a.efficiency) + ". "
            + (f"The verdicts agree with the calculator even though the ratios between them stay below the chapter's "
               f"bar of {bar:g}. " if agree and below else "")
            + f"With the calibration (a configuration within {SIBLING_GAP:g} times of its siblings' best at the "
            f"largest $T$), {efficiency_reason(a.efficiency, ['configuration'])}"
            + (" (the table's absolute column gives the verdicts before it)." if changed else "."))


def reading_paragraphs(a: IntrinsicDimensionAnalysis) -> dict[str, str]:
    """The chapter's reading of its results as MyST paragraphs, by name (``direction``, ``length``, ``mechanism``,
    ``long_schedule``, ``budget``, ``head_count``, ``efficiency``, ``recipe``), every number and every verdict-dependent word
    computed from ``a`` (the notebook glues them, so a page executed under any profile says what its own tables
    show)."""
    return {"direction": _direction(a), "length": _length(a), "mechanism": _mechanism(a),
            "long_schedule": _long_schedule(a), "budget": _budget(a), "head_count": _head_count(a),
            "efficiency": _efficiency(a), "recipe": a.recipe.paragraph()}
