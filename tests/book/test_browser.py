"""Open every page of the rendered book in headless Chromium and check what a reader would see.

Math is typeset by the offline MathJax (no raw TeX left), every image loaded, no console errors,
every internal link (and its #anchor) resolves; a screenshot of each page goes to build/screenshots/.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote, urldefrag, urlparse

import pytest

from conftest import HTML, SCREENSHOTS

PAGES = sorted(
    p.relative_to(HTML).as_posix()
    for p in HTML.rglob("*.html")
    if not p.relative_to(HTML).parts[0].startswith("_")
) if HTML.is_dir() else []

REDIRECT = re.compile(r'<meta http-equiv="Refresh" content="0; url=([^"]+)" />')
RAW_TEX = re.compile(r"\\\(|\\\)|\\\[|\\\]|\$\$|\\begin\{|\\frac|\\sum|\\mathbb")


def test_book_has_pages(book_html: Path) -> None:
    assert "index.html" in PAGES and any(p.startswith("notebooks/") for p in PAGES)


@pytest.mark.parametrize("page_path", PAGES)
def test_page_renders(page_path: str, server: str, browser, book_html: Path) -> None:
    redirect = REDIRECT.fullmatch((book_html / page_path).read_text().strip())
    if redirect:  # index.html only forwards to the first chapter
        check_internal_link(page_path, redirect.group(1), book_html)
        return
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    errors: list[str] = []
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(f"{server}/{page_path}", wait_until="load")
    n_math = page.locator(".math").count()
    if n_math:
        page.wait_for_function("window.MathJax && MathJax.startup && MathJax.startup.promise", timeout=20000)
        page.evaluate("MathJax.startup.promise")
        page.wait_for_function(f"document.querySelectorAll('mjx-container').length >= {n_math}", timeout=20000)
    text = page.inner_text("main") if page.locator("main").count() else page.inner_text("body")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / (page_path.replace("/", "__").removesuffix(".html") + ".png")))
    broken_images = page.evaluate(
        "Array.from(document.images).filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.src)"
    )
    links = page.evaluate("Array.from(document.querySelectorAll('a[href]')).map(a => a.getAttribute('href'))")
    page.close()

    assert not errors, f"console errors on {page_path}: {errors}"
    raw = RAW_TEX.findall(text)
    assert not raw, f"raw TeX visible on {page_path}: {raw[:5]}"
    assert not broken_images, f"images that did not load on {page_path}: {broken_images}"
    for href in links:
        check_internal_link(page_path, href, book_html)


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
