"""Chapter 14's analysis (InfoFlow §4.1's mechanism, what it takes to train it): everything the chapter shows and
claims, computed once from its runs (:func:`analyse`), its claims (:func:`verdicts`) and its reading in words
(:func:`reading_paragraphs`), so that the notebook only displays them (the runs, arms, controls and their committed
predictions are in :mod:`~transformer_theory.chapters.ablation`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from transformer_theory.chapters.ablation import (ARMS, CONTROL_BAR, CONTROL_PREDICTION, CONTROLS, CRITERION,
                                                  AblationParameters,
                                                  ablation_curves, ablation_table, budget_check_table,
                                                  control_prediction_check, doubled, doubling_check,
                                                  GELU_CURRICULUM_PREDICTION, gelu_curriculum_check,
                                                  prediction_check)
from transformer_theory.chapters.budget import BUDGET_TOLERANCE
from transformer_theory.chapters.experiment import Results, curve_summary, training_seconds
from transformer_theory.chapters.verdicts import Claim
from transformer_theory.tables import prose_number
from transformer_theory.infoflow.reference import INTRINSIC_DIMENSION_NMSE
from transformer_theory.training.store import RunStore

__all__ = ["HYPOTHESES", "AblationAnalysis", "analyse", "arm_reading", "best_from_scratch", "control_claims",
           "reading_controls", "reading_paragraphs", "verdicts"]


#: What each arm tests (the hypothesis the reading names beside the arm's verdict).
HYPOTHESES: dict[str, str] = {
    "baseline": "chapter 10's recipe",
    "wide FFN": "layer 1's FFN is too narrow to form the products x(s)ᵀA_i x(t)",
    "wide heads": "the heads lack room for the bilinear scores",
    "wide residual": "the residual stream is too narrow to carry the retrieved tokens",
    "lower lr": "the step is too large for the sharp attention the mechanism needs",
    "long warm-up": "early instability sends training to averaging",
    "no weight decay": "weight decay shrinks the query/key maps and keeps attention soft",
    "large batch": "gradient noise hides the mechanism",
}


def arm_reading(row: Mapping[str, Any], baseline: Mapping[str, Any] | None) -> str:
    """What an arm's row shows against the baseline at its budget, in words: whether it helps by :data:`CRITERION`,
    whether its (D, D) model is better or worse, and whether it was still learning (``half_gain`` >=
    :data:`~transformer_theory.chapters.budget.BUDGET_TOLERANCE`: then nothing is ruled out)."""
    if baseline is None or row is baseline:
        verdict = "the reference"
    elif row["helps"]:
        verdict = "helps by the criterion"
    elif row["nmse_full"] is not None and baseline["nmse_full"] is not None and row["nmse_full"] > baseline["nmse_full"]:
        verdict = "does not help: its (D, D) model is worse"
    else:
        verdict = "does not help: its (D, D) model is better, its ratio too little"
    learning = row["half_gain"] is not None and row["half_gain"] >= BUDGET_TOLERANCE
    return verdict + (f"; still learning (half_gain {row['half_gain']:.2g}): not ruled out at a longer budget"
                      if learning and row is not baseline else "")


@dataclass(frozen=True)
class AblationAnalysis:
    """Everything chapter 14 shows and claims, computed once from its runs (:func:`analyse`): the tables, the figures'
    data, the committed predictions judged, the numbers its prose quotes (``reading``, by name: the notebook glues
    them) and its claims (:func:`verdicts`)."""

    params: AblationParameters
    n_runs: int
    training_seconds: float
    table: list[dict[str, Any]]
    curves: list[dict[str, Any]]
    budget: list[dict[str, Any]]
    doubled: list[dict[str, Any]]
    doubled_per_seed: dict[int, dict[str, dict[str, Any]]]
    prediction: dict[str, bool | None]
    doubling: dict[str, bool | None]
    control: dict[str, bool | None]
    gelu_curriculum: dict[str, bool | None]
    reading: dict[str, Any]

    @property
    def arms(self) -> list[dict[str, Any]]:
        """The rows of the arms (the controls left out)."""
        return [r for r in self.table if r["arm"] in ARMS]

    @property
    def controls(self) -> list[dict[str, Any]]:
        """The rows of the controls."""
        return [r for r in self.table if r["arm"] in CONTROLS]


def _reading(p: AblationParameters, table: list[dict[str, Any]], budget: list[dict[str, Any]],
             doubled_rows: list[dict[str, Any]], per_seed: dict[int, dict[str, dict[str, Any]]],
             doubled_runs: Results) -> dict[str, Any]:
    """The numbers the chapter's prose quotes, by name (``None`` where a part they need is not in the profile)."""
    arms = {r["arm"]: r for r in table if r["arm"] in ARMS}
    base, wide = arms.get("baseline"), arms.get("wide FFN")
    out: dict[str, Any] = {"n_arms": len(arms), "D": p.D, "T": p.seq_len, "steps": p.steps,
                           "double_steps": 2 * p.steps}
    if base and wide:
        others = [r["gain"] for a, r in arms.items() if a not in ("baseline", "wide FFN") and r["gain"] is not None]
        out.update(base_ratio=base["ratio"], wide_ratio=wide["ratio"], wide_gain=wide["gain"],
                   base_full=base["nmse_full"], wide_full=wide["nmse_full"],
                   wide_full_factor=base["nmse_full"] / wide["nmse_full"],
                   wide_missing_factor=base["nmse_missing"] / wide["nmse_missing"],
                   max_other_gain=max(others, default=None), min_gain=CRITERION["min_gain"])
    changes = {arm: [r["change"] for r in budget if r["arm"] == arm and r["change"] is not None]
               for arm in p.double_arms}
    for arm, key in (("baseline", "base"), ("wide FFN", "wide")):
        if changes.get(arm):
            out[f"{key}_change_min"], out[f"{key}_change_max"] = min(changes[arm]), max(changes[arm])
    twice = {r["arm"]: r for r in doubled_rows}
    if {"baseline", "wide FFN"} <= set(twice):
        b2, w2 = twice["baseline"], twice["wide FFN"]
        out.update(base2_full=b2["nmse_full"], wide2_full=w2["nmse_full"], base2_ratio=b2["ratio"],
                   wide2_ratio=w2["ratio"], wide2_gain=w2["gain"],
                   wide2_over_paper=w2["nmse_full"] / INTRINSIC_DIMENSION_NMSE[p.D]["(D,D)"]
                   if p.D in INTRINSIC_DIMENSION_NMSE else None)
        full = [r for r in doubled_runs if r.tags["arm"] == "wide FFN" and (r.tags["h1"], r.tags["h2"]) == (p.D, p.D)]
        halves = [g for r in full if (g := curve_summary(r.record)["half_gain"]) is not None]
        if halves:
            out["wide2_half_gain_min"], out["wide2_half_gain_max"] = min(halves), max(halves)
        minutes = [training_seconds([r]) / 60 for r in full]
        if minutes:
            out["wide2_task_minutes_min"], out["wide2_task_minutes_max"] = min(minutes), max(minutes)
        if len(per_seed) > 1:
            second = per_seed[sorted(per_seed)[1]]
            out.update(second_seed=sorted(per_seed)[1], second_wide_full=second["wide FFN"]["nmse_full"],
                       second_wide_ratio=second["wide FFN"]["ratio"], second_base_ratio=second["baseline"]["ratio"],
                       second_wide_gain=second["wide FFN"]["gain"])
    return out


