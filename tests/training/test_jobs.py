"""The job executor (:func:`run_jobs`) on jobs of its interface alone: costliest first, each key once, stored
records reused, an inconsistent record refused and not stored."""

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
