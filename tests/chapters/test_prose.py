"""How a chapter's analysis writes numbers into claims and prose (chapters.prose)."""

from __future__ import annotations

import pytest

from transformer_theory.chapters.prose import enumerated, significant, slashed


@pytest.mark.parametrize("x, text", [(0.01234, "0.012"), (1.5e-5, "1.5e-05"), (11.23, "11.2"), (336.4, "336"),
                                     (999.6, "1000"), (1006.2, "1006"), (-1500.0, "-1500"), (123456.7, "123457"),
                                     (2.5e6, "2.5e+06")])
def test_significant_quotes_three_digits_and_whole_thousands(x: float, text: str) -> None:
    assert significant(x) == text


def test_lists_read_as_prose() -> None:
    assert slashed([1006.2, 0.5]) == "1006 / 0.5"
    assert enumerated([]) == "" and enumerated(["a"]) == "a" and enumerated(["a", "b", "c"]) == "a, b and c"
