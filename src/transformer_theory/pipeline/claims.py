"""The book's "claims at a glance" page: one row per claim of the two papers (and of this book's own tests), with
the paper's number, ours and the verdict: the :class:`~transformer_theory.chapters.verdicts.Claim` objects each
chapter computed and recorded (``verdicts`` in ``results/book/<notebook>.json``), the same its "Verdict" box shows.
This module formats them; it judges nothing.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from transformer_theory.chapters.verdicts import ORIGINS, VERDICTS, Claim
from transformer_theory.infoflow.efficiency import EFFICIENCY, SIBLING_GAP
from transformer_theory.pipeline.notebooks import list_notebooks
from transformer_theory.storage.paths import project_root
from transformer_theory.storage.results import write_text_atomic
from transformer_theory.tables import markdown_table

#: The committed results the page reads (the book profile's).
RESULTS = Path("results") / "book"

def committed_values(chapter: str, root: Path | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
    """The values ``chapter`` recorded in its committed book-profile results and the parameters it ran with
    (``ValueError`` naming the file if it is missing, not JSON or not a finished run)."""
    path = (root or project_root()) / RESULTS / f"{chapter}.json"
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        raise ValueError(f"{path} is missing: the claims page reads the committed book results") from None
    except ValueError as exc:
        raise ValueError(f"{path} is not valid JSON ({exc})") from None
    if (not isinstance(data, dict) or data.get("status") != "ok" or not isinstance(data.get("values"), dict)
            or not isinstance(data.get("parameters"), dict)):
        raise ValueError(f"{path} is not a finished run's results (status {data.get('status')!r})"
                         if isinstance(data, dict) else f"{path} does not hold a JSON object")
    return data["values"], data["parameters"]


def recorded_claims(root: Path | None = None) -> list[Claim]:
    """Every chapter's recorded :class:`~transformer_theory.chapters.verdicts.Claim` objects (``verdicts`` in its
    committed book results), in the book's order."""
    claims = []
    for chapter in (p.stem for p in list_notebooks()):
        claims += [Claim.from_dict(c) for c in committed_values(chapter, root)[0].get("verdicts", [])]
    return claims


def claim_rows(root: Path | None = None) -> list[dict[str, str]]:
    """:func:`recorded_claims` as rows: ``chapter``, ``source``, ``claim``, ``origin``, ``paper``, ``ours``,
    ``verdict`` (one of :data:`VERDICTS`) and ``reason``."""
    return [{**c.to_dict(), "claim": c.statement} for c in recorded_claims(root)]


def claims_page(root: Path | None = None) -> str:
    """The page's Markdown: the introduction, the counts by verdict and the table (chapters as links)."""
    rows = recorded_claims(root)
    counts = ", ".join(f"{sum(c.verdict == v for c in rows)} {v}" for v in VERDICTS)
    table = markdown_table([{"chapter": f"[{c.chapter[:2]}](notebooks/{c.chapter}.ipynb)",
                             "claim": f"*{c.source}*: {c.statement}",
                             "paper (whose)": f"{c.paper} ({ORIGINS[c.origin]})", "ours": c.ours,
                             "verdict, and why": f"**{c.verdict}**: {c.reason}"} for c in rows])
    return "\n".join([
        "# Claims at a glance", "",
        "Every claim the book tests, with the paper's number, ours and the verdict. The page is generated from the "
        "committed book-profile results (`results/book/`) by `python -m transformer_theory claims`; the verdicts are "
        "computed from the values each chapter recorded, so a chapter and this page cannot disagree. Verdicts: "
        "*reproduced* (the paper's statement holds in our runs, within the chapter's criterion), *reproduced "
        "qualitatively* (the direction holds, the size or the mechanism does not match), *consistent by "
        "construction* (a check on the very data a rule of this book was calibrated on: not a test), *not observed* "
        "(our runs do not show it; the reason says whether that judges the theory or our training), *not testable "
        "on CPU*. The \"paper\" cell says whose it is: the paper's own statement or published data, InfoFlow's as its "
        "secondary summaries give it (its full text could not be read), or this book's reconstruction or question.",
        "", "**Glossary.**", "",
        "* **NMSE**: the normalised mean squared error, mean((ŷ − y)²) / Var(y) on held-out samples: 1 is no better "
        "than predicting the mean, 0 is exact. A cell's NMSE is the best over checkpoints and seeds.",
        "* **(D, D)**, **(D−1, D)**, **(D, D−1)**: a two-layer model with that many heads in layer 1 and layer 2; the "
        "*ratio* is the better missing-head NMSE over the (D, D) NMSE.",
        "* **half_gain**: a run's best NMSE over the first half of its schedule divided by its best over all of it; "
        "1.5 or more means it was still learning when the schedule ended. A verdict rests on a sufficient budget "
        "only where doubling the budget changed its cells by less than 1.5 times.",
        "* **P1**: InfoFlow's predecessor paper on the head count (Yu et al., ICLR 2026), read in full.",
        "* **the calculator**: this book's reconstruction of InfoFlow's rules (information sets, propagation modes, "
        "cost exponents; chapter 06), which predicts whether a configuration is efficient.",
        "* **reconstruction**: a statement, constant or exponent this book rebuilt from summaries of a paper; never "
        "the authors' wording.",
        "", f"**What \"efficient\" means in this book.** A configuration is *observed efficient* when its best "
        f"validation NMSE at the largest trained T is at most {EFFICIENCY['nmse_threshold']:g} and at most "
        f"{EFFICIENCY['max_growth']:g} times its best validation NMSE at the smallest T "
        "(`transformer_theory.infoflow.efficiency.EFFICIENCY`): a low error that does not grow with T, the trace of "
        f"an exponent that does not grow with T; and, calibrated on P1's known answers (its h = 3 plateaus low), "
        f"within {SIBLING_GAP:g} times of the best configuration trained on the same target at the same budget at the "
        "largest T: inefficiency shows as a plateau above an efficient sibling. Each chapter lists the verdicts the "
        "calibration changed (chapter 12's were re-judged after its runs were read). Chapters 07, 08, 10 and 12 "
        "judge by it, at the budget their runs were "
        "trained with; chapters whose own criterion was committed before their runs show both. The budget matters: "
        "the threshold was set from runs of 8 000 to 16 000 steps on the calibration targets (chapter 12), so an "
        "\"observed inefficient\" at a smaller budget, or on runs still learning (their best NMSE fell 1.5 times or more "
        "over the second half of the schedule), judges the training as much as the rule.",
        "", f"{len(rows)} claims: {counts}.", "", table, "",
    ])


def write_claims_page(output: str | Path, root: Path | None = None) -> Path:
    """Write :func:`claims_page` to ``output`` atomically; returns the path."""
    path = Path(output)
    write_text_atomic(path, claims_page(root))
    return path
