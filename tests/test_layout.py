"""The library's layout rules, checked on the import graph (as tracr keeps its core free of matplotlib).

* the compute packages ``interpolation`` (NumPy and Fraction only: no torch), ``infoflow`` and ``models`` never
  import ``plotting``, ``pipeline``, ``training`` or ``chapters``, nor matplotlib; ``interpolation`` reaches torch only through
  the exporter ``models.export`` (for its torch evaluation path), never torch itself;
* ``training`` and ``chapters`` never import ``plotting``, ``pipeline`` or matplotlib: what they store goes
  through the bottom layer ``storage`` (``results``: atomic JSON; ``provenance``: versions and commit; ``paths``:
  the project root), which imports nothing else of the project;
* ``training``, the engine, imports no chapter (nothing of ``chapters``) and no list of targets
  (``infoflow.targets``, ``infoflow.heldout``): runs name their targets in the registry the chapters add to;
* ``plotting`` never imports the pipeline, ``training`` or ``chapters``;
* the shared helpers ``checks`` and ``tables`` import nothing of the project;
* no project module imports another module's private name (one starting with ``_``), nor reads one from a
  project module it imported (``module._name``): a name shared between modules is public;
* no source file under ``src/`` exceeds :data:`MAX_LINES` lines;
* the packages of :data:`PASSED_IN` get their settings passed in (a chapter's
  :class:`~transformer_theory.training.context.Context`): none reads the environment or the runner's profile
  (checked on the source text, :func:`process_state_reads`).

Every ``import`` statement counts, including those inside functions (a lazy import is still a dependency).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from conftest import ROOT

SRC = ROOT / "src" / "transformer_theory"
#: The most lines a source file of the library may have.
MAX_LINES = 600
#: The packages below the pipeline whose settings are passed in, never read from process state.
PASSED_IN = ("chapters", "training", "models", "infoflow", "interpolation", "plotting")
#: A read of process state as it is written: the environment (``os.environ``, ``getenv``, ``from os import environ``,
#: the project's variables by name) or the runner's profile (``current_profile``, gone from the library).
PROCESS_STATE = re.compile(r"\bos\.environ\b|\bgetenv\b|\bimport\b.*\benviron\b|\bcurrent_profile\b|TRANSFORMER_THEORY_")
#: The one read that is no setting: whether Dask's nanny put glibc's trim threshold into this worker's environment
#: (:func:`~transformer_theory.training.distributed.reuse_freed_memory`), as ``(file, the line's text)``.
NOT_A_SETTING = {("training/distributed.py", 'if "MALLOC_TRIM_THRESHOLD_" not in os.environ:')}


def imported_names(path: Path) -> list[tuple[int, str, str]]:
    """``(line, absolute name, local name)`` for every module and every name imported anywhere in ``path``.

    ``from m import x`` gives ``m`` and ``m.x``, ``import a.b`` gives ``a`` and ``a.b``; the local name is the
    one the statement binds to that name (``""`` if none: ``m`` above, ``a.b`` unless imported ``as`` a name).
    """
    found: list[tuple[int, str, str]] = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            for alias in node.names:
                top = alias.name.split(".")[0]
                if alias.asname or top == alias.name:
                    found.append((node.lineno, alias.name, alias.asname or top))
                else:
                    found += [(node.lineno, top, top), (node.lineno, alias.name, "")]
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:  # relative import: resolve against the module's package
                package = ".".join(path.relative_to(SRC.parent).with_suffix("").parts[: -node.level])
                module = f"{package}.{module}" if module else package
            found.append((node.lineno, module, ""))
            found += [(node.lineno, f"{module}.{alias.name}", alias.asname or alias.name) for alias in node.names]
    return found


def imports_of(path: Path) -> set[str]:
    """Absolute names of every module (and name) imported anywhere in ``path``."""
    return {name for _, name, _ in imported_names(path)}


def _is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _is_project_module(name: str) -> bool:
    base = SRC.parent.joinpath(*name.split("."))
    return name.startswith("transformer_theory") and (base.with_suffix(".py").is_file()
                                                       or (base / "__init__.py").is_file())


def private_names_used(path: Path) -> list[str]:
    """``line: name`` for each private name of the project that ``path`` imports (``from m import _x``), or
    reads from a project module it imported (``import m as mod`` then ``mod._x``)."""
    bad: list[tuple[int, str]] = []
    modules: dict[str, str] = {}  # local name -> project module it is bound to
    for line, name, local in imported_names(path):
        if not name.startswith("transformer_theory"):
            continue
        if any(_is_private(part) for part in name.split(".")):
            bad.append((line, name))
        elif local and _is_project_module(name):
            modules[local] = name
    for node in ast.walk(ast.parse(path.read_text())):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in modules
                and _is_private(node.attr)):
            bad.append((node.lineno, f"{modules[node.value.id]}.{node.attr}"))
    return [f"{line}: {name}" for line, name in sorted(bad)]


def long_files(root: Path, limit: int) -> list[str]:
    """``path: n lines`` for each Python file under ``root`` longer than ``limit`` lines."""
    return [f"{p.relative_to(root)}: {n} lines" for p in sorted(root.rglob("*.py"))
            if (n := len(p.read_text().splitlines())) > limit]


def process_state_reads(root: Path, packages: tuple[str, ...], allowed: set[tuple[str, str]] = frozenset()
                        ) -> list[str]:
    """``path:line: text`` for each line of a Python file of ``packages`` (folders under ``root``) that reads process
    state (:data:`PROCESS_STATE`), except the ``(path, text)`` pairs of ``allowed``."""
    found = []
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            relative = str(path.relative_to(root))
            for number, line in enumerate(path.read_text().splitlines(), 1):
                if PROCESS_STATE.search(line) and (relative, line.strip()) not in allowed:
                    found.append(f"{relative}:{number}: {line.strip()}")
    return found


def package_imports(package: str) -> dict[str, set[str]]:
    """The imports of each module of ``package``: a folder of the library, or one module's file."""
    root = SRC / package
    paths = [root] if root.is_file() else sorted(root.rglob("*.py"))
    return {str(p.relative_to(SRC)): imports_of(p) for p in paths}


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
def test_compute_packages_import_no_plotting_pipeline_training_or_chapters(package: str) -> None:
    assert _violations(package, (*_project("plotting", "pipeline", "training", "chapters"), "matplotlib")) == []


