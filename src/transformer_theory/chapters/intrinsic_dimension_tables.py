"""Chapter 10's tables as its page shows them (InfoFlow §4.1 and the predecessor's Table 2): Markdown drawn from the
:class:`~transformer_theory.chapters.intrinsic_dimension_analysis.IntrinsicDimensionAnalysis` (and, before any run,
the calculator's :func:`~transformer_theory.chapters.intrinsic_dimension.prediction_table`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from transformer_theory.chapters.recipes import (CLIPPED_EVERY_D_PREDICTION, CLIPPED_PREDICTION, RECIPE_MAX_FULL,
                                                 RECIPE_PREDICTION)
from transformer_theory.chapters.intrinsic_dimension_analysis import CONFIGS, IntrinsicDimensionAnalysis
from transformer_theory.tables import format_cell, markdown_table

__all__ = ["by_step", "markdown_tables", "prediction_markdown"]


def by_step(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows of :func:`~transformer_theory.chapters.intrinsic_dimension.ratios_during_training` as a table: one row per
    D, one column ``step <n>`` per fraction of the schedule."""
    out: dict[int, dict[str, Any]] = {}
    for r in rows:
        out.setdefault(r["D"], {"D": r["D"]})[f"step {r['step']}"] = r["ratio"]
    return list(out.values())


def _agreements(values: Sequence[float]) -> str:
    return ", ".join(f"{v:.2f}" for v in values)


def _retrieval(rows: Sequence[dict[str, Any]]) -> str:
    """Rows of :func:`~transformer_theory.chapters.intrinsic_dimension.retrieval_table` as a Markdown table (its
    columns also without rows: no weights kept)."""
    cells = [{"D": r["D"], "seed": r["seed"], "terms retrieved": f"{r['learned']} of {r['D']}",
              "layer 1, per term": _agreements(r["layer1"]), "layer 2, per term": _agreements(r["layer2"]),
              "layer 1 at init": _agreements(r["init_layer1"]), "layer 2 at init": _agreements(r["init_layer2"])}
             for r in rows]
    return markdown_table(cells, ["D", "seed", "terms retrieved", "layer 1, per term", "layer 2, per term",
                                  "layer 1 at init", "layer 2 at init"])


def _efficient(flag: bool | None) -> str:
    return "n/a" if flag is None else "efficient" if flag else "inefficient"


def _seeds(values: dict[int, float | None]) -> str:
    """Each seed's best NMSE of a cell."""
    return ", ".join(f"{v:.3g}" for v in values.values() if v is not None)


def _ratio_rows(ratios: Sequence[dict[str, Any]],
                columns: Callable[[dict[str, Any]], dict[str, Any]]) -> list[dict[str, Any]]:
    """The NMSEs, the ratio ``columns``, the bar and the verdict of each D of :func:`separation_ratios`."""
    return [{"D": s["D"], "(D, D)": s["nmse_full"], "better missing-head": s["nmse_missing"], **columns(s),
             "bar": "–" if s["bar"] is None else f"≥ {s['bar']:g}",
             "verdict": "no bar" if s["met"] is None else ("met" if s["met"] else "not met")} for s in ratios]


def prediction_markdown(rows: Sequence[dict[str, Any]]) -> str:
    """The calculator's verdict on each cell (:func:`prediction_table`, before any run) as a Markdown table."""
    return markdown_table([
        {"D": r["D"], "(h1, h2)": f"({r['h1']}, {r['h2']})", "column": r["config"], "E": r["E"],
         "predicted": _efficient(r["predicted_efficient"]), "exponent k": r["predicted_exponent"],
         "InfoFlow NMSE (T = 64)": r["paper_nmse"], "why": r["bottleneck"] or "every retrieval has a head"}
        for r in rows])


