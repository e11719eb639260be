"""Give a cell output the theme's ``full-width`` class when it shows a figure wider than the text column or a
table of many columns.

sphinx-book-theme widens ``full-width`` content over the right margin (by 36%) and folds the page's table of
contents away while it is on screen: a wide figure then shows at about three quarters of its size instead of about
half, with a legible legend, and a wide table fits without scrolling. Other outputs keep the column.
"""

from pathlib import Path

from docutils import nodes

#: The text column at a 1 280-pixel window (the browser check's), in pixels.
COLUMN_PX = 688
#: A table of more columns than this is widened.
MAX_COLUMNS = 8


def png_width(path: Path) -> int | None:
    """The width in pixels of the PNG ``path``, from its header (``None``: not a PNG)."""
    with open(path, "rb") as f:
        head = f.read(24)
    return int.from_bytes(head[16:20], "big") if head[:8] == b"\x89PNG\r\n\x1a\n" else None


def _wide(app, output: nodes.container) -> bool:
    for image in output.findall(nodes.image):
        path = Path(app.srcdir) / image["uri"]
        if path.is_file() and (png_width(path) or 0) > COLUMN_PX:
            return True
    return any(len(list(group.findall(nodes.colspec))) > MAX_COLUMNS for group in output.findall(nodes.tgroup))


def _widen(app, doctree, docname):
    for output in doctree.findall(nodes.container):
        if "cell_output" in output["classes"] and _wide(app, output):
            output["classes"].append("full-width")


def setup(app):
    app.connect("doctree-resolved", _widen)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