def test_interpolation_is_numpy_only() -> None:
    assert _violations("interpolation", ("torch", *_project("models")),
                       allowed={"transformer_theory.models.export"}) == []


@pytest.mark.parametrize("package", ["training", "chapters"])
def test_training_and_chapters_import_no_plotting_or_pipeline(package: str) -> None:
    assert _violations(package, (*_project("plotting", "pipeline"), "matplotlib")) == []


def test_storage_is_the_bottom_layer() -> None:
    imported = {n for names in package_imports("storage").values() for n in names if n.startswith("transformer_theory")}
    assert {n for n in imported if not n.startswith("transformer_theory.storage")} == set()


def test_the_training_engine_knows_no_chapter_and_no_target_list() -> None:
    forbidden = _project("chapters", "infoflow.targets", "infoflow.heldout")
    assert _violations("training", forbidden) == []


def test_the_chapters_live_outside_the_engine() -> None:
    """Every chapter's experiment is a module of ``chapters``, none of ``training`` (the rule above would
    otherwise pass for a chapter left in the engine's package)."""
    from transformer_theory.chapters import EXPERIMENTS

    modules = {e.build.__module__ for e in EXPERIMENTS.values()}
    assert modules and all(m.startswith("transformer_theory.chapters.") for m in modules), modules


def test_plotting_imports_no_pipeline_training_or_chapters() -> None:
    assert _violations("plotting", _project("pipeline", "training", "chapters")) == []


@pytest.mark.parametrize("module", ["checks.py", "tables.py", "fitting.py", "lazy.py"])
def test_shared_helpers_import_nothing_of_the_project(module: str) -> None:
    path = SRC / module
    assert {n for n in imports_of(path) if n.startswith("transformer_theory")} == set()


