"""What a results file records about the run: versions, git commit, platform, and the hashes that identify it.

A run is identified by its **configuration hash**, which covers the notebook, its effective parameters
(:func:`parameters_hash`) and its source (:func:`source_hash`): the notebook's code cells and every module of
this package the notebook imports, directly or through other modules of the package. Changing a library
function that a chapter uses therefore changes the chapter's configuration hash, and a committed result
computed with the old code no longer counts as current. Docstrings and comments do not enter the hash.
"""

from __future__ import annotations

import ast
import hashlib
import json
import platform
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

import nbformat

from transformer_theory.storage.paths import project_root

#: The folder of this package (the library whose modules a notebook's source hash covers).
PACKAGE_ROOT = Path(__file__).resolve().parents[1]
PACKAGE = PACKAGE_ROOT.name

#: Packages whose versions every results file records.
TRACKED_PACKAGES = ("transformer-theory", "numpy", "torch", "matplotlib", "papermill", "nbformat", "jupyter-book", "Sphinx")


def package_versions() -> dict[str, str]:
    """Python's version and that of each of :data:`TRACKED_PACKAGES` (``"not installed"`` if absent)."""
    versions = {"python": platform.python_version()}
    for name in TRACKED_PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return versions


def git_commit() -> dict[str, Any]:
    """The checkout's commit and whether its tracked files have uncommitted changes."""

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", *args], cwd=project_root(), capture_output=True, text=True, check=True, timeout=10
        ).stdout.strip()

    try:
        commit = git("rev-parse", "HEAD")
        dirty = bool(git("status", "--porcelain", "--untracked-files=no"))
    except (OSError, subprocess.SubprocessError):
        return {"commit": "unknown", "dirty": None}
    return {"commit": commit, "dirty": dirty}


def parameters_hash(notebook: str, parameters: dict[str, Any]) -> str:
    """A short hash of the notebook's name and its effective parameters."""
    blob = json.dumps({"notebook": notebook, "parameters": parameters}, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def _without_docstrings(tree: ast.AST) -> ast.AST:
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and body
                and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)):
            node.body = body[1:] or [ast.Pass()]
    return tree


def _module_file(name: str, root: Path) -> Path | None:
    """The file of module ``name`` (``transformer_theory.a.b``) below ``root`` (the package folder), if any."""
    parts = name.split(".")
    if parts[0] != root.name:
        return None
    base = root.joinpath(*parts[1:])
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _imported(tree: ast.AST, module: str | None) -> set[str]:
    """Absolute module names imported anywhere in ``tree`` (``module``: the importing module, for relative imports)."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level and module:
                base = ".".join([*module.split(".")[: -node.level], *([base] if base else [])])
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)
    return names


def library_modules(notebook: str | Path, root: Path = PACKAGE_ROOT) -> list[Path]:
    """Files of the package's modules that ``notebook``'s code imports, transitively, with their parent
    packages' ``__init__.py`` (which run on import), sorted.

    Args:
        notebook: The notebook's path.
        root: The package's folder (default: this installed package's).
    """
    nb = nbformat.read(Path(notebook), as_version=4)
    pending = {n for cell in nb.cells if cell.cell_type == "code" for n in _imported(_parse(cell.source), None)}
    seen: dict[str, Path] = {}
    while pending:
        name = pending.pop()
        parts = name.split(".")
        for k in range(1, len(parts) + 1):  # the module and every package above it
            prefix = ".".join(parts[:k])
            path = _module_file(prefix, root)
            if path is not None and prefix not in seen:
                seen[prefix] = path
                package = prefix if path.name == "__init__.py" else prefix.rpartition(".")[0]
                pending |= _imported(ast.parse(path.read_text()), package + ".__init__" if path.name == "__init__.py"
                                     else prefix) - set(seen)
    return sorted(set(seen.values()))


def _parse(source: str) -> ast.AST:
    try:
        return ast.parse(source)
    except SyntaxError:  # a cell with IPython syntax: hash its text, follow no imports
        return ast.Module(body=[ast.Expr(ast.Constant(source))], type_ignores=[])


def source_hash(notebook: str | Path, root: Path = PACKAGE_ROOT) -> str:
    """A short hash of the notebook's code cells and of the library modules it imports
    (:func:`library_modules`), docstrings and comments left out."""
    nb = nbformat.read(Path(notebook), as_version=4)
    digest = hashlib.sha256()
    for cell in nb.cells:
        if cell.cell_type == "code":
            digest.update(ast.dump(_without_docstrings(_parse(cell.source))).encode())
    for path in library_modules(notebook, root):
        digest.update(str(path.relative_to(root.parent)).encode())
        digest.update(ast.dump(_without_docstrings(ast.parse(path.read_text()))).encode())
    return digest.hexdigest()[:16]


def config_hash(parameters: str, source: str) -> str:
    """The configuration hash: of the :func:`parameters_hash` and the :func:`source_hash`."""
    return hashlib.sha256(f"{parameters}:{source}".encode()).hexdigest()[:16]


def environment() -> dict[str, Any]:
    """The provenance every record carries: ``versions``, ``platform``, ``machine``, ``executable``, ``git``."""
    return {
        "versions": package_versions(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "executable": sys.executable,
        "git": git_commit(),
    }
