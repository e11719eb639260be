"""The command line: checked parameters, results files with provenance, resumable sweeps."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import cli
from transformer_theory.pipeline.parameters import check_parameters, parse_list, parse_value
from transformer_theory.storage.results import failed_path, read_results, write_json_atomic


# --- parameter checking (no execution) -------------------------------------------------------

def test_misspelled_parameter_is_rejected_before_running(tiny_project: Path) -> None:
    out = cli("run", "01_tiny", "--profile", "smoke", "-p", "scael", "3")
    assert out.returncode == 2
    assert "unknown parameter 'scael'" in out.stderr and "Did you mean 'scale'" in out.stderr
    assert "Valid parameters: gate, label, scale, x" in out.stderr  # sorted
    assert not (tiny_project / "build").exists(), "nothing may execute before the parameters are checked"


def test_wrongly_typed_value_is_rejected(tiny_project: Path) -> None:
    out = cli("run", "01_tiny", "--profile", "smoke", "-p", "x", "ten")
    assert out.returncode == 2
    assert "parameter 'x' of notebook '01_tiny' expects int (default 1), got str 'ten'" in out.stderr
    assert not (tiny_project / "build").exists()


def test_unknown_profile_and_notebook_are_rejected(tiny_project: Path) -> None:
    out = cli("run", "01_tiny", "--profile", "smok")
    assert out.returncode == 2 and "unknown profile 'smok'" in out.stderr and "book, paper, smoke" in out.stderr
    out = cli("run", "01_tinny", "--profile", "smoke")
    assert out.returncode == 2 and "unknown notebook '01_tinny'" in out.stderr and "Did you mean '01_tiny'" in out.stderr


def test_profile_values_are_checked_too(tiny_project: Path) -> None:
    (tiny_project / "params" / "smoke.yaml").write_text("01_tiny:\n  sclae: 2.0\n")
    out = cli("run", "01_tiny", "--profile", "smoke")
    assert out.returncode == 2 and "unknown parameter 'sclae'" in out.stderr and "params/smoke.yaml" in out.stderr


def test_real_notebook_rejects_a_typo() -> None:
    out = cli("run", "00_overview", "--profile", "smoke", "-p", "sed", "1")
    assert out.returncode == 2 and "unknown parameter 'sed'" in out.stderr and "Did you mean 'seed'" in out.stderr


@pytest.mark.parametrize(
    "default, value, expected",
    [(1, 3, 3), (0.5, 2, 2.0), (True, False, False), ([1, 2], [3], [3]), ("a", "b", "b"), (None, {"k": 1}, {"k": 1})],
)
def test_type_coercion_accepts_matching_values(default, value, expected) -> None:
    assert check_parameters("nb", {"p": default}, {"p": value}) == {"p": expected}


@pytest.mark.parametrize("default, value", [(1, 1.5), (1, True), (0.5, "x"), (True, 1), ([1], 1), ("a", 1)])
def test_type_coercion_rejects_mismatches(default, value) -> None:
    with pytest.raises(ValueError, match="parameter 'p' of notebook 'nb' expects"):
        check_parameters("nb", {"p": default}, {"p": value})


@pytest.mark.parametrize("default, value, problem", [
    ([1, 2], [], "'p' of notebook 'nb' expects a non-empty list"),
    ([1, 2], [1, "a"], "'p[1]' of notebook 'nb' expects int"),
    ([[1, 2]], [[1], [1.5]], "'p[1][0]' of notebook 'nb' expects int"),
])
def test_list_elements_and_emptiness_are_checked(default, value, problem) -> None:
    with pytest.raises(ValueError, match=problem.replace("[", r"\[")):
        check_parameters("nb", {"p": default}, {"p": value})


def test_list_elements_are_coerced_like_the_defaults_elements() -> None:
    assert check_parameters("nb", {"p": [0.5, 1.0]}, {"p": [2]}) == {"p": [2.0]}
    assert check_parameters("nb", {"p": [1, "a"]}, {"p": ["b", 2.5]}) == {"p": ["b", 2.5]}  # mixed: any elements
    assert check_parameters("nb", {"p": []}, {"p": []}) == {"p": []}


def test_value_parsing() -> None:
    assert parse_value("10") == 10 and parse_value("1e-3") == 1e-3 and parse_value("[2, 3]") == [2, 3]
    assert parse_value("true") is True and parse_value("abc") == "abc" and parse_value("1e3") == 1000.0
    assert parse_list("1,2,3") == [1, 2, 3] and parse_list("[1,2],[3]") == [[1, 2], [3]]


# --- running ---------------------------------------------------------------------------------

def test_run_writes_executed_notebook_and_results_with_provenance(tiny_project: Path) -> None:
    out = cli("run", "01_tiny", "--profile", "smoke")
    assert out.returncode == 0, out.stderr
    assert "Kernel is running over TCP" not in out.stdout + out.stderr, "the kernel must talk over IPC sockets"
    assert (tiny_project / "build" / "executed" / "smoke" / "01_tiny.ipynb").is_file()
    data = json.loads((tiny_project / "build" / "results" / "smoke" / "01_tiny.json").read_text())
    assert data["status"] == "ok" and data["values"] == {"y": 2.0}
    assert data["parameters"] == {"x": 1, "scale": 2.0, "label": "a", "gate": ""}
    assert data["overrides"] == {} and data["profile"] == "smoke"
    assert data["wall_time_s"] > 0 and data["versions"]["numpy"] and "commit" in data["git"]
    assert len(data["config_hash"]) == 16


def test_a_run_with_overrides_is_kept_apart_from_the_book(tiny_project: Path) -> None:
    """``-p`` writes under build/custom/<profile>/<the overrides, sorted>/, never where the book is rendered from."""
    book = [tiny_project / "build" / "executed" / "smoke" / "01_tiny.ipynb",
            tiny_project / "build" / "results" / "smoke" / "01_tiny.json"]
    assert cli("run", "01_tiny", "--profile", "smoke").returncode == 0
    before = [path.read_bytes() for path in book]
    out = cli("run", "01_tiny", "--profile", "smoke", "-p", "x", "3", "-p", "label", "b")
    assert out.returncode == 0, out.stderr
    assert [path.read_bytes() for path in book] == before, "a custom run changed the book's chapter"
    custom = tiny_project / "build" / "custom" / "smoke" / "label=b_x=3"
    assert (custom / "01_tiny.ipynb").is_file() and str(custom / "01_tiny.ipynb") in out.stdout
    data = json.loads((custom / "01_tiny.json").read_text())
    assert data["status"] == "ok" and data["values"] == {"y": 6.0} and data["overrides"] == {"x": 3, "label": "b"}


def test_negative_numbers_and_empty_strings_are_values(tiny_project: Path) -> None:
    out = cli("run", "01_tiny", "--profile", "smoke", "-p", "scale", "-1e-3", "-p", "x", "-2", "-p", "label", "")
    assert out.returncode == 0, out.stderr
    data = read_results(tiny_project / "build" / "custom" / "smoke" / "label=_scale=-0.001_x=-2" / "01_tiny.json")
    assert data["overrides"] == {"scale": -0.001, "x": -2, "label": ""} and data["values"] == {"y": 0.002}
    assert parse_value("-.inf") == -math.inf and parse_list("-1,-2.5") == [-1, -2.5]


def test_ctrl_c_before_a_run_started_names_no_partial_record(tiny_project: Path, monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture) -> None:
    from transformer_theory.pipeline import runner
    from transformer_theory.pipeline.cli import main
    from transformer_theory.pipeline.processes import Interrupted

    def interrupted_at_once(spec: runner.RunSpec, **kwargs: object) -> dict:
        raise Interrupted(signal.SIGINT)

    monkeypatch.setattr(runner, "execute", interrupted_at_once)
    assert main(["run", "01_tiny", "--profile", "smoke"]) == 130
    err = capsys.readouterr().err
    assert "this run had not started: it wrote nothing" in err and ".partial" not in err


def test_failing_notebook_reports_failure(tiny_project: Path) -> None:
    out = cli("run", "01_tiny", "--profile", "smoke", "-p", "label", "fail")
    assert out.returncode == 1 and "asked to fail" in out.stderr
    results = tiny_project / "build" / "custom" / "smoke" / "label=fail" / "01_tiny.json"
    data = read_results(failed_path(results))
    assert data["status"] == "failed" and "asked to fail" in data["error"]
    assert not results.exists(), "a failed run is no result"


def test_a_failed_run_keeps_the_previous_results_byte_identical(tiny_project: Path) -> None:
    results = tiny_project / "build" / "results" / "smoke" / "01_tiny.json"
    executed = tiny_project / "build" / "executed" / "smoke" / "01_tiny.ipynb"
    assert cli("run", "01_tiny", "--profile", "smoke").returncode == 0
    good = results.read_bytes(), executed.read_bytes()
    profile = tiny_project / "params" / "smoke.yaml"
    profile.write_text("01_tiny:\n  scale: 2.0\n  label: fail\n")  # the profile, not -p: the same results file
    out = cli("run", "01_tiny", "--profile", "smoke")
    profile.write_text("01_tiny:\n  scale: 2.0\n")
    assert out.returncode == 1
    assert (results.read_bytes(), executed.read_bytes()) == good
    assert read_results(failed_path(results))["executed_notebook"] == str(failed_path(executed))
    assert "asked to fail" in failed_path(executed).read_text()
    assert str(failed_path(results)) in out.stderr and str(failed_path(executed)) in out.stderr
    assert cli("run", "01_tiny", "--profile", "smoke").returncode == 0
    assert not failed_path(results).exists() and not failed_path(executed).exists(), "a good run clears the failure"


def test_results_write_is_atomic_and_corrupt_files_read_as_missing(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    write_json_atomic(path, {"values": {"a": 1}})
    assert read_results(path) == {"values": {"a": 1}}
    assert list(tmp_path.iterdir()) == [path], "no temporary file may be left behind"
    path.write_text('{"values": {"a": 1')  # truncated
    assert read_results(path) is None


# --- sweeps ----------------------------------------------------------------------------------

def sweep_dir(root: Path) -> Path:
    return root / "build" / "sweeps" / "smoke" / "01_tiny"


def test_sweep_runs_grid_and_reports_failures(tiny_project: Path) -> None:
    out = cli("sweep", "01_tiny", "--profile", "smoke", "-p", "x", "1,2", "-p", "label", "a,fail", "--jobs", "2")
    assert out.returncode == 1
    assert "2 run, 0 skipped" in out.stdout and "2 failed" in out.stdout
    assert "FAILED x=1_label=fail" in out.stderr and "FAILED x=2_label=fail" in out.stderr
    for x in (1, 2):
        data = read_results(sweep_dir(tiny_project) / f"x={x}_label=a.json")
        assert data["status"] == "ok" and data["values"]["y"] == 2.0 * x
        assert (sweep_dir(tiny_project) / f"x={x}_label=a.ipynb").is_file()


def test_sweep_rejects_bad_points_before_running(tiny_project: Path) -> None:
    out = cli("sweep", "01_tiny", "--profile", "smoke", "-p", "x", "1,two")
    assert out.returncode == 2 and "expects int" in out.stderr
    assert not sweep_dir(tiny_project).exists()


def test_interrupted_sweep_resumes_without_rerunning(tiny_project: Path) -> None:
    gate = tiny_project / "gate"
    gate.touch()  # point x=2 waits while the gate exists
    args = ["sweep", "01_tiny", "--profile", "smoke", "-p", "x", "1,2", "-p", "gate", str(gate)]
    proc = subprocess.Popen([sys.executable, "-m", "transformer_theory", *args], start_new_session=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.time() + 120
    while time.time() < deadline:
        done = [p for p in sweep_dir(tiny_project).glob("x=1_*.json") if (read_results(p) or {}).get("status") == "ok"]
        if done:
            first = done[0]
            break
        time.sleep(0.2)
    else:
        pytest.fail("the first point never finished")
    os.killpg(proc.pid, signal.SIGKILL)  # interrupt while x=2 is running
    proc.wait()
    stamp = first.stat().st_mtime_ns
    gate.unlink()

    out = cli(*args)
    assert out.returncode == 0, out.stderr
    assert "1 run, 1 skipped" in out.stdout and "skipped x=1_" in out.stdout
    assert first.stat().st_mtime_ns == stamp, "the finished point was re-run"
    second = read_results(first.with_name(first.name.replace("x=1", "x=2")))
    assert second["status"] == "ok" and second["values"]["y"] == 4.0


def test_sweep_recomputes_a_corrupt_results_file(tiny_project: Path) -> None:
    args = ["sweep", "01_tiny", "--profile", "smoke", "-p", "x", "1"]
    assert cli(*args).returncode == 0
    results = sweep_dir(tiny_project) / "x=1.json"
    results.write_text("{not json")
    out = cli(*args)
    assert out.returncode == 0 and "1 run, 0 skipped" in out.stdout
    assert read_results(results)["status"] == "ok"


def test_list_shows_parameters(tiny_project: Path) -> None:
    out = cli("list")
    assert out.returncode == 0 and "01_tiny" in out.stdout and "scale = 0.5  (float)" in out.stdout


def test_reproducibility_page_lists_each_notebook(tiny_project: Path) -> None:
    from transformer_theory.pipeline.report import reproducibility_page

    assert "| 01_tiny | smoke | not run |" in reproducibility_page("smoke")
    record = {"profile": "smoke", "status": "ok", "wall_time_s": 2.5, "seed": 7,
              "parameters": {"x": 1, "scale": 2.0, "label": "a", "gate": ""},  # the profile's scale: no override
              "git": {"commit": "abcdef123456", "dirty": True}, "versions": {"python": "3.11.7", "numpy": "2.4.6"},
              "platform": "Linux-x", "values": {}}
    write_json_atomic(tiny_project / "build" / "results" / "smoke" / "01_tiny.json", record)
    page = reproducibility_page("smoke")
    assert "| [01_tiny](notebooks/01_tiny.ipynb) | smoke | ok | 2.5 | 7 | none | `abcdef1+` |" in page
    assert "| numpy | 2.4.6 |" in page and "Platform: `Linux-x`" in page
    record["parameters"] = {"x": 3, "scale": 0.5, "label": "a", "gate": ""}  # the notebook's scale, not the profile's
    write_json_atomic(tiny_project / "build" / "results" / "smoke" / "01_tiny.json", record)
    assert "| 7 | scale = 0.5, x = 3 | `abcdef1+` |" in reproducibility_page("smoke")


def test_a_notebook_knows_its_context(tiny_project) -> None:
    """The runner tells the kernel its context (its profile, whose run store its chapter reads, and its results
    file) through the kernel's environment only: this process's environment does not change."""
    import os

    from conftest import make_notebook
    from transformer_theory.pipeline.context import kernel_context

    make_notebook(tiny_project / "notebooks" / "02_profile.ipynb", "x = 1",
                  "from transformer_theory import kernel_context\n"
                  "context = kernel_context()\n"
                  "context.record('profile', context.profile)\n"
                  "context.record('store', [str(context.store.root), [str(p) for p in context.store.read_also]])")
    before = dict(os.environ)
    for profile in ("smoke", "paper"):
        (tiny_project / "params" / f"{profile}.yaml").write_text("01_tiny:\n  scale: 2.0\n02_profile: {}\n")
        result = cli("run", "02_profile", "--profile", profile)
        assert result.returncode == 0, result.stderr
        data = json.loads((tiny_project / "build" / "results" / profile / "02_profile.json").read_text())
        assert data["values"]["profile"] == profile
        assert data["values"]["store"] == [str(tiny_project / "build" / "runs" / profile),
                                           [str(tiny_project / "results" / profile / "runs")]]
    assert dict(os.environ) == before
    interactive = kernel_context({})
    assert interactive.profile == "book" and interactive.results.path is None  # an interactive session
    assert interactive.record("a", 1) == 1 and interactive.results.values == {"a": 1}
