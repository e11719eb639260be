"""``make reproduce``: a profile recomputed into ``build/reproduce/<profile>/`` with a fresh run store, compared
with the committed ``results/<profile>/``, which changes only on accept."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace

import pytest

from conftest import TINY_INTRINSIC as TINY, make_notebook
from transformer_theory.pipeline import reproduce as reproduce_module
from transformer_theory.pipeline.cli import main
from transformer_theory.pipeline.reproduce import (MAX_ROWS_PER_VALUE, Part, accept, ratio, reproduce_folder,
                                                   run_rows, value_rows)
from transformer_theory.pipeline.runner import prepare_run

FIT = "01_fit"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project with one chapter that records ``y = 2 x`` and trains one tiny Tikhonov run (five epochs on
    two sequences of three tokens, in the notebook's process) into the profile's run store."""
    make_notebook(
        tmp_path / "notebooks" / f"{FIT}.ipynb",
        """
        x = 1
        fail = False
        """,
        """
        if fail:
            raise RuntimeError("asked to fail")
        from transformer_theory import kernel_context
        from transformer_theory.chapters.tikhonov_runs import Sweep, run_sweeps
        context = kernel_context()
        record = context.record
        (stages, _), = run_sweeps([Sweep("a", [0.1], [5])], N=2, d=2, n=3, seed=0, store=context.store,
                                  n_workers=0).values()
        record("y", 2 * x)
        record("min_loss", float(stages[0].losses.min()))
        """,
    )
    (tmp_path / "params").mkdir()
    for profile in ("smoke", "book", "paper"):
        (tmp_path / "params" / f"{profile}.yaml").write_text(f"{FIT}:\n  x: 3\n")
    monkeypatch.setenv("TRANSFORMER_THEORY_ROOT", str(tmp_path))
    monkeypatch.delenv("TRANSFORMER_THEORY_RUNS", raising=False)
    return tmp_path


@pytest.fixture
def cli(capsys: pytest.CaptureFixture) -> Callable[..., SimpleNamespace]:
    """``python -m transformer_theory ARGS`` in this process (the notebooks still run in their own kernels)."""

    def run(*args: str) -> SimpleNamespace:
        returncode = main(list(args))
        out = capsys.readouterr()
        return SimpleNamespace(returncode=returncode, stdout=out.out, stderr=out.err)

    return run


def files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_reproduce_compares_and_changes_results_only_on_accept(project: Path, cli, monkeypatch) -> None:
    committed = project / "results" / "smoke"
    committed.mkdir(parents=True)
    (committed / f"{FIT}.json").write_text(json.dumps({"status": "ok", "wall_time_s": 2.0, "values": {"y": 3}}))
    before = files(project / "results")
    environ, seen, execute = dict(os.environ), [], reproduce_module.execute

    def spy(*args, **kwargs):  # the fresh run store goes to the kernel only, never into this process's environment
        seen.append(dict(os.environ))
        return execute(*args, **kwargs)

    monkeypatch.setattr(reproduce_module, "execute", spy)
    out = cli("reproduce", "--profile", "smoke")
    assert out.returncode == 0, out.stderr
    assert seen == [environ] and dict(os.environ) == environ
    folder = project / "build" / "reproduce" / "smoke"
    (run,) = (folder / "runs").glob("*.json")  # the fresh run store of the reproduction
    assert f"| {FIT} | y | 3 | 6 | 2 |" in out.stdout  # committed 3, recomputed 2 x = 6, ratio 2
    assert f"| {FIT} | min_loss | missing |" in out.stdout
    assert f"| `{run.stem[:8]}` Tikhonov ε=0.1, 5 epochs: min loss | missing |" in out.stdout
    assert out.stdout.count(f"| {FIT} | ok | ") == 1 and "training time of the runs (1 tasks, 1 runs" in out.stdout
    assert "results/smoke/ is unchanged" in out.stdout
    assert (folder / "comparison.md").read_text() in out.stdout
    assert files(project / "results") == before, "results/ may change only on accept"

    (project / "params" / "smoke.yaml").write_text(f"{FIT}:\n  x: 4\n")  # the reproduction is no longer current
    out = cli("reproduce", "--profile", "smoke", "--no-run", "--accept", FIT)
    assert out.returncode == 2 and "no complete, current results" in out.stderr, out.stderr
    assert files(project / "results") == before
    (project / "params" / "smoke.yaml").write_text(f"{FIT}:\n  x: 3\n")

    out = cli("reproduce", "--profile", "smoke", "--no-run", "--accept")  # `make accept`: nothing runs
    assert out.returncode == 0, out.stderr
    assert "accepted: 2 files written under results/smoke/" in out.stdout
    assert (committed / f"{FIT}.json").read_bytes() == (folder / "results" / f"{FIT}.json").read_bytes()
    assert (committed / "runs" / run.name).read_bytes() == run.read_bytes()

    # A second reproduction into another folder trains the run again (the committed record is not read) and
    # gets the same numbers; a complete notebook in the folder is kept on the next call.
    again = project / "again"
    out = cli("reproduce", "--profile", "smoke", "--output", str(again))
    assert out.returncode == 0, out.stderr
    assert (again / "runs" / run.name).is_file() and "(1 tasks, 1 runs" in out.stdout
    assert f"| {FIT} | y | 6 | 6 | 1 (equal) |" in out.stdout and f"| {FIT} | min_loss |" in out.stdout
    assert f"| `{run.stem[:8]}` Tikhonov ε=0.1, 5 epochs: min loss |" in out.stdout
    rows = [line for line in out.stdout.splitlines() if "min loss" in line or "min_loss" in line]
    assert rows and all(line.rstrip().endswith("| 1 (equal) |") for line in rows), rows
    stamp = (again / "results" / f"{FIT}.json").stat().st_mtime_ns
    out = cli("reproduce", "--profile", "smoke", "--output", str(again))
    assert out.returncode == 0 and f"{FIT}: complete in" in out.stdout and f"| {FIT} | ok (kept) |" in out.stdout
    assert (again / "results" / f"{FIT}.json").stat().st_mtime_ns == stamp


