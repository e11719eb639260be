"""The run store: matching records are reused; corrupt, stale or tampered ones and broken checkpoints are
recomputed; the default locations (build store, committed store read first)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from tiny_runs import QUIET, tiny_run, restore_threads  # noqa: F401 (autouse fixture)
from transformer_theory.models import Transformer
from transformer_theory.training import ENGINE_VERSION, RunRecord, RunStore, TrainOptions, default_store, train_runs
from transformer_theory.training import distributed as distributed_module
from transformer_theory.training.checkpoint import load_checkpoint, save_checkpoint
from transformer_theory.training.store import trained_model
from transformer_theory.training.tasks import plan_tasks
from transformer_theory.training.trainer import train_task

OPTIONS = TrainOptions(**QUIET)
RUNS = [tiny_run((2, 2), 0, steps=30, eval_every=10), tiny_run((1, 2), 1, steps=30, eval_every=10)]


@pytest.fixture
def counted(monkeypatch) -> list:
    """Tasks trained by train_runs (the real trainer, counted)."""
    trained = []

    def counting(task, store=None, options=OPTIONS, report=None):
        trained.append(task.keys)
        return train_task(task, store, options, report)

    monkeypatch.setattr(distributed_module, "train_task", counting)
    return trained


def serial(store: RunStore) -> list[RunRecord]:
    return train_runs(RUNS, store, n_workers=0, options=OPTIONS)


def test_matching_records_are_reused(tmp_path: Path, counted: list) -> None:
    store = RunStore(tmp_path)
    first = serial(store)
    assert len(counted) == 1 and {p.name for p in tmp_path.glob("*.json")} == {f"{r.key}.json" for r in RUNS}
    assert all(isinstance(r, RunRecord) for r in first)
    assert all(r.provenance["engine_version"] == ENGINE_VERSION and r.provenance["git"]["commit"]
               and r.provenance["versions"]["torch"] for r in first)
    assert store.weights(RUNS[0]) is not None and not list((tmp_path / "checkpoints").glob("*"))
    assert serial(store) == first and len(counted) == 1


@pytest.mark.parametrize("damage", ["garbage", "truncated", "stale version", "other config", "tampered best",
                                    "tampered best step", "no wall time", "foreign task"])
def test_damaged_records_are_recomputed(tmp_path: Path, counted: list, damage: str) -> None:
    store = RunStore(tmp_path)
    first = serial(store)
    path = store.record_path(RUNS[0].key)
    text = path.read_text()
    record = json.loads(text)
    if damage == "garbage":
        path.write_text("not json {")
    elif damage == "truncated":
        path.write_text(text[: len(text) // 2])
    else:
        if damage == "stale version":
            record["engine_version"] = ENGINE_VERSION - 1
        elif damage == "other config":
            record["config"]["lr"] = 1.0
        elif damage == "tampered best":
            record["best_nmse"] = 1e-9
        elif damage == "tampered best step":
            record["best_step"] = None
        elif damage == "no wall time":
            del record["wall_time_s"]
        else:
            record["task"]["runs"] = ["another-run"]
        path.write_text(json.dumps(record))
    again = serial(store)
    assert len(counted) == 2 and counted[1] == [RUNS[0].key]  # only the damaged run is trained again
    assert again[1] == first[1]
    # retrained in a task of its own: the same run up to float rounding (batching changes the rounding)
    for name in ("train_loss", "val_nmse"):
        np.testing.assert_allclose(getattr(again[0].history, name), getattr(first[0].history, name), rtol=1e-5)


@pytest.mark.parametrize("damage", ["truncated", "emptied", "flipped byte"])
def test_a_record_whose_weights_are_unreadable_is_retrained(tmp_path: Path, counted: list, damage: str) -> None:
    store = RunStore(tmp_path)
    serial(store)
    weights = store.weights_path(RUNS[0].key)
    data = weights.read_bytes()
    if damage == "truncated":
        weights.write_bytes(data[: len(data) // 2])
    elif damage == "emptied":
        weights.write_bytes(b"")
    else:
        middle = len(data) // 2
        weights.write_bytes(data[:middle] + bytes([data[middle] ^ 0xFF]) + data[middle + 1:])
    assert store.get(RUNS[0]) is None and store.weights(RUNS[0]) is None
    serial(store)
    assert counted[1] == [RUNS[0].key]
    assert set(store.weights(RUNS[0])) == set(Transformer(RUNS[0].model).state_dict())


def test_a_run_whose_weights_are_needed_is_retrained_when_they_are_missing(tmp_path: Path, counted: list) -> None:
    store = RunStore(tmp_path)
    serial(store)
    store.weights_path(RUNS[0].key).unlink()
    assert serial(store) and len(counted) == 1, "a run whose weights nobody reads keeps its record"
    with pytest.raises(ValueError, match=f"no readable weights {RUNS[0].key}.pt beside a valid record in {tmp_path}"):
        trained_model(RUNS[0], store)
    train_runs(RUNS, store, n_workers=0, options=OPTIONS, with_weights={RUNS[0].key})
    assert counted[1] == [RUNS[0].key] and trained_model(RUNS[0], store) is not None


def test_weights_broken_in_the_committed_store_are_replaced_by_a_new_run(tmp_path: Path, counted: list) -> None:
    committed = RunStore(tmp_path / "committed")
    serial(committed)
    committed.weights_path(RUNS[0].key).write_bytes(b"PK\x03\x04 not a zip")
    store = RunStore(tmp_path / "build", read_also=[committed.root])
    serial(store)
    assert counted[1] == [RUNS[0].key]
    assert store.get(RUNS[0]) == json.loads(store.record_path(RUNS[0].key).read_text())  # the new record
    assert store.weights(RUNS[0]) is not None and store.get(RUNS[1]) == committed.get(RUNS[1])


@pytest.mark.parametrize("damage", ["truncated", "another task"])
def test_a_broken_or_foreign_checkpoint_is_ignored(tmp_path: Path, damage: str) -> None:
    store = RunStore(tmp_path)
    (task,) = plan_tasks(RUNS)
    path = store.checkpoint_path(task.key(OPTIONS))
    key = task.key(OPTIONS) if damage == "truncated" else "another-task"
    save_checkpoint(path, key, {"step": 20, "params": {"w": torch.zeros(4096)}})
    if damage == "truncated":
        path.write_bytes(path.read_bytes()[:2000])
    assert load_checkpoint(path, task.key(OPTIONS)) is None
    records = train_task(task, store, OPTIONS)
    assert records[0]["task"]["resumed_at_steps"] == []
    assert [r["history"] for r in records] == [r["history"] for r in train_task(task, None, OPTIONS)]
    assert not path.exists()


def test_default_store_reads_the_committed_runs_first(tiny_project: Path) -> None:
    committed = tiny_project / "results" / "book" / "runs"
    records = train_runs(RUNS[:1], RunStore(committed), n_workers=0, options=OPTIONS)
    store = default_store("book")
    assert store.root == tiny_project / "build" / "runs" / "book"
    assert store.get(RUNS[0]) == records[0].to_dict() and store.get(RUNS[1]) is None
    fresh = default_store("book", tiny_project / "fresh")  # a reproduction's store replaces both folders
    assert (fresh.root, fresh.read_also) == (tiny_project / "fresh", []) and fresh.get(RUNS[0]) is None


def test_a_run_trained_in_this_process_is_written_once(tmp_path: Path, monkeypatch) -> None:
    """train_task stores each record as the task finishes; the job store then finds it and does not write again,
    while a record missing from the store (trained where the store is not shared) is written."""
    writes = []
    put = RunStore.put

    def counting(self, run, record, weights=None):
        writes.append(run.key)
        put(self, run, record, weights)

    monkeypatch.setattr(RunStore, "put", counting)
    records = serial(RunStore(tmp_path))
    assert sorted(writes) == sorted(r.key for r in RUNS)  # once each, by train_task
    writes.clear()
    job = distributed_module.TrainingJob(plan_tasks(RUNS)[0], str(tmp_path / "elsewhere"), OPTIONS)
    distributed_module.TaskStore(RunStore(tmp_path / "elsewhere")).keep(job, [(r.to_dict(), None) for r in records])
    assert sorted(writes) == sorted(r.key for r in RUNS)  # absent there: written
