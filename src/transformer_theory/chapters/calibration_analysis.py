"""Chapter 13's analysis (the engine calibrated on the predecessor's head count, P1 Tables 2 and 5): everything the
chapter shows and claims, computed once from its runs (:func:`analyse`), its claims (:func:`verdicts`) and its reading
in words (:func:`reading_paragraphs`), so that the notebook only displays them (the runs, criteria and committed
prediction are in :mod:`~transformer_theory.chapters.calibration`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from transformer_theory.chapters.prose import enumerated
from transformer_theory.chapters.budget import BUDGET_TOLERANCE
from transformer_theory.chapters.calibration import (CRITERIA, DEFAULTS, OPTIONAL_PARTS,
                                                     CalibrationParameters, budget_check_table, head_count_table,
                                                     head_count_verdicts, two_layer_head_count_table,
                                                     two_layer_verdict, validation_curves)
from transformer_theory.chapters.experiment import Results, half_gains, training_seconds
from transformer_theory.chapters.verdicts import Claim
from transformer_theory.tables import prose_number
from transformer_theory.training.store import RunStore

__all__ = ["CHAPTER", "CalibrationAnalysis", "analyse", "reading_paragraphs", "verdicts"]

#: The notebook's stem.
CHAPTER = "13_training_recipe"

#: What each list parameter of the defaults trains, for the sentence naming what a profile leaves out.
_PART_NAMES = {"heads": "one-layer h", "seq_lens": "one-layer T", "seeds": "one-layer seeds",
               "double_heads": "budget-check h", "tl_heads": "two-layer h", "tl_seeds": "two-layer seeds"}


@dataclass(frozen=True)
class CalibrationAnalysis:
    """Everything chapter 13 shows and claims, computed once from its runs (:func:`analyse`): the one-layer head count
    (P1 Table 2) with its verdict per T, the gain of each added head and how far each cell was still learning, the
    budget check, the two-layer head count (P1 Table 5) and its verdict, the validation curves the verdicts rest on
    (by figure title), and ``reading``, every number the prose quotes by name."""

    params: CalibrationParameters
    n_runs: int
    training_seconds: float
    parts_left_out: list[str]
    head_count: list[dict[str, Any]]
    head_count_verdicts: list[dict[str, Any]]
    gains_per_head: dict[int, list[float | None]]
    head_count_half_gain: list[dict[str, Any]]
    below_D_max_half_gain: dict[int, float | None]
    budget: list[dict[str, Any]]
    two_layer: list[dict[str, Any]]
    two_layer_verdict: dict[str, Any]
    two_layer_half_gain: list[dict[str, Any]]
    curves: dict[str, list[dict[str, Any]]]
    reading: dict[str, Any]

    def recorded(self) -> dict[str, Any]:
        """The values the notebook records, by the names of its committed results."""
        return {
            "n_runs": self.n_runs, "training_wall_time_s": self.training_seconds, "parts_left_out": self.parts_left_out,
            "head_count_table": [{k: r[k] for k in ("T", "h", "nmse", "mean", "std", "seed_nmse", "paper_nmse")}
                                 for r in self.head_count],
            "head_count_verdicts": self.head_count_verdicts, "budget_check": self.budget,
            "two_layer_head_count_table": [{k: r[k] for k in ("h", "T", "nmse", "seed_nmse", "paper_nmse")}
                                           for r in self.two_layer],
            "two_layer_verdict": self.two_layer_verdict, "two_layer_half_gain": self.two_layer_half_gain,
            "gains_per_head": {str(T): g for T, g in self.gains_per_head.items()},
            "below_D_max_half_gain": self.below_D_max_half_gain,
            "head_count_half_gain": [{"T": r["T"], "h": r["h"], "seed_half_gain": list(r["seed_half_gain"].values())}
                                     for r in self.head_count_half_gain],
            "analysis": {"reading": self.reading}}


def _gains(rows: list[dict[str, Any]], T: int) -> list[float | None]:
    """The best NMSE of each head count at ``T`` over that of the next one (``None`` where one is missing)."""
    at = [r["nmse"] for r in rows if r["T"] == T]
    return [None if a is None or not b else a / b for a, b in zip(at, at[1:])]


def _focus(p: CalibrationParameters) -> int:
    """The T the reading looks at first: the budget check's, else the middle one of ``seq_lens``."""
    return p.double_seq_len if p.double_seq_len in p.seq_lens else p.seq_lens[len(p.seq_lens) // 2]


def _reading(p: CalibrationParameters, rows: list[dict[str, Any]], half: list[dict[str, Any]],
             budget: list[dict[str, Any]], tl_rows: list[dict[str, Any]], tl_half: list[dict[str, Any]],
             tl_verdict: dict[str, Any]) -> dict[str, Any]:
    """The numbers the chapter's prose quotes, by name (a name is absent where its runs are not in the profile)."""
    by = {(r["T"], r["h"]): r for r in rows}
    T = _focus(p)
    out: dict[str, Any] = {"D": p.D, "steps": p.steps, "focus_T": T}
    full, missing = by.get((T, p.D)), by.get((T, p.D - 1))
    if full and missing:
        finite = {name: [v for v in r["seed_nmse"].values() if v is not None]
                  for name, r in (("full", full), ("missing", missing))}
        if finite["full"] and finite["missing"]:
            out.update(full_seed_min=min(finite["full"]), full_seed_max=max(finite["full"]),
                       full_paper=full["paper_nmse"],
                       missing_seed_min=min(finite["missing"]), missing_seed_max=max(finite["missing"]),
                       missing_paper=missing["paper_nmse"])
    hs = [r["h"] for r in rows if r["T"] == T]
    steps = dict(zip(zip(hs, hs[1:]), _gains(rows, T)))
    earlier = [g for (h, _), g in steps.items() if h + 1 < p.D and g is not None]
    if earlier:
        out["earlier_gain_min"], out["earlier_gain_max"] = min(earlier), max(earlier)
    if steps.get((p.D, p.D + 1)) is not None:
        out["next_gain"], out["next_nmse"] = steps[(p.D, p.D + 1)], by[(T, p.D + 1)]["nmse"]
    seeds = [(r["T"], r["h"], s, g) for r in half for s, g in r["seed_half_gain"].items() if g is not None]
    at_or_above = [g for _, h, _, g in seeds if h >= p.D]
    if at_or_above:
        out["above_half_gain_min"], out["above_half_gain_max"] = min(at_or_above), max(at_or_above)
    other = [g for T_, h, _, g in seeds if h >= p.D and T_ != T]
    if other:
        out["other_above_half_gain_min"], out["other_above_half_gain_max"] = min(other), max(other)
    below = [x for x in seeds if x[1] < p.D]
    out["below_learning"] = [{"T": T_, "h": h, "seed": s, "half_gain": g} for T_, h, s, g in below
                             if g >= BUDGET_TOLERANCE]
    out["below_settled_max"] = max((g for *_, g in below if g < BUDGET_TOLERANCE), default=None)
    out["budget_change"] = {str(b["h"]): b["change"] for b in budget}
    h = tl_verdict["h"]
    tl = {r["h"]: r for r in tl_rows}
    if h in tl and h - 1 in tl:
        out.update(tl_T=tl[h]["T"], tl_paper=tl[h]["paper_nmse"], tl_missing_paper=tl[h - 1]["paper_nmse"],
                   tl_half_gain=next((g["half_gain"] for g in tl_half if g["h"] == h), None))
    out["not_trained"] = {name: [v for v in DEFAULTS[name] if v not in getattr(p, name)] for name in _PART_NAMES
                          if any(v not in getattr(p, name) for v in DEFAULTS[name])}
    return out


def analyse(results: Results, p: CalibrationParameters, store: RunStore | None = None) -> CalibrationAnalysis:
    """Chapter 13's analysis of its runs' ``results`` (no part reads weights: ``store`` is unused)."""
    rows = head_count_table(results, p)
    budget = budget_check_table(results, p)
    tl_rows = two_layer_head_count_table(results, p)
    tl_verdict = two_layer_verdict(tl_rows, p)
    one_layer = [r for r in results if r.tags["part"] == "head_count"]
    two_layers = [r for r in results if r.tags["part"] == "two_layer"]
    half, tl_half = half_gains(one_layer, ["T", "h"]), half_gains(two_layers, ("h",))
    below = {T: max((g for r in half if r["T"] == T and r["h"] == p.D - 1 for g in r["seed_half_gain"].values()
                     if g is not None), default=None) for T in p.seq_lens}
    curves = {f"one layer, T = {T}": validation_curves(results, "head_count", (p.D - 1, p.D), T) for T in p.seq_lens}
    if p.tl_heads:
        h = tl_verdict["h"]
        curves[f"two layers, T = {p.tl_seq_len}"] = validation_curves(results, "two_layer", (h - 1, h))
    return CalibrationAnalysis(
        params=p, n_runs=len(results), training_seconds=training_seconds(results),
        parts_left_out=[name for name in OPTIONAL_PARTS if not getattr(p, name)], head_count=rows,
        head_count_verdicts=head_count_verdicts(rows), gains_per_head={T: _gains(rows, T) for T in p.seq_lens},
        head_count_half_gain=half, below_D_max_half_gain=below, budget=budget, two_layer=tl_rows,
        two_layer_verdict=tl_verdict, two_layer_half_gain=tl_half, curves={k: v for k, v in curves.items() if v},
        reading=_reading(p, rows, half, budget, tl_rows, tl_half, tl_verdict))


def _g(x: float | None) -> str:
    """A number in a claim (plain text: the claims page and the verdict box)."""
    return prose_number(x, math=False)


def _bar(x: float) -> str:
    """A criterion's bound as it is written: ``1.5e-4``, ``2e-5``."""
    mantissa, exponent = f"{x:e}".split("e")
    return f"{float(mantissa):g}e{int(exponent)}"


def verdicts(a: CalibrationAnalysis) -> list[Claim]:
    """Chapter 13's claims: P1 Table 2's sharp fall at h = D with one layer (judged at every T by :data:`CRITERIA`
    ``head_count``) and P1 Table 5's at L·h = D with two layers (``two_layer``); a claim whose cells are not all in
    the profile is left out."""
    p, claims = a.params, []
    hc, tl = CRITERIA["head_count"], CRITERIA["two_layer"]
    judged = a.head_count_verdicts
    if judged and all(v["met"] is not None for v in judged):
        rows = {(r["T"], r["h"]): r for r in a.head_count}
        Ts = ", ".join(str(v["T"]) for v in judged)
        paper = " / ".join(f"{_g(rows[(v['T'], p.D - 1)]['paper_nmse'])} → {_g(rows[(v['T'], p.D)]['paper_nmse'])}"
                           for v in judged)
        claims.append(Claim(
            CHAPTER, "P1, Table 2", "one layer: a sharp fall of the NMSE at h = D (calibration)", "paper",
            f"h = {p.D - 1} → {p.D} at T = {Ts}: {paper}",
            " / ".join(f"{_g(v['nmse_missing'])} → {_g(v['nmse'])}" for v in judged),
            "reproduced" if all(v["met"] for v in judged) else "not observed",
            f"criteria: NMSE at h = D ≤ {_bar(hc['max_nmse'])} and a ratio ≥ {hc['min_ratio']:g} at every T ({Ts}; "
            f"best of {len(p.seeds)} seeds)"))
    x = a.two_layer_verdict
    if x["met"] is not None:
        h, gain = x["h"], a.reading.get("tl_half_gain")
        lo, hi = a.reading["tl_paper"] or (None, None)
        claims.append(Claim(
            CHAPTER, "P1, Table 5", "two layers: a sharp fall at L·h = D", "paper", f"h = {h}: {_g(lo)}-{_g(hi)}",
            f"h = {h - 1} {_g(x['nmse_missing'])}, h = {h} {_g(x['nmse'])}",
            "reproduced" if x["met"] else "not observed",
            f"criteria: h = {h} ≤ {_bar(tl['max_nmse'])} and a ratio ≥ {tl['min_ratio']:g} (best of "
            f"{len(p.tl_seeds)} seeds)"
            + (f"; the h = {h} run was still learning (half_gain {_g(gain)}): its NMSE is an upper bound"
               if gain is not None and gain >= BUDGET_TOLERANCE else "")))
    return claims


def _n(x: float | None) -> str:
    return prose_number(x)


def _one_layer(a: CalibrationAnalysis) -> str:
    r, D = a.reading, a.params.D
    v = next((v for v in a.head_count_verdicts if v["T"] == r["focus_T"]), None)
    if v is None or v["met"] is None or "full_seed_min" not in r:
        return f"*(The one-layer cells h = {D - 1} and h = {D} are not both trained at T = {r['focus_T']} here.)*"
    above_paper = r["full_paper"] is not None and r["full_seed_max"] < r["full_paper"]
    below_paper = r["missing_paper"] is not None and r["missing_seed_min"] > r["missing_paper"]
    text = (f"**One layer, $T = {r['focus_T']}$.** The criterion is {'met' if v['met'] else '**not met**'}. Every seed "
            f"at $h = D = {D}$ ends between {_n(r['full_seed_min'])} and {_n(r['full_seed_max'])}"
            + (f", below P1's mean at $h = {D}$ ({_n(r['full_paper'])})" if above_paper else "")
            + f", while every seed at $h = {D - 1}$ stays between {_n(r['missing_seed_min'])} and "
              f"{_n(r['missing_seed_max'])}"
            + (f", above P1's mean at $h = {D - 1}$ ({_n(r['missing_paper'])})" if below_paper else "")
            + (f": a fall of {_n(v['ratio'])} times" if v["ratio"] > 1 else f": a ratio of {_n(v['ratio'])}")
            + f" between $h = {D - 1}$ and $h = {D}$")
    if "earlier_gain_min" in r:
        text += f", where each earlier head gained {_n(r['earlier_gain_min'])} to {_n(r['earlier_gain_max'])} times"
    if "next_gain" in r:
        text += (f", and a head beyond $D$ gains a factor of {_n(r['next_gain'])} (best NMSE {_n(r['next_nmse'])} at "
                 f"$h = {D + 1}$)")
    if not v["met"]:
        return text + ". The engine does not reproduce P1's transition at this budget."
    return text + (f". That is the sharp transition at $h = D$ of P1's Table 2"
                   + (", sharper here than in P1's means (whose seeds scatter more)" if above_paper and below_paper
                      else "")
                   + ". So chapter 10's \"no sharp break at $h = D$\" at 3 000 steps was a verdict on that budget, "
                     "not on the theory or the engine: the engine trains a sharp retrieval when it is given "
                     f"{a.params.steps} steps.")


def _budget(a: CalibrationAnalysis) -> str:
    D = a.params.D
    if not a.budget:
        return "*(No budget check in this profile: `double_heads` is empty.)*"
    said = [f"$h = {b['h']}$ by {_n(b['change'])} times ({_n(b['nmse'])} to {_n(b['nmse_double'])}: "
            + ("less than" if b["sufficient"] else "more than" if b["sufficient"] is not None else "not comparable to")
            + f" {BUDGET_TOLERANCE:g}, " + ("it has plateaued)" if b["sufficient"] else "still learning)")
            for b in a.budget]
    cells = {b["h"]: b["sufficient"] for b in a.budget}
    predicted = cells.get(D - 1) is True and cells.get(D) is False
    widens = (cells.get(D - 1) is not None and cells.get(D) is not None
              and a.reading["budget_change"][str(D)] > a.reading["budget_change"][str(D - 1)])
    return (f"**Budget.** {'As predicted, d' if predicted else 'D'}oubling the steps at $T = "
            f"{a.params.double_seq_len}$ changes " + enumerated(said) + "."
            + ("" if predicted or D - 1 not in cells or D not in cells else
               f" The prediction ($h = {D - 1}$ sufficient, $h = {D}$ still learning) is **not observed**.")
            + (" Longer training would only widen the gap the verdict rests on." if widens else ""))


def _against(value: float, low: float | None, high: float | None) -> str:
    """Where ``value`` lies against P1's range [``low``, ``high``] ("" where P1 has none)."""
    return "" if low is None or high is None else "inside" if low <= value <= high else (
        "below" if value < low else "above")


def _two_layer(a: CalibrationAnalysis) -> str:
    r, x = a.reading, a.two_layer_verdict
    if x["met"] is None or "tl_T" not in r:
        return "*(The two-layer head count is not part of this profile: `tl_heads` is empty.)*"
    h, (lo, hi), (lo1, hi1) = x["h"], r["tl_paper"] or (None, None), r["tl_missing_paper"] or (None, None)
    inside, missing = _against(x["nmse"], lo, hi), _against(x["nmse_missing"], lo1, hi1)
    learning = r["tl_half_gain"] is not None and r["tl_half_gain"] >= BUDGET_TOLERANCE
    return (f"**Two layers, $T = {r['tl_T']}$.** The criterion is {'met' if x['met'] else '**not met**'}: the best "
            f"NMSE with {h} heads per layer is {_n(x['nmse'])}"
            + (f", {inside} P1's range ({_n(lo)} to {_n(hi)})" if inside else "")
            + f"; with {h - 1} head{'s' * (h > 2)} per layer it is {_n(x['nmse_missing'])}"
            + (f" ({missing} P1's range of {_n(lo1)} to {_n(hi1)})" if missing else "")
            + f", a ratio of {_n(x['ratio'])}"
            + (f"; the $h = {h}$ cells were still learning (half_gain {_n(r['tl_half_gain'])}), so their NMSE is an "
               "upper bound" if learning else "") + "."
            + (" Two layers learn a sharp retrieval when the retrieved value is linear in the token: what "
               "separates this target from InfoFlow's §4.1 (chapter 10), whose retrieved values are bilinear."
               if x["met"] else ""))


def _other_T(a: CalibrationAnalysis) -> str:
    r, p = a.reading, a.params
    others = [v for v in a.head_count_verdicts if v["T"] != r["focus_T"]]
    if not others or any(v["met"] is None for v in others):
        return f"*(This profile judges one layer at $T = {r['focus_T']}$ only.)*"
    Ts = enumerated([str(v["T"]) for v in others])
    met = [v["met"] for v in others]
    full = [v["nmse"] for v in a.head_count_verdicts]
    grows = all(x < y for x, y in zip(full, full[1:]))
    under = max(full) <= CRITERIA["head_count"]["max_nmse"]
    every = all(v["met"] for v in a.head_count_verdicts) and grows and under
    text = (f"**One layer, $T$ = {Ts}.** The criterion is "
            + ("met at " + ("both" if len(others) == 2 else "each") if all(met) else
               "**not met** at $T = " + enumerated([str(v["T"]) for v in others if not v["met"]]) + "$")
            + ": " + "; ".join(f"{_n(v['nmse'])} at $h = {p.D}$ against {_n(v['nmse_missing'])} at $h = {p.D - 1}$ at "
                               f"$T = {v['T']}$ (a ratio of {_n(v['ratio'])})" for v in others)
            + f". {'As predicted, t' if grows else 'Unlike the prediction, t'}he best NMSE at $h = D$ "
            + ("grows" if grows else "does not grow") + " with $T$ ("
            + ", ".join(_n(x) for x in full) + f" at $T$ = {enumerated([str(v['T']) for v in a.head_count_verdicts])}) and "
            + (f"stays below the bar of {_n(CRITERIA['head_count']['max_nmse'])}" if under else "crosses the bar")
            + (": the one-layer part of the prediction is observed at every $T$ of this profile." if every else
               ": the one-layer part of the prediction is **not observed**."))
    if "other_above_half_gain_min" in r:
        learning = r["other_above_half_gain_min"] >= BUDGET_TOLERANCE
        settled = ", ".join(f"{_n(a.below_D_max_half_gain[v['T']])} times at $T = {v['T']}$" for v in others
                            if a.below_D_max_half_gain.get(v["T"]) is not None)
        text += (f" No doubling check was run at $T$ = {Ts}: their $h \\ge {p.D}$ cells "
                 + ("were still learning at the end of the schedule" if learning else "had not all settled either")
                 + f" (their best NMSE fell {_n(r['other_above_half_gain_min'])} to "
                   f"{_n(r['other_above_half_gain_max'])} times over its second half; the curves below show it)"
                 + (", which can only widen the gap the verdict rests on" if learning else "")
                 + (f", while the $h = {p.D - 1}$ cells fell at most {settled} over the second half" if settled else "")
                 + ".")
    return text


def _learning(a: CalibrationAnalysis) -> str:
    r, D = a.reading, a.params.D
    if "above_half_gain_min" not in r:
        return f"*(No one-layer cell at $h \\ge {D}$ in this profile.)*"
    learning = r["above_half_gain_min"] >= BUDGET_TOLERANCE
    exceptions = [f"one $h = {x['h']}$ seed at $T = {x['T']}$ ({_n(x['half_gain'])})" for x in r["below_learning"]]
    settled_below = all(g is not None and g < BUDGET_TOLERANCE for g in a.below_D_max_half_gain.values())
    return (f"**Which cells were still learning, at every $T$.** Over the second half of the schedule, every cell at "
            f"$h \\ge D$ lowered its best NMSE {_n(r['above_half_gain_min'])} to {_n(r['above_half_gain_max'])} times"
            + (": all were still learning." if learning else ".")
            + (f" The cells below $D$ had settled or nearly: at most {_n(r['below_settled_max'])} times"
               if r["below_settled_max"] is not None else " No cell below $D$ had settled")
            + (", except " + enumerated(exceptions) if exceptions else "") + "."
            + (" So the ratios at $h = D$ are lower bounds: more steps lower the cells at and above $D$ and leave "
               f"those at $h = {D - 1}$ nearly unchanged." if learning and settled_below else ""))


def _not_trained(a: CalibrationAnalysis) -> str:
    missing = a.reading["not_trained"]
    if not missing:
        return "**Every configuration of the chapter's defaults is trained in this profile.**"
    h = a.two_layer_verdict["h"]
    rests = (f"; the two-layer verdict rests on $h = {h - 1}$ and $h = {h}$, which are trained"
             if a.two_layer_verdict["met"] is not None else "")
    return ("**Not yet in this profile.** The chapter's defaults also train the "
            + enumerated([f"{_PART_NAMES[name]} = {', '.join(map(str, values))}" for name, values in missing.items()])
            + ", which this profile leaves out (their prediction and criteria were committed before any of their runs)"
            + rests + ".")


def reading_paragraphs(a: CalibrationAnalysis) -> dict[str, str]:
    """The chapter's reading of its results as MyST paragraphs, by name (``one_layer``, ``budget``, ``two_layer``,
    ``other_T``, ``learning``, ``not_trained``), every number and every verdict-dependent word computed from ``a``
    (the notebook glues them, so a page executed under any profile says what its own tables show)."""
    return {"one_layer": _one_layer(a), "budget": _budget(a), "two_layer": _two_layer(a), "other_T": _other_T(a),
            "learning": _learning(a), "not_trained": _not_trained(a)}
