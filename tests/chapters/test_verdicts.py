"""Typed claims (chapters.verdicts.Claim) and the Verdict box."""

from __future__ import annotations

import pytest

from transformer_theory.chapters.verdicts import Claim, verdict_box

CLAIM = dict(chapter="07_depth_separation", source="InfoFlow, Theorem 1", statement="two layers beat one",
             origin="summaries", paper="theory", ours="25x", verdict="reproduced", reason="the criterion")


def test_a_claim_refuses_an_unknown_verdict_or_origin_naming_it() -> None:
    with pytest.raises(ValueError, match="verdict 'proved' is not one of"):
        Claim(**{**CLAIM, "verdict": "proved"})
    with pytest.raises(ValueError, match="origin 'blog' is not one of"):
        Claim(**{**CLAIM, "origin": "blog"})
    with pytest.raises(ValueError, match="ours must be a non-empty string"):
        Claim(**{**CLAIM, "ours": ""})
    assert Claim.from_dict(Claim(**CLAIM).to_dict()) == Claim(**CLAIM)


def test_the_box_lists_each_claim_with_the_papers_and_ours() -> None:
    box = verdict_box([Claim(**CLAIM)])
    assert box.startswith(":::{admonition} Verdict") and box.endswith(":::")
    assert "**reproduced**" in box and "Paper (InfoFlow's summaries): theory" in box and "Ours: 25x" in box
    assert "No claim of this chapter is judged" in verdict_box([])