def analyse(results: Results, p: AblationParameters, store: RunStore | None = None) -> AblationAnalysis:
    """Chapter 14's analysis of its runs' ``results`` (``store``: the weights the retrieval probe reads; ``None``:
    no probe)."""
    table = ablation_table(results, p, store)
    budget = budget_check_table(results, p)
    doubled_rows = ablation_table(results, doubled(p), store, part="double_budget") if p.double_arms else []
    per_seed = {seed: {r["arm"]: r for r in ablation_table(results, replace(doubled(p), seeds=(seed,), double_seeds=(seed,)), store,
                                                            part="double_budget")}
                for seed in p.double_seeds} if p.double_arms else {}
    doubled_runs = [r for r in results if r.tags["part"] == "double_budget"]
    for row in table:
        row["reading"] = arm_reading(row, next((r for r in table if r["arm"] == "baseline"), None)) \
            if row["arm"] in ARMS else None
    return AblationAnalysis(
        params=p, n_runs=len(results), training_seconds=training_seconds(results), table=table,
        curves=ablation_curves(results, p), budget=budget, doubled=doubled_rows, doubled_per_seed=per_seed,
        prediction=prediction_check(table), doubling=doubling_check(budget, doubled_rows),
        control=control_prediction_check(table), gelu_curriculum=gelu_curriculum_check(table),
        reading=_reading(p, table, budget, doubled_rows, per_seed, doubled_runs))


