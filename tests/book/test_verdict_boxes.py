"""Every chapter that judges a claim (02 to 14) opens with its "Verdict" admonition, before its first section: the
same Claim objects the claims page shows (glued from the chapter's own computation)."""

from __future__ import annotations

import re

import pytest


CHAPTERS = [f"{n:02d}" for n in range(2, 15)]


@pytest.mark.parametrize("number", CHAPTERS)
def test_the_verdict_comes_before_the_first_section(book_html, number) -> None:
    pages = sorted((book_html / "notebooks").glob(f"{number}_*.html"))
    assert len(pages) == 1, pages
    html = pages[0].read_text()
    html = html[html.index("<article"):]  # the chapter itself (the page header holds a printed table of contents)
    verdict = re.search(r'<p class="admonition-title">Verdict</p>', html)
    first_section = re.search(r"<h2\b", html)
    assert verdict, f"{pages[0].name}: no Verdict admonition"
    assert first_section is None or verdict.start() < first_section.start(), pages[0].name
    box = html[verdict.start():html.index("</div>", verdict.start())]
    assert "Paper (" in box or "No claim of this chapter" in box
