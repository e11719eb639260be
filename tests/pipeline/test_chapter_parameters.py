"""Every chapter's parameters dataclass is the single source of its parameters: the notebook's parameters cell
holds its defaults, every parameter has a description (``list NOTEBOOK`` prints it), and a negative or empty value is
refused, naming the parameter, before any kernel starts; a run with overrides is kept apart from the book."""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest

from transformer_theory.chapters import EXPERIMENTS, PARAMETERS
from transformer_theory.chapters.parameters import defaults, descriptions
from transformer_theory.pipeline import runner
from transformer_theory.pipeline.cli import main
from transformer_theory.pipeline.notebooks import list_notebooks, notebook_parameters
from transformer_theory.pipeline.runner import prepare_run
from transformer_theory.pipeline.yaml12 import load
from transformer_theory.storage.paths import build_dir

CELLS = {path.stem: notebook_parameters(path) for path in list_notebooks()}
NOTEBOOKS = list(CELLS)
PARAMETER_NAMES = [(stem, name) for stem, cell in CELLS.items() for name in cell]


def cell(stem: str) -> dict[str, Any]:
    """The defaults of the notebook's parameters cell."""
    return CELLS[stem]


@pytest.mark.parametrize("stem", NOTEBOOKS)
def test_the_dataclass_is_the_notebooks_parameters(stem: str) -> None:
    """The parameters cell (papermill needs its literal defaults) holds the dataclass's names, defaults and types."""
    cls = PARAMETERS[stem]
    assert {name: repr(value) for name, value in defaults(cls).items()} == {n: repr(v) for n, v in cell(stem).items()}
    for name, doc in descriptions(cls).items():
        assert doc.strip() and "\n" not in doc, f"{stem}: parameter '{name}' has no one-line description"


def test_list_describes_each_parameter_of_one_chapter(capsys: pytest.CaptureFixture) -> None:
    assert main(["list", "10_intrinsic_dimension"]) == 0
    lines = capsys.readouterr().out.splitlines()
    docs = descriptions(PARAMETERS["10_intrinsic_dimension"])
    assert lines[0] == "10_intrinsic_dimension" and len(lines) == 1 + len(docs)
    for line, name in zip(lines[1:], cell("10_intrinsic_dimension")):
        assert line.startswith(f"    {name} = ") and line.endswith(f": {docs[name]}"), line
    assert "    D_values = [2, 3, 4, 5, 6]  (Sequence[int]): " in "\n".join(lines)
    assert main(["list", "02_hardmax_interpolation"]) == 0
    assert "    N = 20  (int): sequences of each random dataset" in capsys.readouterr().out
    assert main(["list", "02_hardmax_interpolaton"]) == 2
    assert "Did you mean '02_hardmax_interpolation'?" in capsys.readouterr().err


# --- refused before any kernel starts ---------------------------------------------------------------------------------

def _negated(value: Any) -> tuple[Any, bool]:
    """``value`` with its first number made negative (``0`` -> ``-1``, ``3`` -> ``-4``, ``0.5`` -> ``-1.5``), and
    whether it held a number."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return -(abs(value) + 1), True
    if isinstance(value, list):
        for i, item in enumerate(value):
            negated, found = _negated(item)
            if found:
                return value[:i] + [negated] + value[i + 1:], True
    return value, False


def _yaml(value: Any) -> str:
    return repr(value).replace("'", '"')


NEGATIVE = [(stem, name) for stem, name in PARAMETER_NAMES if _negated(cell(stem)[name])[1]]
LISTS = [(stem, name) for stem, name in PARAMETER_NAMES if isinstance(cell(stem)[name], list)]


@pytest.fixture
def no_kernel(monkeypatch: pytest.MonkeyPatch) -> None:
    """A run that gets as far as executing fails the test."""

    def execute(spec: runner.RunSpec, **kwargs: object) -> dict:
        raise AssertionError(f"{spec.name} reached execution with {spec.overrides}")

    monkeypatch.setattr(runner, "execute", execute)


def refusal(stem: str, name: str, value: Any, capsys: pytest.CaptureFixture) -> str:
    """The error ``run STEM -p NAME VALUE`` prints (exit status 2, nothing executed), without its notebook prefix."""
    text = _yaml(value)
    assert load(text, "test") == value
    assert main(["run", stem, "--profile", "smoke", "-p", name, text]) == 2
    return capsys.readouterr().err.replace(f"notebook '{stem}'", "")


def names(error: str, name: str) -> bool:
    return re.search(rf"(?<![\w]){re.escape(name)}(?![\w])", error) is not None


@pytest.mark.parametrize("stem, name", NEGATIVE)
def test_a_negative_value_is_refused_naming_the_parameter(stem: str, name: str, no_kernel: None,
                                                          capsys: pytest.CaptureFixture) -> None:
    value, _ = _negated(copy.deepcopy(cell(stem)[name]))
    error = refusal(stem, name, value, capsys)
    assert names(error, name), error


@pytest.mark.parametrize("stem, name", LISTS)
def test_an_empty_list_is_refused_unless_its_description_says_what_empty_means(stem: str, name: str, no_kernel: None,
                                                                               capsys: pytest.CaptureFixture) -> None:
    """``(empty: ...)`` in the description: the list may be empty (a part left out, or every item); otherwise ``[]``
    is refused, naming the parameter."""
    if "(empty:" in descriptions(PARAMETERS[stem])[name]:
        spec = prepare_run(stem, "smoke", {name: []})
        assert spec.parameters[name] == []
    else:
        error = refusal(stem, name, [], capsys)
        assert names(error, name), error


def test_the_rules_cover_every_notebook() -> None:
    """Every notebook has a parameters dataclass and a number the negative rule tries; every training chapter too."""
    assert {stem for stem, _ in NEGATIVE} == set(NOTEBOOKS) == set(PARAMETERS) >= set(EXPERIMENTS)


def test_chapter_12s_valid_configurations_are_sorted_and_the_closest_offered(no_kernel: None,
                                                                              capsys: pytest.CaptureFixture) -> None:
    error = refusal("12_predictions_vs_training", "configurations", ["shifted_maxx (1,)"], capsys)
    assert "unknown held-out configuration 'shifted_maxx (1,)'. Did you mean 'shifted_max (1,)'?" in error
    valid = error.split("Valid held-out configurations: ")[1].strip().split(", ")
    assert len(valid) > 5 and valid == sorted(valid)


# --- custom runs ------------------------------------------------------------------------------------------------------

def test_a_custom_run_of_a_chapter_is_kept_apart_from_the_book() -> None:
    """``-p`` sends the executed notebook and the results JSON to build/custom/<profile>/<overrides, sorted>/."""
    book = prepare_run("00_overview", "book")
    assert book.output == build_dir() / "executed" / "book" / "00_overview.ipynb"
    custom = prepare_run("00_overview", "book", {"n_points": 40, "c": 0.25})
    folder = build_dir() / "custom" / "book" / "c=0.25_n_points=40"
    assert (custom.output, custom.results) == (folder / "00_overview.ipynb", folder / "00_overview.json")
    assert prepare_run("00_overview", "book", {"c": 0.25, "n_points": 40}).output == custom.output  # stable