def verdicts(a: AblationAnalysis) -> list[Claim]:
    """Chapter 14's claims: the committed prediction on the arms (and, with the budget check, at twice the budget),
    and the controls' prediction once a control is trained (:class:`~transformer_theory.chapters.verdicts.Claim`)."""
    r, claims_ = a.reading, []
    if a.prediction["held"] is not None:
        later = ""
        if "wide2_ratio" in r:
            seeds = " and ".join(map(str, a.params.double_seeds))
            later = (f"; at {r['double_steps']} steps (budget check, best over seed"
                     f"{'s' * (len(a.params.double_seeds) > 1)} {seeds}): {prose_number(r['base2_ratio'])} → "
                     f"{prose_number(r['wide2_ratio'])}")
        gains = [x["half_gain"] for x in a.arms if x["half_gain"] is not None]
        learning = sum(g >= BUDGET_TOLERANCE for g in gains)
        claims_.append(Claim(
            "14_mechanism_ablation", "this book's own", "which change to chapter 10's recipe lets two layers find "
            "§4.1's mechanism", "book", "(this book's prediction, committed before the runs) only the wide FFN helps",
            f"ratio {prose_number(r['base_ratio'])} → {prose_number(r['wide_ratio'])} with the wide FFN at {r['steps']} steps{later}",
            "reproduced" if a.prediction["held"] else "not observed",
            f"{r['n_arms']} arms at D = {r['D']}, T = {r['T']}, {r['steps']} steps, {len(a.params.seeds)} seeds; an "
            f"arm helps when its ratio is ≥ {r['min_gain']:g} times the baseline's and its (D, D) NMSE is lower; "
            f"{learning} of {len(gains)} arms' (D, D) models were still learning (half_gain {prose_number(min(gains))} to "
            f"{prose_number(max(gains))}), so no arm is ruled out at longer budgets"
            + ("; the wide FFN helps at twice the budget" if a.doubling.get("wide_ffn_helps_doubled") else "")))
    claims_ += control_claims(a)
    if a.control["held"] is not None:
        Ds = sorted({x["D"] for x in a.controls})
        claims_.append(Claim(
            "14_mechanism_ablation", "this book's own", "the controls' prediction (committed before their runs): "
            "oracle attention meets the bar, a plain random start misses it, the gated FFN lowers the full-head NMSE, "
            "the term curriculum helps and meets the bar, the paper's optimiser does not help", "book", CONTROL_PREDICTION,
            "; ".join(f"{x['arm']} at D = {x['D']}: ratio {prose_number(x['ratio'])}" for x in a.controls),
            "reproduced" if a.control["held"] else "not observed",
            f"judged at D = {', '.join(map(str, Ds))} only ({a.params.control_steps} steps, seeds "
            f"{list(a.params.control_seeds)}); statements: "
            + ", ".join(f"{k} {v}" for k, v in a.control.items() if k != "held")))
    gelu = [x for x in a.controls if x["arm"] == "term curriculum, GeLU FFN"]
    if a.gelu_curriculum["held"] is not None:
        claims_.append(Claim(
            "14_mechanism_ablation", "this book's own", "a curriculum over the terms finds the mechanism with the papers' "
            "GeLU FFN", "book", "(this book's prediction, committed before the runs were read) "
            + GELU_CURRICULUM_PREDICTION,
            "; ".join(f"D = {x['D']}: " + _control_row(x) + f", gain {prose_number(x['gain'])} over random start"
                      for x in gelu),
            "reproduced" if a.gelu_curriculum["held"] else "not observed",
            f"{a.params.control_steps} steps, seeds {list(a.params.control_seeds)}; it helps when its ratio is ≥ "
            f"{CRITERION['min_gain']:g} times random start's and its (D, D) NMSE is lower; statements: "
            + ", ".join(f"{k} {v}" for k, v in a.gelu_curriculum.items() if k != "held")))
    return claims_


