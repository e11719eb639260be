"""The committed runs still resolve under today's code: every record under ``results/<profile>/runs/`` is named by
the key its configuration has now (so a refactor that changed a key, or dropped a target from the registry, fails
here naming the file), the run store returns it for that configuration, and its target builds; every record of
chapter 05's Tikhonov runs (``kind`` ``"tikhonov"``, in the same folder) likewise, and the job executor reuses it
instead of training."""

from __future__ import annotations

import json

import pytest

import transformer_theory.chapters  # noqa: F401 (registers the targets the committed runs name)
from conftest import ROOT
from transformer_theory.infoflow.trees import Tree
from transformer_theory.chapters import tikhonov_runs
from transformer_theory.chapters.tikhonov_runs import KIND, TikhonovRun
from transformer_theory.training import RunConfig, RunStore
from transformer_theory.training.jobs import run_jobs

#: The committed run records: the engine's, and chapter 05's (its jobs of one record, of ``kind`` :data:`KIND`).
ALL_RECORDS = sorted(ROOT.glob("results/*/runs/*.json"))
TIKHONOV_RECORDS = [p for p in ALL_RECORDS if json.loads(p.read_text()).get("kind") == KIND]
RECORDS = [p for p in ALL_RECORDS if p not in TIKHONOV_RECORDS]


def test_every_committed_run_keeps_its_key_and_is_read_back() -> None:
    assert RECORDS, "no committed run records found"
    targets: dict[str, RunConfig] = {}
    for path in RECORDS:
        record = json.loads(path.read_text())
        run = RunConfig.from_dict(record["config"])
        assert run.key == record["key"] == path.stem, f"{path.relative_to(ROOT)}: the key is now {run.key}"
        assert RunStore(path.parent).get(run) == record, f"{path.relative_to(ROOT)} is not read back for its run"
        targets.setdefault(json.dumps([run.target, run.target_args], sort_keys=True), run)
    for run in targets.values():
        tree = run.tree()
        assert isinstance(tree, Tree) and tree.input_dim == run.model.d, (run.target, run.target_args)


def test_every_committed_tikhonov_run_keeps_its_key_and_is_reused(monkeypatch) -> None:
    def no_training(config):
        pytest.fail(f"Tikhonov run {config} was trained instead of read from the committed store")

    monkeypatch.setattr(tikhonov_runs, "train_run", no_training)
    assert TIKHONOV_RECORDS, "no committed Tikhonov records found"
    for path in TIKHONOV_RECORDS:
        record = json.loads(path.read_text())
        job = TikhonovRun(record["config"])
        assert job.key == record["key"] == path.stem, f"{path.relative_to(ROOT)}: the key is now {job.key}"
        assert run_jobs([job], RunStore(path.parent), workers=0) == [record]
