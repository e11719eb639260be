"""Give a cell output the theme's ``full-width`` class when it shows a figure wider than the text column.

sphinx-book-theme widens ``full-width`` content over the right margin and folds the page's table of contents
away while it is on screen; a wide figure then shows at about three quarters of its size instead of about half,
and its legend stays legible. A figure no wider than the column keeps the column.
"""

from pathlib import Path

from docutils import nodes

#: The text column at a 1 280-pixel window (the browser check's), in pixels.
COLUMN_PX = 688


def png_width(path: Path) -> int | None:
    """The width of the PNG ``path`` from its header (``None``: not a PNG)."""
    with open(path, "rb") as f:
        head = f.read(24)
    if head[:8] != b"\x89PNG\r\n\x1a\n":
        return None
    return int.from_bytes(head[16:20], "big")


def _widen(app, doctree, docname):
    for output in doctree.findall(nodes.container):
        if "cell_output" not in output["classes"]:
            continue
        for image in output.findall(nodes.image):
            path = Path(app.srcdir) / image["uri"]
            if path.suffix == ".png" and path.is_file() and (png_width(path) or 0) > COLUMN_PX:
                output["classes"].append("full-width")
                break


def setup(app):
    app.connect("doctree-resolved", _widen)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
