"""The configuration hash covers the notebook's code and the library code it imports (issue: results that
cannot go stale): a changed library function makes a committed result stale; a changed docstring does not."""

from __future__ import annotations

import shutil
from pathlib import Path

import nbformat

from conftest import ROOT, make_notebook
from transformer_theory.storage.provenance import PACKAGE_ROOT, config_hash, library_modules, source_hash

CHAPTER_05 = ROOT / "notebooks" / "05_tikhonov.ipynb"


def _rel(paths: list[Path]) -> set[str]:
    return {str(p.relative_to(PACKAGE_ROOT)) for p in paths}


def test_a_chapter_hashes_the_modules_it_imports_and_theirs() -> None:
    modules = _rel(library_modules(CHAPTER_05))
    # imported by the notebook itself
    assert {"models/tikhonov.py", "chapters/tikhonov.py", "chapters/tikhonov_runs.py", "plotting/tikhonov.py",
            "interpolation/reference.py", "__init__.py"} <= modules
    # imported through other modules (the construction's bound imports the checks and the attention module)
    assert {"interpolation/construction/bounds.py", "checks.py", "interpolation/attention.py"} <= modules
    # and nothing the chapter does not reach (the training package's registry does reach infoflow/)
    assert not {"plotting/infoflow.py", "plotting/interpolation.py", "pipeline/cli.py"} & modules


def _copy_package(tmp_path: Path) -> Path:
    root = tmp_path / PACKAGE_ROOT.name
    shutil.copytree(PACKAGE_ROOT, root, ignore=shutil.ignore_patterns("__pycache__"))
    return root


def _notebook(tmp_path: Path) -> Path:
    return make_notebook(tmp_path / "01_probe.ipynb", "seed = 0",
                         "from transformer_theory.interpolation.construction import construction_parameter_bound\n"
                         "print(construction_parameter_bound([1, 2], 3))")


def test_changing_a_library_function_changes_the_hash_a_docstring_does_not(tmp_path: Path) -> None:
    root = _copy_package(tmp_path)
    nb = _notebook(tmp_path)
    before = source_hash(nb, root)
    bounds = root / "interpolation" / "construction" / "bounds.py"
    text = bounds.read_text()
    bounds.write_text(text.replace('"""``11d + 7``: the most', '"""``11d + 7`` (reworded): the most'))
    assert source_hash(nb, root) == before, "a docstring change must not make results stale"
    bounds.write_text(text.replace("return 11 * positive_int", "return 12 * positive_int"))
    after = source_hash(nb, root)
    assert after != before, "a changed library function must make results stale"
    assert config_hash("p", after) != config_hash("p", before)


def test_changing_the_notebooks_code_changes_the_hash_its_markdown_does_not(tmp_path: Path) -> None:
    nb_path = _notebook(tmp_path)
    before = source_hash(nb_path)
    nb = nbformat.read(nb_path, as_version=4)
    nb.cells[0].source += "\n\nMore prose."
    nbformat.write(nb, nb_path)
    assert source_hash(nb_path) == before
    nb.cells[-1].source = nb.cells[-1].source.replace("[1, 2]", "[1, 3]")
    nbformat.write(nb, nb_path)
    assert source_hash(nb_path) != before
