"""The job executor (:func:`run_jobs`) on jobs of its interface alone: costliest first, each key once, stored
records reused, an inconsistent record refused and not stored; a job of several records in a store of its kind."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from transformer_theory.training.jobs import run_jobs
from transformer_theory.training.store import RecordStore


@dataclass(frozen=True)
class Square:
    """A job squaring ``x``; ``log`` collects the keys of the jobs that ran."""

    x: int
    log: list
    broken: bool = False

    @property
    def key(self) -> str:
        return f"square-{self.x}"

    @property
    def cost(self) -> int:
        return self.x

    def run(self) -> dict[str, Any]:
        self.log.append(self.key)
        return {"x": self.x, "square": -1 if self.broken else self.x ** 2}

    def valid(self, record: dict[str, Any]) -> bool:
        return record.get("x") == self.x and record.get("square") == self.x ** 2


def test_missing_jobs_run_costliest_first_once_each_then_are_reused(tmp_path: Path) -> None:
    log: list[str] = []
    jobs = [Square(2, log), Square(5, log), Square(3, log), Square(5, log)]
    store = RecordStore(tmp_path)
    assert [r["square"] for r in run_jobs(jobs, store, workers=0)] == [4, 25, 9, 25]
    assert log == ["square-5", "square-3", "square-2"]
    assert [r["square"] for r in run_jobs(jobs + [Square(4, log)], store, workers=0)] == [4, 25, 9, 25, 16]
    assert log == ["square-5", "square-3", "square-2", "square-4"]


def test_an_inconsistent_record_is_refused_and_not_stored(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError, match="square-3: the run returned an inconsistent record"):
        run_jobs([Square(3, [], broken=True)], RecordStore(tmp_path), workers=0)
    assert not list(tmp_path.glob("*.json"))
    with pytest.raises(ValueError, match="workers"):
        run_jobs([Square(3, [])], RecordStore(tmp_path), workers=-1)


@dataclass(frozen=True)
class Powers:
    """A job giving the records of ``x`` squared and cubed (as a training task gives one per run)."""

    x: int
    log: list

    @property
    def key(self) -> str:
        return f"powers-{self.x}"

    @property
    def cost(self) -> int:
        return self.x

    def run(self) -> list[dict[str, Any]]:
        self.log.append(self.key)
        return [{"x": self.x, "power": p, "value": self.x ** p} for p in (2, 3)]


class PowerStore:
    """Keeps each record of a :class:`Powers` job under its own key."""

    def __init__(self, root: Path) -> None:
        self.records, self.root = RecordStore(root), root

    def result(self, job: Powers) -> list[dict[str, Any]] | None:
        records = [self.records.read(f"{job.x}^{p}", lambda r: r["value"] == job.x ** p) for p in (2, 3)]
        return None if None in records else records

    def keep(self, job: Powers, result: list[dict[str, Any]]) -> None:
        for record in result:
            self.records.write(f"{job.x}^{record['power']}", record)


def test_a_job_may_give_several_records(tmp_path: Path) -> None:
    log: list[str] = []
    store = PowerStore(tmp_path)
    results = run_jobs([Powers(2, log), Powers(3, log)], store, workers=0)
    assert [[r["value"] for r in records] for records in results] == [[4, 8], [9, 27]]
    (tmp_path / "3^3.json").unlink()  # one record of a job missing: the job runs again
    assert run_jobs([Powers(2, log), Powers(3, log)], store, workers=0) == results
    assert log == ["powers-3", "powers-2", "powers-3"]
