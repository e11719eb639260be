"""Where runs write: ``--output`` refused before anything runs when it cannot be a notebook file, notebooks
run by path kept apart from the chapters' results, results files readable by everyone (0644)."""

from __future__ import annotations

import json
import re
import stat
from pathlib import Path

import pytest

from conftest import cli, make_notebook
from transformer_theory.storage.results import write_json_atomic
from transformer_theory.pipeline.runner import prepare_run


def files_under(folder: Path) -> set[Path]:
    return {p for p in folder.rglob("*")}


@pytest.mark.parametrize(
    "output, message",
    [
        ("out/run.json", "expected a file name ending in .ipynb"),
        ("a_folder", "is a folder"),
        ("a_file/run.ipynb", "a_file is not a folder"),
        ("/proc/transformer-theory-test/run.ipynb", "cannot write in /proc"),
        ("notebooks/01_tiny.ipynb", "is the notebook being run"),
    ],
    ids=["json-name", "folder", "below-a-file", "unwritable", "the-notebook-itself"],
)
def test_bad_output_is_refused_before_anything_runs(tiny_project: Path, monkeypatch: pytest.MonkeyPatch,
                                                    output: str, message: str) -> None:
    monkeypatch.chdir(tiny_project)
    (tiny_project / "a_folder").mkdir()
    (tiny_project / "a_file").write_text("")
    before = files_under(tiny_project)
    with pytest.raises(ValueError, match=f"^--output {re.escape(output)}.*{re.escape(message)}"):
        prepare_run("01_tiny", "smoke", output=output)
    assert files_under(tiny_project) == before, "a refused run must leave nothing behind"


def test_the_command_line_refuses_a_bad_output(tiny_project: Path) -> None:
    out = cli("run", "01_tiny", "--profile", "smoke", "--output", "out/run.json", cwd=tiny_project)
    assert out.returncode == 2 and out.stderr == "error: --output out/run.json: expected a file name ending in .ipynb\n"
    assert sorted(p.name for p in tiny_project.iterdir()) == ["notebooks", "params"]


def test_sweep_output_must_be_a_writable_folder(tiny_project: Path) -> None:
    (tiny_project / "a_file").write_text("")
    out = cli("sweep", "01_tiny", "--profile", "smoke", "-p", "x", "1", "--output", "a_file", cwd=tiny_project)
    assert out.returncode == 2 and "is not a folder" in out.stderr
    assert not (tiny_project / "build").exists()


def test_a_notebook_run_by_path_keeps_the_chapters_results(tiny_project: Path) -> None:
    assert cli("run", "01_tiny", "--profile", "smoke").returncode == 0
    chapter = tiny_project / "build" / "results" / "smoke" / "01_tiny.json"
    chapter_notebook = tiny_project / "build" / "executed" / "smoke" / "01_tiny.ipynb"
    before = chapter.read_bytes(), chapter_notebook.read_bytes()
    other = make_notebook(tiny_project / "elsewhere" / "01_tiny.ipynb", "x = 1\nscale = 1.0",
                          "from transformer_theory import kernel_context\nkernel_context().record('z', x)")
    out = cli("run", str(other), "--profile", "smoke")
    assert out.returncode == 0, out.stderr
    assert (chapter.read_bytes(), chapter_notebook.read_bytes()) == before, "the chapter's results were overwritten"
    [results] = (tiny_project / "build" / "results" / "smoke" / "by-path").glob("01_tiny-*.json")
    data = json.loads(results.read_text())
    assert data["source"] == str(other.resolve()) and data["values"] == {"z": 1}
    assert json.loads(chapter.read_text())["source"] == str((tiny_project / "notebooks" / "01_tiny.ipynb").resolve())


def test_a_missing_notebook_path_is_not_taken_for_the_chapter(tiny_project: Path) -> None:
    out = cli("run", "elsewhere/01_tiny.ipynb", "--profile", "smoke", cwd=tiny_project)
    assert out.returncode == 2 and "notebook file elsewhere/01_tiny.ipynb does not exist" in out.stderr


def test_results_files_are_created_with_mode_0644(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    write_json_atomic(path, {"values": {}})
    assert stat.S_IMODE(path.stat().st_mode) == 0o644