def test_a_failed_chapter_is_reported_and_never_accepted(project: Path, cli) -> None:
    (project / "params" / "smoke.yaml").write_text(f"{FIT}:\n  fail: true\n")
    out = cli("reproduce", "--profile", "smoke", "--accept")
    assert out.returncode == 1 and f"FAILED {FIT}" in out.stderr and "asked to fail" in out.stderr
    assert f"| {FIT} | failed | " in out.stdout
    assert not (project / "results").exists()
    out = cli("reproduce", "--profile", "smoke", "--no-run", "--accept")
    assert out.returncode == 2 and "no complete, current results" in out.stderr


def test_bad_arguments_are_refused_before_anything_runs(project: Path, cli) -> None:
    out = cli("reproduce", "01_fitt", "--profile", "smoke")
    assert out.returncode == 2 and "unknown notebook '01_fitt'" in out.stderr
    out = cli("reproduce", "--profile", "smok")
    assert out.returncode == 2 and "unknown profile 'smok'" in out.stderr
    assert not (project / "build").exists()


TRAINING_CHAPTER = "10_intrinsic_dimension"


def test_the_training_chapters_runs_are_trained_first_on_dask(project: Path, cli) -> None:
    import yaml

    make_notebook(project / "notebooks" / f"{TRAINING_CHAPTER}.ipynb",
                  "\n".join(f"{name} = None" for name in TINY),
                  f"""
                  from transformer_theory import kernel_context
                  from transformer_theory.chapters import experiment, run_experiment
                  context = kernel_context()
                  parameters = {{name: globals()[name] for name in {sorted(TINY)!r}}}
                  results = run_experiment("{TRAINING_CHAPTER}", parameters, store=context.store, n_workers=0)
                  record = context.record
                  record("models_per_task", sorted({{r.record.task["models"] for r in results}}))
                  """)
    smoke = project / "params" / "smoke.yaml"
    smoke.write_text(smoke.read_text() + yaml.safe_dump({TRAINING_CHAPTER: TINY}))
    assert cli("reproduce", TRAINING_CHAPTER, "--profile", "smoke", "--workers", "-1").returncode == 2
    folder = project / "build" / "reproduce" / "smoke"
    assert not (folder / "runs").exists()  # refused before anything trained
    out = cli("reproduce", TRAINING_CHAPTER, "--profile", "smoke", "--workers", "2")
    assert out.returncode == 0, out.stderr
    training = json.loads((folder / "training.json").read_text())
    # 6 runs in 2 tasks, the longer schedule's 3 in 1, 1 head-count
    assert (training["runs"], training["tasks"], training["workers"]) == (10, 4, 2)
    results = json.loads((folder / "results" / f"{TRAINING_CHAPTER}.json").read_text())
    assert results["values"]["models_per_task"] == [1, 3]  # read from the store: the notebook alone would batch 6
    assert "training up front: 10 runs in 4 tasks on 2 Dask workers" in out.stdout


# --- the comparison tables (no execution) --------------------------------------------------------------------

