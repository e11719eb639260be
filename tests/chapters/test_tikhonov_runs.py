"""Chapter 05's trainings as stored runs (Paper A §6): the Dask path gives the serial numbers bit for
bit, records are reused, damaged or stale ones are trained again, losses read back exactly, bad input is
refused before any training."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from transformer_theory.chapters import tikhonov_runs
from transformer_theory.chapters.tikhonov_runs import Sweep, epsilon_sweep, run_config, run_key, run_sweeps
from transformer_theory.models.tikhonov import setup_experiment
from transformer_theory.training.config import ENGINE_VERSION
from transformer_theory.training.store import RecordStore, RunStore

SIZES = {"N": 4, "d": 6, "n": 8, "seed": 3}
EXPERIMENTS = [Sweep("b", [0.1, 0.01], [40, 20]), Sweep("frozen", [0.1], [30], {"eta": 0.0})]


@pytest.fixture
def trained(monkeypatch) -> list:
    """Configurations trained in this process (the real training, counted)."""
    calls = []
    real = tikhonov_runs.train_run

    def counting(config):
        calls.append(run_key(config))
        return real(config)

    monkeypatch.setattr(tikhonov_runs, "train_run", counting)
    return calls


def serial(folder: Path) -> dict:
    return run_sweeps(EXPERIMENTS, **SIZES, store=RecordStore(folder), n_workers=0)


def direct(experiment: Sweep):
    """The experiment trained the textbook way, in one thread."""
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        data, model = setup_experiment(N=SIZES["N"], d=SIZES["d"], n=SIZES["n"], seed=SIZES["seed"])
        return epsilon_sweep(model, data.inputs, data.targets, experiment.eps, experiment.epochs,
                             frozen=experiment.frozen, progress=False)
    finally:
        torch.set_num_threads(previous)


def same(a, b) -> bool:
    return len(a) == len(b) and all(
        np.array_equal(x.losses, y.losses) and x.final_loss == y.final_loss and x.final_sq_norm == y.final_sq_norm
        and x.eps == y.eps for x, y in zip(a, b))


def test_dask_and_serial_runs_are_the_direct_training_bit_for_bit(tmp_path: Path) -> None:
    expected = {e.name: direct(e) for e in EXPERIMENTS}
    on_dask = run_sweeps(EXPERIMENTS, **SIZES, store=RecordStore(tmp_path / "dask"), n_workers=2)
    here = serial(tmp_path / "serial")
    for name in expected:
        assert same(on_dask[name][0], expected[name]) and same(here[name][0], expected[name])
        assert on_dask[name][1] > 0
    assert on_dask["frozen"][0][0].min_loss > on_dask["b"][0][0].min_loss > 0  # different runs, not one twice
    records = [json.loads(p.read_text()) for p in sorted((tmp_path / "dask").glob("*.json"))]
    assert len(records) == 2 and all(r["threads"] == 1 for r in records)
    assert all((r["kind"], r["engine_version"]) == ("tikhonov", ENGINE_VERSION) for r in records)
    assert all(r["git"]["commit"] and r["versions"]["torch"] and r["losses_precision"] == "float32" for r in records)


def test_stored_runs_are_reused(tmp_path: Path, trained: list) -> None:
    first = serial(tmp_path)
    assert len(trained) == 2
    again = serial(tmp_path)
    assert len(trained) == 2 and all(same(first[k][0], again[k][0]) and first[k][1] == again[k][1] for k in first)
    renamed = run_sweeps([Sweep("other name", [0.1], [30], {"eta": 0.0})], **SIZES, store=RecordStore(tmp_path),
                              n_workers=0)
    assert len(trained) == 2 and same(renamed["other name"][0], first["frozen"][0])  # the name is only a label


@pytest.mark.parametrize("damage", ["garbage", "truncated", "stale version", "other config", "short losses",
                                    "string loss"])
def test_damaged_records_are_trained_again(tmp_path: Path, trained: list, damage: str) -> None:
    first = serial(tmp_path)
    key = run_key(run_config(EXPERIMENTS[0], **SIZES))
    path = tmp_path / f"{key}.json"
    text = path.read_text()
    record = json.loads(text)
    if damage == "garbage":
        path.write_text("{ not json")
    elif damage == "truncated":
        path.write_text(text[: len(text) // 2])
    else:
        if damage == "stale version":
            record["engine_version"] = ENGINE_VERSION - 1
        elif damage == "other config":
            record["config"]["lr"] = 1.0
        elif damage == "short losses":
            record["stages"][1]["losses"].pop()
        else:
            record["stages"][0]["losses"][3] = "0.5"
        path.write_text(json.dumps(record))
    again = serial(tmp_path)
    assert trained[2:] == [key]  # only the damaged run
    assert all(same(first[k][0], again[k][0]) for k in first)


def test_losses_are_stored_short_and_read_back_exactly(tmp_path: Path) -> None:
    (stages, _), = run_sweeps([Sweep("a", [0.1], [200])], **SIZES, store=RecordStore(tmp_path), n_workers=0).values()
    record = json.loads(next(tmp_path.glob("*.json")).read_text())
    stored = record["stages"][0]["losses"]
    assert np.array_equal(stages[0].losses, stages[0].losses.astype(np.float32))  # float32 numbers
    assert all(len(repr(v)) <= 15 for v in stored)  # shortest float32 decimals, not 17-digit doubles
    assert not np.array_equal(np.asarray(stored), stages[0].losses)  # so they are not the doubles themselves...
    assert np.array_equal(np.asarray(stored).astype(np.float32).astype(np.float64), stages[0].losses)  # ...but exact


def test_runs_are_kept_in_the_run_store_beside_the_engines_runs(tmp_path: Path, trained: list) -> None:
    """A run store (the profile's, reading the committed folder first) keeps the runs under its own root, with no
    subfolder, and reads them from its committed folder without training."""
    committed = tmp_path / "committed"
    serial(committed)
    assert len(trained) == 2 and len(list(committed.glob("*.json"))) == 2
    again = run_sweeps(EXPERIMENTS, **SIZES, store=RunStore(tmp_path / "build", [committed]), n_workers=0)
    assert len(trained) == 2 and set(again) == {"b", "frozen"} and not (tmp_path / "build").exists()


@pytest.mark.parametrize("experiments, match", [
    ([Sweep("x", [0.1], [1]), Sweep("x", [0.1], [1])], "distinct"),
    ([Sweep("x", [0.1, 0.01], [1])], "equal length"),
    ([Sweep("x", [], [])], "non-empty"),
    ([Sweep("x", [0.0], [1])], "eps"),
    ([Sweep("x", [0.1], [0])], "epochs"),
    ([Sweep("x", [0.1], [1], {"eta": float("nan")})], "frozen"),
])
def test_bad_input_is_refused_before_training(tmp_path: Path, trained: list, experiments, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        run_sweeps(experiments, **SIZES, store=RecordStore(tmp_path), n_workers=0)
    with pytest.raises(ValueError, match="n_workers"):
        run_sweeps(EXPERIMENTS, **SIZES, store=RecordStore(tmp_path), n_workers=-1)
    assert trained == [] and not list(tmp_path.glob("*.json"))


def test_a_record_store_ignores_foreign_json(tmp_path: Path) -> None:
    (tmp_path / "k.json").write_text("[1, 2]")
    assert RecordStore(tmp_path).read("k", lambda record: True) is None
