"""Open every page of the rendered book in headless Chromium and check what a reader would see.

Every math element is typeset by the offline MathJax, with no error node and no doubled backslash in its TeX;
the text outside code shows no raw Markdown or TeX (TeX delimiters, table rows, ``**bold**``, ``$…$``); every
image loaded; no console errors; every internal link (and its #anchor) resolves; every chapter ends with its
"Run it yourself" box; every figure of a chapter has its provenance line under it
(:mod:`transformer_theory.plotting.provenance`); no page cites the project's internal notes; no table or figure
is wider than its column or reaches past the window, and no page scrolls sideways, at a 1 280-pixel window. With
``--screenshots``, a full-page screenshot of each page goes to build/screenshots/
(``.venv/bin/python -m pytest tests/book --screenshots``).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Callable
from urllib.parse import quote, unquote, urldefrag, urlparse

import pytest

from conftest import HTML
from transformer_theory.pipeline.rerun import TITLE as BOX_TITLE

PAGES = sorted(
    p.relative_to(HTML).as_posix()
    for p in HTML.rglob("*.html")
    if not p.relative_to(HTML).parts[0].startswith("_")
) if HTML.is_dir() else []

REDIRECT = re.compile(r'<meta http-equiv="Refresh" content="0; url=([^"]+)" />')
REDIRECTS = {p: m.group(1) for p in PAGES if (m := REDIRECT.fullmatch((HTML / p).read_text().strip()))}
CONTENT_PAGES = [p for p in PAGES if p not in REDIRECTS]
CHAPTERS = [p for p in CONTENT_PAGES if p.startswith("notebooks/")]


def by_page(pages: list[str]) -> list:
    """``pages`` as parameters whose checks share one xdist group per page (``--dist loadgroup``), so that one
    worker visits each page once."""
    return [pytest.param(p, marks=pytest.mark.xdist_group(p)) for p in pages]


#: What raw Markdown or TeX looks like once it reached the reader as text.
RAW_MARKUP = {
    "TeX delimiter": re.compile(r"\\\(|\\\)|\\\[|\\\]|\$\$|\\begin\{|\\frac|\\sum|\\mathbb"),
    "table separator row": re.compile(r"\|(?:\s*:?[-\u2013\u2014]+:?\s*\|)+"),  # |---|---|, or |—|—| once typeset
    "**bold**": re.compile(r"\*\*[^*\s][^*]*\*\*"),
    "$math$": re.compile(r"\$[^$\s][^$]*\$"),
}
#: ``\\rho`` in TeX is a line break followed by "rho": a backslash doubled in the source.
DOUBLED_BACKSLASH = re.compile(r"\\\\[A-Za-z]")
#: The project's internal notes, which the book must not cite (code included: readers see it too).
INTERNAL_REFERENCE = re.compile(r"seed summar|spec §|\[INF\]|shared/", re.IGNORECASE)

TEXT_OUTSIDE_CODE = """root => {
    const skip = "pre, code, kbd, samp, script, style, textarea, mjx-container";
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT, {acceptNode: node =>
        node.parentElement.closest(skip) ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT});
    const texts = [];
    while (walker.nextNode()) texts.push(walker.currentNode.nodeValue);
    return texts;
}"""

#: Tables and figures wider than the content box of their container (a table that scrolls inside its wrapper), or
#: reaching past the window's right edge.
TOO_WIDE = """() => {
    const window_width = document.documentElement.clientWidth;
    const name = el => el.tagName === "IMG" ? `figure ${el.getAttribute("src").split("/").pop().slice(0, 12)}`
        : `table "${el.innerText.trim().slice(0, 40)}"`;
    return Array.from(document.querySelectorAll("main table, main img")).flatMap(el => {
        const column = el.parentElement, style = getComputedStyle(column), box = el.getBoundingClientRect();
        const width = column.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
        return box.width > width + 1 ? [`${name(el)}: ${Math.round(box.width)} px in a ${Math.round(width)} px column`]
            : box.right > window_width + 1 ? [`${name(el)}: reaches ${Math.round(box.right)} px of ${window_width}`]
            : [];
    });
}"""

#: Figures of cell outputs not followed, in their cell, by a provenance line before the next figure.
WITHOUT_PROVENANCE = """() => Array.from(document.querySelectorAll("main .cell_output img")).filter(img => {
    const items = Array.from(img.closest(".cell").querySelectorAll(".cell_output img, .figure-provenance"));
    const next = items[items.indexOf(img) + 1];
    return !(next && next.classList.contains("figure-provenance"));
}).map(img => img.getAttribute("src").split("/").pop().slice(0, 16))"""

LAST_CELL_BOX = """title => {
    const cells = document.querySelectorAll("main .cell");
    const last = cells.length ? cells[cells.length - 1] : null;
    const box = last && Array.from(last.querySelectorAll(".admonition"))
        .find(a => a.querySelector(".admonition-title")?.textContent.trim() === title);
    return box ? box.innerText : null;
}"""


@dataclass(frozen=True)
class RenderedPage:
    """What one page showed in the browser."""

    errors: list[str]
    n_math: int
    n_typeset: int
    math_errors: list[str]
    tex_sources: list[str]
    texts: list[str]
    main_text: str
    broken_images: list[str]
    links: list[str]
    last_cell_box: str | None
    too_wide: list[str]
    page_overflow: int
    without_provenance: list[str]


@pytest.fixture(scope="session")
def rendered(server: str, browser, screenshots: Path | None) -> Callable[[str], RenderedPage]:
    """Visit a page once (with its screenshot, where ``--screenshots`` asks for them) and keep what it showed for
    every check of that page."""
    cache: dict[str, RenderedPage] = {}

    def visit(page_path: str) -> RenderedPage:
        if page_path not in cache:
            cache[page_path] = _visit(browser, f"{server}/{page_path}", page_path, screenshots)
        return cache[page_path]

    return visit


def _visit(browser, url: str, page_path: str, screenshots: Path | None) -> RenderedPage:
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    errors: list[str] = []
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(url, wait_until="load")
    n_math = page.locator(".math").count()
    tex_sources: list[str] = []
    if n_math:
        page.wait_for_function("window.MathJax && MathJax.startup && MathJax.startup.promise", timeout=20000)
        page.evaluate("MathJax.startup.promise")
        page.wait_for_function(f"document.querySelectorAll('mjx-container').length >= {n_math}", timeout=20000)
        tex_sources = page.evaluate("Array.from(MathJax.startup.document.math, item => item.math)")
    if screenshots is not None:
        screenshots.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(screenshots / (page_path.replace("/", "__").removesuffix(".html") + ".png")),
                        full_page=True)
    result = RenderedPage(
        errors=errors,
        n_math=n_math,
        n_typeset=page.locator("mjx-container").count(),
        math_errors=page.evaluate(
            "Array.from(document.querySelectorAll('mjx-merror'), e => e.getAttribute('data-mjx-error') || e.textContent)"
        ),
        tex_sources=tex_sources,
        texts=page.locator("main").evaluate(TEXT_OUTSIDE_CODE),
        main_text=page.inner_text("main"),
        broken_images=page.evaluate(
            "Array.from(document.images).filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.src)"
        ),
        links=page.evaluate("Array.from(document.querySelectorAll('a[href]')).map(a => a.getAttribute('href'))"),
        last_cell_box=page.evaluate(LAST_CELL_BOX, BOX_TITLE),
        too_wide=page.evaluate(TOO_WIDE),
        page_overflow=page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth"),
        without_provenance=page.evaluate(WITHOUT_PROVENANCE),
    )
    page.close()
    return result


def raw_markup(texts: list[str]) -> Counter:
    """How often each kind of raw markup occurs in the text nodes ``texts``."""
    return Counter({kind: n for kind, pattern in RAW_MARKUP.items()
                    if (n := sum(len(pattern.findall(t)) for t in texts))})


@pytest.mark.parametrize("text, kind", [
    ("| stage | blocks |\n|---|---|\n| separation | 1 |", "table separator row"),
    ("| stage | blocks | |\u2014|\u2014| | separation | 1 |", "table separator row"),  # as CommonMark shows it
    ("| **total (ours)** | 10 |", "**bold**"),
    ("| paper, $2M + 2N + 1$ | 15 |", "$math$"),
    ("one half is \\frac{1}{2}", "TeX delimiter"),
])
def test_raw_markup_is_recognised(text: str, kind: str) -> None:
    assert raw_markup([text]) == Counter({kind: 1})


def test_prose_and_typeset_tex_are_not_flagged() -> None:
    assert not raw_markup(["a | b", "|x| < 1 and |y| ≤ N − 1", "x ** 2", "costs 5 $ or 6 $", "2 ** 3 = 8"])
    assert [bool(DOUBLED_BACKSLASH.search(t)) for t in ("vv^\\\\top", "\\le N - 1", "a \\\\ b")] == [True, False, False]


def test_width_rules_catch_wide_content(browser) -> None:
    """A table scrolling inside its 300-pixel wrapper, a figure wider than its column, a figure past the window."""
    page = browser.new_page(viewport={"width": 800, "height": 600})
    figure = "data:image/svg+xml," + quote('<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"/>')
    page.set_content(f"""<main>
        <div style="width: 300px; overflow-x: auto"><table><tr>{'<td>wide_cell_text</td>' * 30}</tr></table></div>
        <div style="width: 300px"><img src="{figure}" style="width: 500px"></div>
        <div style="width: 300px"><table><tr><td>fits</td></tr></table></div>
        <div style="margin-left: 700px; width: 300px"><img src="{figure}" style="width: 200px"></div></main>""")
    too_wide = page.evaluate(TOO_WIDE)
    overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    page.close()
    assert [w.split()[0] for w in too_wide] == ["table", "figure", "figure"], too_wide
    assert all("in a 300 px column" in w for w in too_wide[:2]) and "reaches 908 px of 800" in too_wide[2], too_wide
    assert overflow > 0


def test_the_provenance_rule_finds_a_figure_without_its_line(browser) -> None:
    page = browser.new_page()
    figure = '<div class="cell_output"><img src="x/{}.png"></div>'
    line = '<p class="figure-provenance">Computed in this page</p>'
    page.set_content(f"""<main><div class="cell">{figure.format("first")}{line}{figure.format("second")}</div>
        <div class="cell">{figure.format("third")}</div><div class="cell">{line}</div>
        <div class="cell">{figure.format("fourth")}<details class="figure-provenance"></details></div></main>""")
    missing = page.evaluate(WITHOUT_PROVENANCE)
    page.close()
    assert missing == ["second.png", "third.png"]


def test_book_has_pages(book_html: Path) -> None:
    assert "index.html" in PAGES and CHAPTERS


@pytest.mark.parametrize("page_path", by_page(CONTENT_PAGES))
def test_math_is_typeset_without_errors(page_path: str, rendered) -> None:
    page = rendered(page_path)
    assert page.n_typeset >= page.n_math, f"{page_path}: {page.n_math - page.n_typeset} math elements not typeset"
    assert not page.math_errors, f"{page_path}: {len(page.math_errors)} MathJax errors: {page.math_errors[:5]}"
    doubled = [tex for tex in page.tex_sources if DOUBLED_BACKSLASH.search(tex)]
    assert not doubled, f"{page_path}: {len(doubled)} formulas with a doubled backslash: {doubled[:5]}"


@pytest.mark.parametrize("page_path", by_page(CONTENT_PAGES))
def test_no_raw_markup_outside_code(page_path: str, rendered) -> None:
    page = rendered(page_path)
    found = raw_markup(page.texts)
    examples = [t.strip()[:80] for t in page.texts if any(p.search(t) for p in RAW_MARKUP.values())]
    assert not found, f"{page_path}: raw markup {dict(found)}, e.g. {examples[:3]}"


@pytest.mark.parametrize("page_path", by_page(CONTENT_PAGES))
def test_no_internal_references(page_path: str, rendered) -> None:
    cited = INTERNAL_REFERENCE.findall(rendered(page_path).main_text)
    assert not cited, f"{page_path}: cites the project's internal notes: {cited}"


@pytest.mark.parametrize("page_path", by_page(CONTENT_PAGES))
def test_images_load_and_no_console_errors(page_path: str, rendered) -> None:
    page = rendered(page_path)
    assert not page.errors, f"console errors on {page_path}: {page.errors}"
    assert not page.broken_images, f"images that did not load on {page_path}: {page.broken_images}"


@pytest.mark.parametrize("page_path", by_page(CONTENT_PAGES))
def test_internal_links_resolve(page_path: str, rendered, book_html: Path) -> None:
    for href in rendered(page_path).links:
        check_internal_link(page_path, href, book_html)


@pytest.mark.parametrize("page_path", REDIRECTS)
def test_redirect_resolves(page_path: str, book_html: Path) -> None:
    check_internal_link(page_path, REDIRECTS[page_path], book_html)  # index.html only forwards to the first chapter


@pytest.mark.parametrize("page_path", by_page(CHAPTERS))
def test_chapter_ends_with_run_it_yourself(page_path: str, rendered) -> None:
    box = rendered(page_path).last_cell_box
    stem = Path(page_path).stem
    assert box is not None, f"{page_path}: the last cell shows no '{BOX_TITLE}' box"
    assert f"python -m transformer_theory run {stem}" in box, f"{page_path}: the box does not run {stem}: {box[:200]}"


@pytest.mark.parametrize("page_path", CONTENT_PAGES)
def test_tables_and_figures_fit_the_page(page_path: str, rendered) -> None:
    page = rendered(page_path)
    assert not page.too_wide, f"{page_path}: wider than their column: {page.too_wide}"
    assert page.page_overflow <= 0, f"{page_path}: the page scrolls sideways by {page.page_overflow} px"


@pytest.mark.parametrize("page_path", CHAPTERS)
def test_every_figure_has_its_provenance_line(page_path: str, rendered) -> None:
    missing = rendered(page_path).without_provenance
    assert not missing, f"{page_path}: figures without the provenance line under them: {missing}"


def check_internal_link(page_path: str, href: str, root: Path) -> None:
    parsed = urlparse(href)
    if parsed.scheme or href.startswith(("//", "mailto:", "javascript:")):
        return
    target, fragment = urldefrag(href)
    path = (root / page_path).parent / unquote(target) if target else root / page_path
    path = path.resolve()
    if path.is_dir():
        path = path / "index.html"
    assert path.is_file(), f"{page_path}: link {href!r} points to a missing file"
    if fragment and path.suffix == ".html":
        html = path.read_text(errors="replace")
        assert f'id="{unquote(fragment)}"' in html, f"{page_path}: link {href!r} points to a missing anchor"