def _control_row(x: Mapping[str, Any]) -> str:
    learning = x["half_gain"] is not None and x["half_gain"] >= BUDGET_TOLERANCE
    return (f"{x['arm']} (D, D) {prose_number(x['nmse_full'])}, ratio {prose_number(x['ratio'])}"
            + (" (still learning)" if learning else ""))


def best_from_scratch(a: AblationAnalysis, D: int) -> Mapping[str, Any] | None:
    """The control trained from a random start (every control but ``oracle attention``) with the lowest (D, D) NMSE
    among those that meet :data:`~transformer_theory.chapters.ablation.CONTROL_BAR` at ``D``, else among all; ``None``
    where none is trained at ``D``."""
    rows = [x for x in a.controls if x["D"] == D and x["arm"] != "oracle attention" and x["nmse_full"] is not None]
    met = [x for x in rows if x["meets_bar"]]
    return min(met or rows, key=lambda x: x["nmse_full"], default=None)


def control_claims(a: AblationAnalysis) -> list[Claim]:
    """Issue 33's two questions at each D the controls are trained at, as two claims: does the family *represent*
    §4.1's mechanism (the oracle control: layer 1 set at the mechanism, then everything trained), and does training
    *find* it from a random start (the best from-scratch control)? Each meets :data:`CONTROL_BAR` or not."""
    Ds = sorted({x["D"] for x in a.controls})
    oracle = {x["D"]: x for x in a.controls if x["arm"] == "oracle attention"}
    scratch = {D: best for D in Ds if (best := best_from_scratch(a, D)) is not None}
    bar = f"the bar: (D, D) ≤ {CONTROL_BAR['max_full']:g} and ratio ≥ {CONTROL_BAR['min_ratio']:g}"
    paper = "; ".join(f"D = {D}: (D, D) {prose_number(INTRINSIC_DIMENSION_NMSE[D]['(D,D)'])} at T = 64" for D in Ds
                      if D in INTRINSIC_DIMENSION_NMSE)
    steps, seeds = a.params.control_steps, list(a.params.control_seeds)
    out = []
    if oracle:
        out.append(Claim(
            "14_mechanism_ablation", "InfoFlow §4.1 (this book's control)", "two layers of D heads can represent the "
            "mechanism: learnt once found", "summaries", paper or "a sharp transition at h = D",
            "; ".join(f"D = {D}: " + _control_row(x) for D, x in sorted(oracle.items())),
            "reproduced qualitatively" if all(x["meets_bar"] for x in oracle.values()) else "not observed",
            f"layer 1 set at the mechanism, then everything trained ({steps} steps, seeds {seeds}, T = "
            f"{a.params.control_seq_len}, not the paper's 64); {bar}; a control, not a way to train"))
    if scratch:
        departure = any(x["arm"] in ("gated FFN", "term curriculum") for x in scratch.values())
        out.append(Claim(
            "14_mechanism_ablation", "InfoFlow §4.1 (this book's control)", "training finds the mechanism from a "
            "random start", "summaries", paper or "a sharp transition at h = D",
            "; ".join(f"D = {D}, best: " + _control_row(x) for D, x in sorted(scratch.items())),
            "reproduced qualitatively" if all(x["meets_bar"] for x in scratch.values()) else "not observed",
            f"the best of the controls trained from a random start ({steps} steps, seeds {seeds}); {bar}"
            + ("; the gated FFN is a departure from the papers' GeLU FFN" if departure else "")))
    return out