def markdown_tables(a: IntrinsicDimensionAnalysis) -> dict[str, str]:
    """The chapter's tables as Markdown, by name: ``table`` (beside InfoFlow's), ``ratios``, ``during``,
    ``retrieval``, ``exponents``, ``length``, ``efficiency``, ``long_ratios``, ``long_during``, ``long_retrieval``,
    ``head_count``, ``recipe_prediction`` and ``recipe`` (the recipe part) and ``claims``."""
    p, short = a.params, {s["D"]: s["ratio"] for s in a.ratios}
    long_ratios = _ratio_rows(a.long_ratios, lambda s: {
        f"ratio ({p.ls_steps} steps)": s["ratio"], f"ratio ({p.steps} steps, above)": short.get(s["D"]),
        f"ratio ({p.steps} steps, same seeds)": a.long_same_seed_ratio.get(s["D"])})
    return {
        "table": markdown_table([
            {"D": r["D"], "(h1, h2)": f"({r['h1']}, {r['h2']})", "column": r["config"], "ours": r["nmse"],
             "seeds": _seeds(r["seed_nmse"]),
             "InfoFlow (T = 64)": r["paper_nmse"], "predicted": _efficient(r["predicted_efficient"])}
            for r in a.table]),
        "ratios": markdown_table(_ratio_rows(a.ratios, lambda s: {"ratio (ours)": s["ratio"],
                                                                  "ratio (InfoFlow)": s["paper_ratio"]})),
        "during": markdown_table(by_step(a.during)),
        "retrieval": _retrieval(a.retrieval),
        "exponents": markdown_table([{"T": r["T"], "E": r["E"], "Td/E": r["T"] * 4 / r["E"],
                                      **{f"k {c}": k for c, k in r["exponents"].items()}} for r in a.length]),
        "length": markdown_table([
            {"T": r["T"], **{c: r["nmse"][c] for c in CONFIGS},
             "seeds": "; ".join(f"{c}: {_seeds(r['seed_nmse'][c])}" for c in CONFIGS),
             "ratio": r["ratio"], "k missing": r["exponents"]["(D-1,D)"]} for r in a.length]),
        "efficiency": markdown_table([
            {"configuration": r["configuration"], **{f"T = {T}": format_cell(v) for T, v in r["nmse_by_T"].items()},
             "predicted": _efficient(r["predicted_efficient"]), "absolute rule": _efficient(r["absolute_efficient"]),
             "observed (book criterion)": _efficient(r["observed_efficient"]), "agrees": r["agrees"]}
            for r in a.efficiency]) if a.efficiency else "*(One sequence length: the book's criterion needs two.)*",
        "long_ratios": markdown_table(long_ratios),
        "long_during": markdown_table(by_step(a.long_during)),
        "long_retrieval": _retrieval(a.long_retrieval),
        "head_count": markdown_table([
            {"T": r["T"], "h": r["h"], "ours": r["nmse"],
             "P1 Table 2": None if r["paper_nmse"] is None else f"{r['paper_nmse']:.3g} ± {r['paper_std']:.2g}",
             "predicted": _efficient(r["predicted_efficient"]), "exponent k": r["predicted_exponent"]}
            for r in a.head_count]),
        "recipe_prediction": f"> **The prediction** (`RECIPE_PREDICTION`): {RECIPE_PREDICTION}" + (
            f"\n>\n> **The candidate's prediction** (`CLIPPED_PREDICTION`): {CLIPPED_PREDICTION}\n>\n> **Its "
            f"prediction at every D** (`CLIPPED_EVERY_D_PREDICTION`): {CLIPPED_EVERY_D_PREDICTION}"
            if a.params.rc_candidate == "term curriculum, clipped" and a.params.rc_candidate_cells else ""),
        "recipe": markdown_table([
            {"role": r["role"], "recipe": r["arm"], "D": r["D"], "T": r["T"], "(D, D)": r["nmse_full"],
             "better missing-head": r["nmse_missing"], "ratio (ours)": r["ratio"], "ratio (InfoFlow, T = 64)":
             r["paper_ratio"], "bar": "–" if r["bar"] is None else f"≥ {r['bar']:g}, (D, D) ≤ {RECIPE_MAX_FULL:g}",
             "verdict": "no bar" if r["met"] is None else ("met" if r["met"] else "not met"),
             "half_gain (D, D)": r["half_gain"]} for r in a.recipe.rows]),
        "claims": markdown_table([{"claim": name, "holds": held} for name, held in a.claims.items()]
                                 or [{"claim": "none in this profile", "holds": None}])}
