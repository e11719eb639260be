"""Finding the book's notebooks and reading the defaults of their ``parameters`` cell."""

from __future__ import annotations

import ast
import hashlib
import re
from pathlib import Path
from typing import Any

import nbformat

from transformer_theory.checks import unknown_name
from transformer_theory.storage.paths import notebooks_dir

#: Chapter notebooks are named ``NN_topic.ipynb``.
NOTEBOOK_PATTERN = re.compile(r"^\d\d_[a-z0-9_]+\.ipynb$")


def list_notebooks() -> list[Path]:
    """The chapter notebooks, in book order."""
    return sorted(p for p in notebooks_dir().glob("*.ipynb") if NOTEBOOK_PATTERN.match(p.name))


def unknown_notebook(name: str, where: str = "") -> ValueError:
    """The error for a name that is no chapter: ``where`` prefixes it, the closest chapter is suggested."""
    return unknown_name("notebook", name, [p.stem for p in list_notebooks()], where)


def resolve_notebook(name: str) -> Path:
    """Map ``00_overview``, ``00_overview.ipynb`` or a path to an existing notebook file (resolved).

    A name with a folder in it (``dir/x.ipynb``, ``./x.ipynb``) is a path and must exist; a bare name is a
    chapter, or a notebook file of that name in the working directory. ``ValueError`` otherwise.
    """
    candidate = Path(name)
    if candidate.suffix == ".ipynb" and candidate.is_file():
        return candidate.resolve()
    if candidate.name != name:
        raise ValueError(f"notebook file {name} does not exist")
    stem = candidate.name.removesuffix(".ipynb")
    for path in list_notebooks():
        if path.stem == stem:
            return path.resolve()
    raise unknown_notebook(name)


def notebook_key(path: Path) -> str:
    """Where a notebook's results are kept, relative to ``build/<kind>/<profile>/``.

    A chapter's key is its stem (``00_overview``). Any other notebook, run by path, is keyed by its resolved
    path, ``by-path/<stem>-<8 hex digits>``, so it never overwrites a chapter's results (nor another
    notebook's of the same name).
    """
    path = path.resolve()
    if any(path == chapter.resolve() for chapter in list_notebooks()):
        return path.stem
    return f"by-path/{path.stem}-{hashlib.sha256(str(path).encode()).hexdigest()[:8]}"


def parameters_cells(nb: nbformat.NotebookNode) -> list[int]:
    """Indices of the code cells tagged ``parameters``."""
    return [
        i
        for i, cell in enumerate(nb.cells)
        if cell.cell_type == "code" and "parameters" in cell.get("metadata", {}).get("tags", [])
    ]


def notebook_parameters(path: str | Path) -> dict[str, Any]:
    """Names and default values assigned in the notebook's single ``parameters`` cell.

    Defaults are read with :func:`ast.literal_eval`; a default that is not a literal maps to ``None``
    (any value is then accepted for it).
    """
    nb = nbformat.read(Path(path), as_version=4)
    cells = parameters_cells(nb)
    if len(cells) != 1:
        raise ValueError(f"{Path(path).name}: expected exactly one cell tagged 'parameters', found {len(cells)}")
    tree = ast.parse(nb.cells[cells[0]].source)
    params: dict[str, Any] = {}
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        value = getattr(node, "value", None)
        for target in targets:
            if isinstance(target, ast.Name) and value is not None:
                try:
                    params[target.id] = ast.literal_eval(value)
                except ValueError:
                    params[target.id] = None
    return params