def reading_controls(a: AblationAnalysis) -> str:
    """The controls' reading at each D they are trained at: what the family represents (oracle attention) and what
    training finds from a random start, every number from the table."""
    if not a.controls:
        return "*(No control is trained under this profile: `controls` is empty.)*"
    parts = []
    for D in sorted({x["D"] for x in a.controls}):
        rows = [x for x in a.controls if x["D"] == D]
        oracle = next((x for x in rows if x["arm"] == "oracle attention"), None)
        best = best_from_scratch(a, D)
        text = f"**At $D = {D}$.** "
        if oracle is not None:
            text += (f"Set at the mechanism and then trained, the family {'holds' if oracle['meets_bar'] else 'loses'} "
                     f"it: oracle attention reaches $(D, D)$ {prose_number(oracle['nmse_full'])} with a ratio of "
                     f"{prose_number(oracle['ratio'])} ({'meeting' if oracle['meets_bar'] else 'missing'} the bar). ")
        scratch = [x for x in rows if x["arm"] != "oracle attention"]
        if scratch:
            text += ("From a random start: " + "; ".join(_control_row(x) for x in scratch) + ". "
                     + (f"The best from-scratch control, {best['arm']}, "
                        f"**{'meets' if best['meets_bar'] else 'misses'} the bar**." if best is not None else ""))
        parts.append(text)
    return "\n\n".join(parts)


