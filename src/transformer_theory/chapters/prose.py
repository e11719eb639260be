"""How a chapter's analysis writes its numbers into a claim's cells and into the prose it glues into its page (one
rule for the chapters that compute their reading, so that the same number reads the same on every page)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from transformer_theory.tables import prose_number

__all__ = ["enumerated", "significant", "slashed"]


def significant(x: float) -> str:
    """A number as a claim quotes it: :func:`~transformer_theory.tables.prose_number` in plain text (3 significant
    digits from 1 up, a whole number from 1 000 to 999 999, 2 digits below 1)."""
    return prose_number(x, math=False)


def slashed(xs: Iterable[float]) -> str:
    """Numbers as a claim lists them: ``a / b / c``, each :func:`significant`."""
    return " / ".join(significant(x) for x in xs)


def enumerated(xs: Iterable[Any]) -> str:
    """Items as prose lists them: ``a``, ``a and b``, ``a, b and c``."""
    items = [str(x) for x in xs]
    return ", ".join(items[:-1]) + f" and {items[-1]}" if len(items) > 1 else "".join(items)