def test_no_module_uses_another_modules_private_name() -> None:
    bad = [f"{p.relative_to(ROOT)}:{v}" for p in sorted(SRC.rglob("*.py")) for v in private_names_used(p)]
    assert bad == []


def test_no_source_file_is_longer_than_the_limit() -> None:
    assert long_files(ROOT / "src", MAX_LINES) == []


def test_no_library_module_below_the_pipeline_reads_process_state() -> None:
    assert process_state_reads(SRC, PASSED_IN, NOT_A_SETTING) == []


def test_the_process_state_rule_reports_each_read(tmp_path: Path) -> None:
    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    (tmp_path / "pkg" / "sub" / "a.py").write_text("import os\nx = os.environ.get('X')\ny = os.getenv('Y')\n"
                                                  "environment = 1  # the word alone is fine\n")
    (tmp_path / "pkg" / "b.py").write_text("from os import environ\nfrom m import current_profile\n"
                                           "z = 'TRANSFORMER_THEORY_RUNS'\n")
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "c.py").write_text("import os\nx = os.environ\n")
    assert process_state_reads(tmp_path, ("pkg",), {("pkg/b.py", "z = 'TRANSFORMER_THEORY_RUNS'")}) == [
        "pkg/b.py:1: from os import environ", "pkg/b.py:2: from m import current_profile",
        "pkg/sub/a.py:2: x = os.environ.get('X')", "pkg/sub/a.py:3: y = os.getenv('Y')"]


def test_the_private_name_rule_reports_each_use_with_its_line(tmp_path: Path) -> None:
    module = tmp_path / "module.py"
    module.write_text("from transformer_theory.infoflow.trees import Tree, _hidden\n"
                      "from transformer_theory.training import config as settings\n"
                      "import transformer_theory.checks\n"
                      "def f():\n"
                      "    return settings._plain(1), settings.RunConfig, transformer_theory._x, Tree._walk\n")
    assert private_names_used(module) == ["1: transformer_theory.infoflow.trees._hidden",
                                          "5: transformer_theory._x",
                                          "5: transformer_theory.training.config._plain"]


def test_the_length_rule_reports_each_long_file(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "long.py").write_text("x = 1\n" * (MAX_LINES + 1))
    (tmp_path / "short.py").write_text("x = 1\n" * MAX_LINES)
    (tmp_path / "data.json").write_text("1\n" * (MAX_LINES + 1))
    assert long_files(tmp_path, MAX_LINES) == [f"pkg/long.py: {MAX_LINES + 1} lines"]


def test_the_checker_sees_lazy_and_relative_imports() -> None:
    """The rules above would pass vacuously if ``imports_of`` missed imports inside functions."""
    names = imports_of(SRC / "pipeline" / "cli.py")
    assert "transformer_theory.pipeline.runner" in names  # imported inside main()
    module = SRC / "interpolation" / "construction" / "hardmax.py"
    assert "transformer_theory.interpolation.construction.builder" in imports_of(module)


def test_the_notebook_api_is_one_import_line() -> None:
    import transformer_theory

    assert sorted(transformer_theory.__all__) == ["kernel_context", "seed_everything", "use_style"]
    assert all(callable(getattr(transformer_theory, name)) for name in transformer_theory.__all__)


def test_the_claims_page_formats_and_judges_nothing() -> None:
    """The claims page displays the Claim objects the chapters recorded (issue 32): no judge, few key lookups."""
    import ast

    source = (ROOT / "src" / "transformer_theory" / "pipeline" / "claims.py").read_text()
    tree = ast.parse(source)
    private = [n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and n.name.startswith("_")]
    subscripts = [n for n in ast.walk(tree) if isinstance(n, ast.Subscript) and isinstance(n.slice, ast.Constant)
                  and isinstance(n.slice.value, str)]
    assert len(private) <= 5 and len(subscripts) <= 15, (private, len(subscripts))
    assert "observed_efficient" not in source
