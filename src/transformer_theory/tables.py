"""The table helpers of the book: rows of values as a Markdown table (chapters and the reproducibility page), and a
number as a chapter's prose writes it (:func:`prose_number`).

Chapters show a table with ``display(Markdown(markdown_table(rows)))``; the book renders Markdown outputs
as MyST (``nb_render_markdown_format: myst`` in ``book/_config.yml``), so cells may hold ``$math$``,
``**bold**``, links and code.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any


def format_cell(value: Any) -> str:
    """One cell: ``None`` → ``n/a``, booleans → ``yes``/``no``, lists and tuples → ``(a,b)``, floats to 3
    significant digits, anything else as ``str``; ``|`` is escaped and line breaks become spaces."""
    if value is None:
        text = "n/a"
    elif isinstance(value, bool):
        text = "yes" if value else "no"
    elif isinstance(value, (list, tuple)):
        text = "(" + ",".join(str(v) for v in value) + ")"
    elif isinstance(value, float):
        text = f"{value:.3g}"
    else:
        text = str(value)
    return " ".join(text.replace("|", "\\|").split())


def prose_number(value: float | None, math: bool = True) -> str:
    """A number for a sentence: ``n/a`` for ``None``, 3 significant digits from 1 up (a whole number from 1 000 to
    999 999: ``1006``, not ``1.01e+03``) and 2 below; with ``math``, a number under 0.01 as MyST math
    ``$a \\times 10^{b}$`` (one decimal of ``a``), else as Python's ``.2g``."""
    if value is None:
        return "n/a"
    if 999.5 <= abs(value) < 999_999.5:
        return f"{value:.0f}"
    if abs(value) >= 1:
        return f"{value:.3g}"
    if not math or value == 0 or abs(value) >= 1e-2:
        return f"{value:.2g}"
    mantissa, exponent = f"{value:.1e}".split("e")
    return f"${mantissa} \\times 10^{{{int(exponent)}}}$"


def markdown_table(rows: Sequence[Mapping[str, Any]], columns: Sequence[str] | None = None) -> str:
    """``rows`` as a Markdown table with ``columns`` (default: the keys of the first row, in order).

    Raises ``ValueError`` when there are neither rows nor columns, or when a row lacks a column.
    """
    if columns is None:
        if not rows:
            raise ValueError("markdown_table: no rows and no columns, nothing to show")
        columns = list(rows[0])
    for i, row in enumerate(rows):
        missing = [c for c in columns if c not in row]
        if missing:
            raise ValueError(f"markdown_table: row {i} has no column {', '.join(map(repr, missing))}")
    lines = ["| " + " | ".join(format_cell(c) for c in columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(format_cell(row[c]) for c in columns) + " |" for row in rows]
    return "\n".join(lines)


def collapsed(table: str, title: str) -> str:
    """``table`` (Markdown) inside a MyST admonition that the book renders folded (the ``dropdown`` class of
    sphinx-togglebutton, which Jupyter Book 1 includes): a long table goes below its key rows, one click away."""
    if not title.strip():
        raise ValueError("collapsed: the title must say what the folded table holds")
    return f":::{{admonition}} {title}\n:class: dropdown\n\n{table}\n:::"