def reading_paragraphs(a: AblationAnalysis) -> dict[str, str]:
    """The chapter's reading of its results as MyST paragraphs, by name (``arms``, ``prediction``, ``retrieval``,
    ``budget``), every number and every verdict-dependent word computed from ``a`` (the notebook glues them, so a page
    executed under any profile says what its own tables show); a part whose runs are not in the profile says so."""
    r, out = a.reading, {"controls": reading_controls(a)}
    if "base_ratio" not in r:
        return {**out, **{k: "*(This part needs the baseline and the wide FFN, which this profile leaves out.)*"
                          for k in ("arms", "prediction", "retrieval", "budget")}}
    helping = [x["arm"] for x in a.arms if x["helps"]]
    out["arms"] = (
        f"**{'No arm helps' if not helping else ', '.join(helping) + ' help' + ('s' if len(helping) == 1 else '')} at "
        f"this budget.** The baseline's ratio is {prose_number(r['base_ratio'])}. The wide FFN, the arm the prediction named, "
        f"changes the $(D, D)$ NMSE {prose_number(r['wide_full_factor'])} times ({prose_number(r['base_full'])} to "
        f"{prose_number(r['wide_full'])}) and the missing-head models {prose_number(r['wide_missing_factor'])} times, so its ratio is "
        f"{prose_number(r['wide_ratio'])}: a gain of {prose_number(r['wide_gain'])}, "
        f"{'short of' if r['wide_gain'] < r['min_gain'] else 'meeting'} the criterion's {r['min_gain']:g}."
        + (f" No other arm raises the ratio by more than {100 * (r['max_other_gain'] - 1):.0f} %."
           if r["max_other_gain"] is not None and r["max_other_gain"] < r["min_gain"] else ""))
    names = {"wide_ffn_helps": "the wide FFN helps", "no_other_arm_helps": "no other arm helps",
             "batch_and_lr_lower_the_ratio": "the large batch and the lower learning rate lower the ratio"}
    said = {True: "holds", False: "**does not hold**", None: "cannot be judged here (an arm it needs is left out)"}
    out["prediction"] = ("**The prediction, statement by statement:** "
                         + "; ".join(f"{names[k]}: {said[v]}" for k, v in a.prediction.items() if k in names)
                         + f". As a whole it is **{'observed' if a.prediction['held'] else 'not observed'}** at "
                           f"{r['steps']} steps.")
    retrieved = [x["retrieved_terms"] for x in a.arms if x["retrieved_terms"] is not None]
    out["retrieval"] = ("**No retrieval probe** in this run (the weights are not kept)." if not retrieved else
                        f"**Retrieval.** The $(D, D)$ models whose weights are kept retrieve at most {max(retrieved)} "
                        f"of the {r['D']} target terms in both layers at {r['steps']} steps.")
    if "wide2_ratio" not in r:
        out["budget"] = "*(No budget check in this profile: `double_arms` is empty.)*"
        return out
    sufficient = [x["sufficient"] for x in a.budget if x["sufficient"] is not None]
    wide2 = next(x for x in a.doubled if x["arm"] == "wide FFN")
    out["budget"] = (
        f"**The budget check.** Doubling the steps ({r['double_steps']}, seeds "
        f"{' and '.join(map(str, a.params.double_seeds))}) changed {sum(not x for x in sufficient)} of "
        f"{len(sufficient)} cells by more than the tolerance of {BUDGET_TOLERANCE:g} times: "
        f"{prose_number(r.get('base_change_min'))} to {prose_number(r.get('base_change_max'))} times for the baseline, "
        f"{prose_number(r.get('wide_change_min'))} to {prose_number(r.get('wide_change_max'))} times for the wide FFN"
        + (", so the table above gives verdicts on a budget at which the arms were still learning"
           if not all(sufficient) else "") + ". "
        f"At {r['double_steps']} steps, best over the seeds, the wide FFN's $(D, D)$ model reaches "
        f"{prose_number(r['wide2_full'])} against the baseline's {prose_number(r['base2_full'])}; its ratio is "
        f"{prose_number(r['wide2_ratio'])} against the baseline's {prose_number(r['base2_ratio'])}, a gain of {prose_number(r['wide2_gain'])}, "
        f"so it **{'helps' if wide2['helps'] else 'does not help'}** by the criterion"
        + (f", and its better seed retrieves {wide2['retrieved_terms']} of the {r['D']} terms in both layers"
           if wide2["retrieved_terms"] is not None else "") + ". "
        + (f"Seed {r['second_seed']} alone: $(D, D)$ {prose_number(r['second_wide_full'])}, ratio "
           f"{prose_number(r['second_wide_ratio'])} against its baseline's {prose_number(r['second_base_ratio'])} (a gain of "
           f"{prose_number(r['second_wide_gain'])}). " if "second_seed" in r else "")
        + (f"The wide FFN was still learning at {r['double_steps']} steps too (its $(D, D)$ NMSE fell "
           f"{prose_number(r['wide2_half_gain_min'])} to {prose_number(r['wide2_half_gain_max'])} times over the second half). "
           if r.get("wide2_half_gain_max", 0) >= BUDGET_TOLERANCE else "")
        + (f"Its $(D, D)$ NMSE is {prose_number(r['wide2_over_paper'])} times the paper's (at $T = 64$). "
           if r.get("wide2_over_paper") else "")
        + (f"One task of the wide FFN's three doubled models took {prose_number(r['wide2_task_minutes_min'])} to "
           f"{prose_number(r['wide2_task_minutes_max'])} minutes of one core." if "wide2_task_minutes_min" in r else ""))
    return out
