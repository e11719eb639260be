"""A chapter's claims as its verdict box and the claims page show them: each claim with the paper's statement or
number, ours, the verdict and why (the book's "Verdict" admonition at the top of a chapter and the page "Claims at
a glance" display the same :class:`Claim` objects, computed once by the chapter's analysis)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

__all__ = ["Claim", "ORIGINS", "VERDICTS", "verdict_box"]

#: The verdicts a claim can get ("consistent by construction": a check on the data a rule was calibrated on).
VERDICTS = ("reproduced", "reproduced qualitatively", "consistent by construction", "not observed",
            "not testable on CPU")

#: Whose a claim's "paper" cell is: the paper's own statement or published data (read in full), InfoFlow's statement
#: or number as its secondary summaries give it, or this book's reconstruction (or its own question).
ORIGINS = {"paper": "the paper", "summaries": "InfoFlow's summaries", "book": "this book"}


@dataclass(frozen=True)
class Claim:
    """One claim of ``chapter`` (its notebook's stem): ``source`` (theorem, section or "this book's own"),
    ``statement`` (as the paper states it or this book poses it), ``origin`` (a key of :data:`ORIGINS`), the
    ``paper``'s number or statement, ``ours``, the ``verdict`` (one of :data:`VERDICTS`) and the ``reason``."""

    chapter: str
    source: str
    statement: str
    origin: str
    paper: str
    ours: str
    verdict: str
    reason: str

    def __post_init__(self) -> None:
        if self.verdict not in VERDICTS:
            raise ValueError(f"claim {self.statement!r} of {self.chapter}: verdict {self.verdict!r} is not one of "
                             f"{VERDICTS}")
        if self.origin not in ORIGINS:
            raise ValueError(f"claim {self.statement!r} of {self.chapter}: origin {self.origin!r} is not one of "
                             f"{sorted(ORIGINS)}")
        for name in ("chapter", "source", "statement", "paper", "ours", "reason"):
            if not isinstance(getattr(self, name), str) or not getattr(self, name):
                raise ValueError(f"claim {self.statement!r}: {name} must be a non-empty string")

    def to_dict(self) -> dict[str, str]:
        """The claim as JSON types (a chapter records its claims so; :meth:`from_dict` reads them back)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Claim":
        return cls(**{k: data[k] for k in cls.__dataclass_fields__})


def verdict_box(claims: Sequence[Claim]) -> str:
    """The MyST Markdown of a chapter's "Verdict" admonition: one line per claim with the paper's statement, ours and
    the verdict (the chapter's notebook glues it into its first cell)."""
    lines = [f"* **{c.verdict}**: *{c.source}*, {c.statement}. Paper ({ORIGINS[c.origin]}): {c.paper}. Ours: {c.ours}."
             for c in claims]
    body = "\n".join(lines) if lines else "No claim of this chapter is judged under this profile."
    return f":::{{admonition}} Verdict\n:class: tip\n{body}\n:::"
