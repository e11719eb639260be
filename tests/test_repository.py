"""The project's contract: every notebook is in the book and in every profile, stored clean."""

from __future__ import annotations

import ast
import logging
import re
import shlex
import sys

import nbformat
import pytest
import yaml

from conftest import ROOT
from transformer_theory.pipeline.notebooks import list_notebooks, notebook_parameters, parameters_cells
from transformer_theory.pipeline.parameters import check_parameters, parse_value
from transformer_theory.pipeline.profiles import DEFAULT_PROFILE, PROFILES, load_profile
from transformer_theory.pipeline.rerun import run_command, run_it_yourself
from transformer_theory.pipeline.runner import optional_parameters, prepare_run

NOTEBOOKS = list_notebooks()


def toc_files() -> list[str]:
    toc = yaml.safe_load((ROOT / "book" / "_toc.yml").read_text())
    files = [toc["root"]]
    for part in toc.get("parts", []):
        for chapter in part.get("chapters") or []:
            files.append(chapter["file"])
            files.extend(section["file"] for section in chapter.get("sections", []))
    return files


def test_there_are_notebooks() -> None:
    assert NOTEBOOKS, "notebooks/ holds no NN_topic.ipynb"
    names = [p.name for p in sorted((ROOT / "notebooks").glob("*.ipynb"))]
    assert names == [p.name for p in NOTEBOOKS], "every notebook must be named NN_topic.ipynb"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_in_toc(path) -> None:
    assert f"notebooks/{path.stem}" in toc_files()


def test_toc_entries_exist() -> None:
    notebook_stems = {p.stem for p in NOTEBOOKS}
    generated = {"reproducibility", "claims"}  # written by `make html` from the results JSONs
    for entry in toc_files():
        if entry.startswith("notebooks/"):
            assert entry.removeprefix("notebooks/") in notebook_stems, f"_toc.yml names a missing notebook {entry}"
        elif entry not in generated:
            assert (ROOT / "book" / f"{entry}.md").is_file(), f"_toc.yml names a missing page {entry}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_stored_without_outputs(path) -> None:
    nb = nbformat.read(path, as_version=4)
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None, f"{path.name}: cell {i} has stored output"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_exactly_one_parameters_cell(path) -> None:
    nb = nbformat.read(path, as_version=4)
    assert len(parameters_cells(nb)) == 1
    assert nb.metadata.get("kernelspec", {}).get("name") == "python3"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_papermill_reads_every_parameter(path, caplog) -> None:
    """papermill parses each line of the parameters cell itself (to name the parameters it injects); a line it
    cannot parse (a comment holding '=' or quotes) is reported as an unknown parameter at every run."""
    import papermill

    with caplog.at_level(logging.WARNING, logger="papermill"):
        names = set(papermill.inspect_notebook(str(path)))
    assert not [r.getMessage() for r in caplog.records if "Unable to parse" in r.getMessage()]
    assert names == set(notebook_parameters(path))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_ends_with_its_run_it_yourself_box(path) -> None:
    last = nbformat.read(path, as_version=4).cells[-1]
    calls = [node for node in ast.walk(ast.parse(last.source)) if isinstance(node, ast.Call)
             and getattr(node.func, "id", None) == "run_it_yourself"] if last.cell_type == "code" else []
    assert len(calls) == 1, f"{path.name}: the last cell must call run_it_yourself(...) once"
    assert "remove-input" in last.metadata.get("tags", []), f"{path.name}: tag the box cell 'remove-input'"
    notebook, main = (ast.literal_eval(arg) for arg in calls[0].args)
    assert notebook == path.stem, f"{path.name}: the box names {notebook!r}"
    assert main and set(main) <= set(notebook_parameters(path)), f"{path.name}: {main} are not all parameters"
    activate, shown = run_it_yourself(notebook, main).data.split("```bash\n")[1].split("\n```")[0].split("\n", 1)
    assert activate.startswith("source .venv/bin/activate"), f"{path.name}: the box first activates the venv"
    assert " ".join(shown.replace("\\\n", " ").split()) == run_command(notebook, main)
    command = shlex.split(run_command(notebook, main))
    assert command[:5] == ["python", "-m", "transformer_theory", "run", path.stem]
    overrides = {name: parse_value(value) for flag, name, value in zip(*[iter(command[5:])] * 3) if flag == "-p"}
    assert list(overrides) == main, f"{path.name}: the command does not pass {main}"
    default = prepare_run(path.stem, DEFAULT_PROFILE)
    assert prepare_run(path.stem, DEFAULT_PROFILE, overrides).config_hash == default.config_hash


@pytest.mark.parametrize("profile", PROFILES)
def test_profiles_cover_every_notebook_with_valid_parameters(profile) -> None:
    data = load_profile(profile)
    stems = {p.stem for p in NOTEBOOKS}
    assert stems <= set(data), f"params/{profile}.yaml misses {sorted(stems - set(data))}"
    assert set(data) <= stems, f"params/{profile}.yaml names unknown notebooks {sorted(set(data) - stems)}"
    for path in NOTEBOOKS:
        check_parameters(path.stem, notebook_parameters(path), data[path.stem], source=f"params/{profile}.yaml",
                         may_be_empty=optional_parameters(path.stem))