def test_value_rows_give_one_ratio_per_number() -> None:
    committed = {"a": 2.0, "flag": True, "pair": [1, 4], "only_old": 1, "many": list(range(1, 9)), "same": [1] * 8}
    recomputed = {"a": 3.0, "flag": False, "pair": [1, 2], "only_new": "x", "many": [1, 2, 3, 4, 5, 6, 7, 16],
                  "same": [1] * 8}
    rows = {row["value"]: (row["committed"], row["recomputed"], row["ratio"])
            for row in value_rows("nb", committed, recomputed)}
    assert rows["a"] == ("2", "3", "1.5")
    assert rows["flag"] == ("True", "False", "differs")
    assert rows["pair[0]"] == ("1", "1", "1 (equal)") and rows["pair[1]"] == ("4", "2", "0.5")
    assert rows["only_old"] == ("1", "missing", "missing") and rows["only_new"] == ("missing", "x", "missing")
    assert len(committed["many"]) > MAX_ROWS_PER_VALUE
    assert rows["many (8 values)"] == ("8 values", "8 values", "1 to 2, 1 of 8 differ")
    assert rows["same (8 values)"][2] == "1 (all 8 equal)"
    assert ratio(0.0, 1.0) == "n/a (committed 0)" and ratio(1, 1.0) == "1"


def test_run_rows_compare_best_nmse_and_tikhonov_losses() -> None:
    engine = {"best_nmse": 0.02, "seed": 1, "task": {"key": "t"},
              "config": {"target": "min_dot", "target_args": {}, "seq_len": 8,
                         "model": {"heads": [1], "ffn_width": 16}}}
    tikhonov = {"kind": "tikhonov", "config": {"epochs": [3, 4], "frozen": None},
                "stages": [{"eps": 0.1, "losses": [5.0, 2.0, 3.0]}, {"eps": 0.01, "losses": [1.0, 0.5, 0.25, 0.5]}]}
    recomputed = {"e.json": {**engine, "best_nmse": 0.01}, "k.json": tikhonov, "new.json": engine}
    rows = run_rows({"e.json": engine, "k.json": tikhonov}, recomputed)
    table = {row["run"]: (row["committed"], row["recomputed"], row["ratio"]) for row in rows}
    assert table["`e` min_dot {}, heads [1], T=8, FFN 16, seed 1: best NMSE"] == ("0.02", "0.01", "0.5")
    assert table["`k` Tikhonov ε=0.1, 3 epochs: min loss"] == ("2", "2", "1 (equal)")
    assert table["`k` Tikhonov ε=0.01, 4 epochs: min loss"] == ("0.25", "0.25", "1 (equal)")
    assert table["`new` min_dot {}, heads [1], T=8, FFN 16, seed 1: best NMSE"] == ("missing", "0.02", "missing")
    assert len(rows) == 4


def test_accept_copies_run_records_and_only_the_weights_already_committed(project: Path) -> None:
    folder = reproduce_folder("smoke")
    spec = prepare_run(FIT, "smoke", output=folder / "executed" / f"{FIT}.ipynb",
                       results=folder / "results" / f"{FIT}.json")
    result = {"status": "ok", "config_hash": spec.config_hash, "values": {"y": 6}}
    spec.results.parent.mkdir(parents=True)
    spec.results.write_text(json.dumps(result))
    spec.output.parent.mkdir(parents=True)
    spec.output.write_text("{}")
    runs, committed = folder / "runs", project / "results" / "smoke" / "runs"
    for name in ("kept", "new"):
        (runs / "checkpoints").mkdir(parents=True, exist_ok=True)
        (runs / f"{name}.json").write_text(json.dumps({"key": name, "best_nmse": 0.5}))
        (runs / f"{name}.pt").write_bytes(b"recomputed weights")
    (runs / "checkpoints" / "task.json").write_text("{}")
    committed.mkdir(parents=True)
    (committed / "kept.pt").write_bytes(b"old weights")

    written = accept("smoke", [Part(spec, True, result)])
    assert sorted(str(p.relative_to(committed.parent)) for p in written) == [
        f"{FIT}.json", "runs/kept.json", "runs/kept.pt", "runs/new.json"]
    assert (committed / "kept.pt").read_bytes() == b"recomputed weights" and not (committed / "new.pt").exists()
    assert not (committed / "checkpoints").exists()

    (project / "params" / "smoke.yaml").write_text(f"{FIT}:\n  x: 4\n")  # stale now: refused, nothing copied
    (runs / "new.json").write_text(json.dumps({"key": "new", "best_nmse": 0.25}))
    with pytest.raises(ValueError, match="not accepted: 01_fit"):
        accept("smoke", [Part(prepare_run(FIT, "smoke", output=spec.output, results=spec.results), True, result)])
    assert json.loads((committed / "new.json").read_text())["best_nmse"] == 0.5
