"""A finished run's typed record (:class:`~transformer_theory.training.record.RunRecord`): it gives back exactly the
JSON object the run store keeps, it names the run's steps, and it cannot be changed in place."""

from __future__ import annotations

import dataclasses
import json

import pytest

from conftest import ROOT, run_record
from transformer_theory import training
from transformer_theory.training import History, RunRecord
from transformer_theory.training import record as record_module

#: The first committed engine record (chapter 05's Tikhonov records, of another kind, left out).
FIRST = next(p for p in sorted(ROOT.glob("results/book/runs/*.json")) if "kind" not in json.loads(p.read_text()))


def test_a_committed_record_round_trips_exactly() -> None:
    stored = json.loads(FIRST.read_text())
    record = RunRecord.from_dict(stored)
    assert record.to_dict() == stored
    assert json.dumps(record.to_dict(), sort_keys=True) == json.dumps(stored, sort_keys=True)  # lists, not tuples
    assert record.key == FIRST.stem and record.seed == stored["seed"] and record.best_nmse == stored["best_nmse"]
    assert isinstance(record.history, History) and list(record.history.step) == stored["history"]["step"]
    assert record.provenance["git"] == stored["git"] and "history" not in record.provenance
    assert RunRecord.from_dict(record.to_dict()) == record


def test_steps_is_the_schedules_length() -> None:
    stored = json.loads(FIRST.read_text())
    assert RunRecord.from_dict(stored).steps == stored["config"]["steps"]
    assert run_record(0.1, config={"steps": 400}).steps == 400
    assert run_record(history={"step": [50, 100], "val_nmse": [1.0, 0.5]}).steps == 100


def test_a_record_is_frozen() -> None:
    record = RunRecord.from_dict(json.loads(FIRST.read_text()))
    with pytest.raises(dataclasses.FrozenInstanceError):
        record.best_nmse = 0.0  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        record.history.val_nmse = ()  # type: ignore[misc]
    changed = dataclasses.replace(record, best_nmse=0.0)
    assert changed.best_nmse == 0.0 and record.best_nmse != 0.0 and changed.history is record.history


def test_the_training_package_exports_it() -> None:
    assert training.RunRecord is record_module.RunRecord and training.History is record_module.History
    assert {"History", "RunRecord"} <= set(training.__all__) and "RunRecord" in dir(training)


def test_a_context_records_an_analysis_values_at_once(tmp_path) -> None:
    from transformer_theory.training.context import Context

    context = Context.for_profile("smoke", tmp_path / "runs")
    context.record_all({"ratio": 1005.4, "table": [{"D": 2}]})
    assert context.results.values == {"ratio": 1005.4, "table": [{"D": 2}]}
    with pytest.raises(ValueError, match="name must be a non-empty string"):
        context.record_all({"": 1})