def test_environment_yml_in_step_with_requirements() -> None:
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    deps = env["dependencies"]
    pip = next(d["pip"] for d in deps if isinstance(d, dict) and "pip" in d)
    assert "-r requirements.txt" in pip and "-e ." in pip
    assert "pip" in deps and any(str(d).startswith("python=") for d in deps)
    # nothing is pinned in environment.yml itself: the one list is requirements.txt
    assert all(not isinstance(d, str) or d == "pip" or d.startswith("python=") for d in deps)


def test_requirements_pinned_exactly() -> None:
    lines = [l.split("#")[0].strip() for l in (ROOT / "requirements.txt").read_text().splitlines()]
    reqs = [l for l in lines if l]
    assert reqs and all(re.fullmatch(r"[A-Za-z0-9_.\-\[\]]+==[A-Za-z0-9_.+\-]+", r) for r in reqs), reqs
    pins = dict(r.split("==") for r in reqs)
    assert pins["torch"] == "2.13.0"
    major, minor, patch = (int(x) for x in re.match(r"(\d+)\.(\d+)\.(\d+)", pins["jupyter-book"]).groups())
    assert (1, 0, 4) <= (major, minor, patch) < (2, 0, 0)
    for needed in ("sphinx-mathjax-offline", "sphinx-proof", "sphinxcontrib-bibtex", "papermill", "nbval",
                   "jupyterlab", "numpy", "matplotlib", "tqdm", "pytest", "hypothesis", "playwright"):
        assert needed in pins, f"requirements.txt misses {needed}"


def test_reading_a_notebook_builds_no_rfc3987_parser() -> None:
    """jsonschema 4.25+ (nbformat's validator) builds an Earley parser on import, 1.6 s of CPU in every process
    that reads a notebook, dozens of times in ``make test``: requirements.txt pins one that does not."""
    nbformat.validate(nbformat.v4.new_notebook())
    assert "rfc3987_syntax" not in sys.modules


#: References a reader cannot open: the project's background notes and their provenance tags.
UNPUBLISHED_SOURCE = re.compile(r"spec §|\[(INF|SEED|UNK)\]|\[V-|shared/(papers|seeds)|seed summar", re.IGNORECASE)


def test_library_notebooks_and_book_cite_only_what_a_reader_can_open() -> None:
    files = [*(ROOT / "src").rglob("*.py"), *NOTEBOOKS, *(ROOT / "book").glob("*.md"), ROOT / "README.md"]
    hits = [f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
            for path in files for number, line in enumerate(path.read_text().splitlines(), 1)
            if UNPUBLISHED_SOURCE.search(line)]
    assert not hits, "cite the papers, the bibliography or book/reconstruction.md instead:\n" + "\n".join(hits)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_defines_no_functions(path) -> None:
    """Notebooks are thin: a function or class a chapter needs belongs in the library, tested there."""
    nodes = [node for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"
             for node in ast.walk(ast.parse(c.source))]
    defined = [node.name for node in nodes if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
    assert not defined, f"{path.name} defines {defined}: move them into the library"


#: The training chapters display a typed analysis (issue 32): limits on their code.
DISPLAY_LIMITS = {"code_lines": 100, "asserts": 3, "glue_calls": 3}


@pytest.mark.parametrize("path", [p for p in NOTEBOOKS if 7 <= int(p.stem[:2]) <= 14], ids=lambda p: p.stem)
def test_training_notebooks_only_display_their_analysis(path) -> None:
    """At most 100 non-blank code lines and 3 asserts, no lambda, and the prose's numbers glued (at least 3 glue
    calls): the computation is the chapter's analysis in the library, checked by its tests."""
    sources = [c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"]
    lines = [line for s in sources for line in s.splitlines() if line.strip()]
    nodes = [node for s in sources for node in ast.walk(ast.parse(s))]
    asserts = sum(isinstance(node, ast.Assert) for node in nodes)
    lambdas = sum(isinstance(node, ast.Lambda) for node in nodes)
    glue = sum(isinstance(node, ast.Call) and getattr(node.func, "id", None) == "glue" for node in nodes)
    assert len(lines) <= DISPLAY_LIMITS["code_lines"], f"{path.name}: {len(lines)} code lines"
    assert asserts <= DISPLAY_LIMITS["asserts"] and not lambdas, f"{path.name}: {asserts} asserts, {lambdas} lambdas"
    assert glue >= DISPLAY_LIMITS["glue_calls"], f"{path.name}: {glue} glue calls"


DOUBLED_TEX_COMMAND = re.compile(r"\\\\[A-Za-z]")


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_markdown_math_has_no_doubled_backslash(path) -> None:
    """A ``\\\\times`` in a Markdown cell reaches MathJax as a line break plus text (the browser test sees the same)."""
    hits = [f"cell {i}: {line.strip()}" for i, cell in enumerate(nbformat.read(path, as_version=4).cells)
            if cell.cell_type == "markdown" for line in cell.source.splitlines() if DOUBLED_TEX_COMMAND.search(line)]
    assert not hits, f"{path.name}: doubled backslash in Markdown:\n" + "\n".join(hits)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_the_imports_cell_is_folded_in_the_book(path) -> None:
    """The cell after ``parameters`` (imports, style and seed: boilerplate) is tagged ``hide-input``."""
    code = [c for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"]
    at = next(i for i, c in enumerate(code) if "parameters" in c.metadata.get("tags", []))
    imports = code[at + 1]
    assert "import" in imports.source.split("\n")[0], f"{path.name}: the cell after parameters holds the imports"
    assert "hide-input" in imports.metadata.get("tags", []), f"{path.name}: tag the imports cell 'hide-input'"
