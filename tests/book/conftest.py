"""Fixtures for the checks of the rendered book: the HTML folder served on 127.0.0.1, and a browser."""

from __future__ import annotations

import functools
import http.server
import threading
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HTML = ROOT / "book" / "_build" / "html"
CHROMIUM = Path("/usr/bin/chromium")
SCREENSHOTS = ROOT / "build" / "screenshots"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--screenshots", action="store_true",
                     help=f"save a full-page screenshot of each page the browser checks visit to {SCREENSHOTS} (they "
                          "are for a person to look at; they double the checks' time, so make test leaves them out)")


@pytest.fixture(scope="session")
def screenshots(request: pytest.FixtureRequest) -> Path | None:
    """Where each visited page's full-page screenshot goes (``--screenshots``), or ``None``."""
    return SCREENSHOTS if request.config.getoption("--screenshots") else None


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:  # keep pytest's output readable
        pass

    def do_GET(self) -> None:
        if self.path == "/favicon.ico":  # browsers ask for it; the book has none
            self.send_response(204)
            self.end_headers()
            return
        super().do_GET()


@pytest.fixture(scope="session")
def book_html() -> Path:
    if not (HTML / "index.html").is_file():
        pytest.fail(f"{HTML}/index.html is missing: build the book first (`make html PROFILE=smoke`)")
    return HTML


@pytest.fixture(scope="session")
def server(book_html: Path):
    handler = functools.partial(_QuietHandler, directory=str(book_html))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing: install Debian's chromium (`apt-get install chromium`, done by .ci/run)")
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=str(CHROMIUM),
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                  "--disable-sync", "--no-first-run", "--disable-quic"],
        )
        yield browser
        browser.close()
