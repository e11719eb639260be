"""The library's layout rules, checked on the import graph (as tracr keeps its core free of matplotlib).

* the compute packages ``interpolation`` (NumPy and Fraction only: no torch), ``infoflow`` and ``models`` never
  import ``plotting``, ``pipeline`` or ``training``, nor matplotlib; ``interpolation`` reaches torch only through
  the exporter ``models.export`` (for its torch evaluation path), never torch itself;
* ``training`` never imports ``plotting`` or matplotlib, and of the pipeline only its storage modules
  (``results``: atomic JSON; ``provenance``: versions and commit; ``paths``: the project root);
* ``plotting`` never imports the pipeline or ``training``;
* the shared helpers ``checks`` and ``tables`` import nothing of the project.

Every ``import`` statement counts, including those inside functions (a lazy import is still a dependency).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from conftest import ROOT

SRC = ROOT / "src" / "transformer_theory"
PIPELINE_STORAGE = {"transformer_theory.pipeline.results", "transformer_theory.pipeline.provenance",
                    "transformer_theory.pipeline.paths"}


def imports_of(path: Path) -> set[str]:
    """Absolute names of every module imported anywhere in ``path``."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            if node.level:  # relative import: resolve against the module's package
                package = ".".join(path.relative_to(SRC.parent).with_suffix("").parts[: -node.level])
                names.add(f"{package}.{node.module}")
            else:
                names.add(node.module)
                names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def package_imports(package: str) -> dict[str, set[str]]:
    return {str(p.relative_to(SRC)): imports_of(p) for p in sorted((SRC / package).rglob("*.py"))}


def _violations(package: str, forbidden: tuple[str, ...], allowed: set[str] = frozenset()) -> list[str]:
    bad = []
    for module, names in package_imports(package).items():
        for name in sorted(names):
            if name in allowed or any(name.startswith(a + ".") for a in allowed):
                continue
            if any(name == f or name.startswith(f + ".") for f in forbidden):
                bad.append(f"{module} imports {name}")
    return bad


def _project(*names: str) -> tuple[str, ...]:
    return tuple(f"transformer_theory.{n}" for n in names)


@pytest.mark.parametrize("package", ["interpolation", "infoflow", "models"])
def test_compute_packages_import_no_plotting_pipeline_or_training(package: str) -> None:
    assert _violations(package, (*_project("plotting", "pipeline", "training"), "matplotlib")) == []


def test_interpolation_is_numpy_only() -> None:
    assert _violations("interpolation", ("torch", *_project("models")),
                       allowed={"transformer_theory.models.export"}) == []


def test_training_imports_no_plotting_and_only_the_pipelines_storage() -> None:
    assert _violations("training", (*_project("plotting", "pipeline"), "matplotlib"), allowed=PIPELINE_STORAGE) == []


def test_plotting_imports_no_pipeline_or_training() -> None:
    assert _violations("plotting", _project("pipeline", "training")) == []


@pytest.mark.parametrize("module", ["checks.py", "tables.py", "fitting.py"])
def test_shared_helpers_import_nothing_of_the_project(module: str) -> None:
    path = SRC / module
    assert {n for n in imports_of(path) if n.startswith("transformer_theory")} == set()


def test_the_checker_sees_lazy_and_relative_imports() -> None:
    """The rules above would pass vacuously if ``imports_of`` missed imports inside functions."""
    names = imports_of(SRC / "pipeline" / "cli.py")
    assert "transformer_theory.pipeline.runner" in names  # imported inside main()
    module = SRC / "interpolation" / "construction" / "hardmax.py"
    assert "transformer_theory.interpolation.construction.builder" in imports_of(module)


def test_the_notebook_api_is_one_import_line() -> None:
    import transformer_theory

    assert sorted(transformer_theory.__all__) == ["record", "seed_everything", "use_style"]
    assert all(callable(getattr(transformer_theory, name)) for name in transformer_theory.__all__)
