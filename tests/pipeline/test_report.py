"""The reproducibility page survives any results file: wrong-typed fields, corrupt JSON, stale ``running``
records; it escapes table cells and creates its output folder."""

from __future__ import annotations

import stat
from pathlib import Path

from transformer_theory.pipeline.report import reproducibility_page, write_reproducibility_page
from transformer_theory.storage.results import failed_path, write_json_atomic


def results(root: Path) -> Path:
    return root / "build" / "results" / "smoke" / "01_tiny.json"


def row(page: str) -> str:
    [line] = [line for line in page.splitlines() if "01_tiny" in line and line.startswith("|")]
    return line


def test_wrong_typed_fields_are_shown_as_unknown_and_named(tiny_project: Path) -> None:
    write_json_atomic(results(tiny_project), {
        "status": "ok", "profile": 3, "wall_time_s": "fast", "seed": True, "git": "abc",
        "versions": ["numpy"], "platform": {"os": "x"}, "values": {},
    })
    line = row(reproducibility_page("smoke"))
    assert line.startswith("| [01_tiny](notebooks/01_tiny.ipynb) | smoke | ok (fields of the wrong type: ")
    for name in ("git", "wall_time_s", "seed", "versions", "platform", "profile"):
        assert name in line
    assert "| ? |" in line and "`unknown`" in line


def test_corrupt_records_are_flagged(tiny_project: Path) -> None:
    path = results(tiny_project)
    path.parent.mkdir(parents=True)
    path.write_text('{"status": "ok", "values": {')
    assert "| corrupt results file" in row(reproducibility_page("smoke"))
    path.write_text("[1, 2]")
    assert "| corrupt results file" in row(reproducibility_page("smoke"))


def test_stale_running_records_are_flagged(tiny_project: Path) -> None:
    write_json_atomic(results(tiny_project), {"status": "running", "values": {}})  # left by a run that was killed
    assert "| stale: recorded as running, but no run holds it" in row(reproducibility_page("smoke"))


def test_a_running_record_held_by_a_live_run_is_running(tiny_project: Path) -> None:
    from transformer_theory.pipeline.locks import results_lock

    path = results(tiny_project)
    write_json_atomic(path.with_name(path.name + ".partial"), {"status": "running", "values": {}})
    with results_lock(path, "test"):
        assert "| running |" in row(reproducibility_page("smoke"))
    assert "| stale: " in row(reproducibility_page("smoke"))


def test_a_failed_run_is_shown_beside_the_results_it_kept(tiny_project: Path) -> None:
    path = results(tiny_project)
    write_json_atomic(failed_path(path), {"status": "failed", "values": {}})
    assert "| failed |" in row(reproducibility_page("smoke"))
    write_json_atomic(path, {"status": "ok", "values": {}})
    assert "| ok; a later run failed (01_tiny.json.failed) |" in row(reproducibility_page("smoke"))


def test_table_cells_are_escaped(tiny_project: Path) -> None:
    write_json_atomic(results(tiny_project), {
        "status": "ok | really", "profile": "smoke", "wall_time_s": 1.0, "seed": 1, "values": {},
        "git": {"commit": "a|b\ncdefgh", "dirty": False}, "versions": {"num|py": "2.0\n|1"},
    })
    page = reproducibility_page("smoke")
    assert r"| ok \| really |" in row(page) and r"`a\|b cde`" in row(page)
    assert r"| num\|py | 2.0 \|1 |" in page


def test_the_page_creates_its_output_folder(tiny_project: Path) -> None:
    output = tiny_project / "new" / "folder" / "reproducibility.md"
    assert write_reproducibility_page("smoke", output) == output
    assert output.read_text().startswith("# Reproducibility") and stat.S_IMODE(output.stat().st_mode) == 0o644
