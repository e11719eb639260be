"""Shared fixtures: the repository root, a throw-away project root for CLI tests, hypothesis profiles.

Hypothesis profiles (``HYPOTHESIS_PROFILE=thorough pytest tests`` for a longer search):

* ``default``: no deadline (the constructions' run time varies with the drawn sizes), no too-slow check,
  derandomised, so CI runs the same examples every time;
* ``thorough``: randomised, so each run searches new examples (repeat it to search longer).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import nbformat
import pytest
from hypothesis import HealthCheck, settings

from transformer_theory.training.record import History, RunRecord

settings.register_profile("default", deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True)
settings.register_profile("thorough", deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))

ROOT = Path(__file__).resolve().parents[1]


#: Chapter 10's experiment at test sizes: one D, two seeds, a few steps, one head-count run.
TINY_INTRINSIC = {"steps": 20, "warmup": 5, "eval_every": 10, "batch_size": 32, "val_size": 64, "seeds": [0, 1],
                  "ffn_width_per_D": 4, "embed_dim_per_D": 8, "encoder_width": 8, "head_dim": 4, "seq_len": 8,
                  "D_values": [2], "sl_seq_lens": [8], "ls_D_values": [2], "ls_steps": 30, "ls_seeds": [0],
                  "ls_check_D": [2], "ls_check_seeds": [0], "hc_heads": [1], "hc_seq_lens": [8], "hc_head_dim": 4,
                  "hc_ffn_width": 8, "hc_steps": 20, "hc_train_size": 64, "hc_seeds": [0], "rc_cells": [],
                  "rc_candidate_cells": []}


def run_record(best_nmse: float | None = None, *, history: dict[str, list] | None = None,
               config: dict[str, Any] | None = None, key: str = "k", seed: int = 0, best_step: int | None = None,
               final_nmse: float | None = None, task: str | dict[str, Any] | None = None, wall_time_s: float = 1.0,
               **provenance: Any) -> RunRecord:
    """A run's :class:`~transformer_theory.training.record.RunRecord` for a test, with what it does not give filled in:
    ``history`` (a dict of lists; a missing column is ``None`` at every step; none: no step), ``config``
    (``{"steps": <the last step of the history, or 100>}``), ``final_nmse`` (the last validation NMSE of the history,
    else ``best_nmse``), ``task`` (a task key, or the task's dict: ``key``, ``runs``, ``models``,
    ``resumed_at_steps``; none: a task of this run alone) and the ``provenance`` (the other fields of a stored record,
    ``git`` among them)."""
    columns = dict(history or {})
    n = len(next(iter(columns.values()), []))
    columns = {name: tuple(columns.get(name, [None] * n)) for name in ("step", "val_nmse", "train_loss")}
    if config is None:
        config = {"steps": columns["step"][-1] if columns["step"] else 100}
    if final_nmse is None:
        final_nmse = columns["val_nmse"][-1] if columns["val_nmse"] else best_nmse
    task_key = task if isinstance(task, str) else key
    if not isinstance(task, dict):
        task = {"key": task_key, "runs": [key], "models": 1, "resumed_at_steps": []}
    return RunRecord(key=key, config=config, seed=seed, best_nmse=best_nmse, best_step=best_step,
                     final_nmse=final_nmse, history=History(**columns), wall_time_s=wall_time_s, task=task,
                     provenance=provenance)


def make_notebook(path: Path, parameters: str, body: str) -> Path:
    """Write a small notebook with one ``parameters`` cell followed by ``body``."""
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    cell = nbformat.v4.new_code_cell(textwrap.dedent(parameters).strip())
    cell.metadata["tags"] = ["parameters"]
    nb.cells = [nbformat.v4.new_markdown_cell("# tiny"), cell, nbformat.v4.new_code_cell(textwrap.dedent(body).strip())]
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)
    return path


@pytest.fixture
def one_torch_thread():
    """One torch thread for the test (tiny tensors are faster so, and a shared 2-core machine stays usable);
    the previous count is restored. Use with ``pytestmark = pytest.mark.usefixtures("one_torch_thread")``."""
    import torch

    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(previous)


@pytest.fixture
def tiny_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project root with one notebook ``01_tiny`` and the three profile files."""
    make_notebook(
        tmp_path / "notebooks" / "01_tiny.ipynb",
        """
        x = 1
        scale = 0.5
        label = "a"
        gate = ""
        """,
        """
        import os, time
        from transformer_theory import kernel_context
        record = kernel_context().record
        while x > 1 and gate and os.path.exists(gate):
            time.sleep(0.1)
        if label == "fail":
            raise RuntimeError("asked to fail")
        record("y", x * scale)
        print(x * scale)
        """,
    )
    (tmp_path / "params").mkdir()
    for profile in ("smoke", "book", "paper"):
        (tmp_path / "params" / f"{profile}.yaml").write_text("01_tiny:\n  scale: 2.0\n")
    monkeypatch.setenv("TRANSFORMER_THEORY_ROOT", str(tmp_path))
    return tmp_path


def cli(*args: str, cwd: Path | None = None, **kwargs) -> subprocess.CompletedProcess:
    """Run ``python -m transformer_theory ARGS`` and capture its output."""
    return subprocess.run(
        [sys.executable, "-m", "transformer_theory", *args], capture_output=True, text=True, cwd=cwd, timeout=300, **kwargs
    )


def store_weights(store, run, weights, nmse: float = 0.5) -> None:
    """Store ``weights`` as the trained model of ``run`` (a ``RunConfig``) in ``store`` (a ``RunStore``), with a
    record of one evaluation (NMSE ``nmse``)."""
    from transformer_theory.training import ENGINE_VERSION

    record = {"key": run.key, "engine_version": ENGINE_VERSION, "config": run.to_dict(), "seed": run.seed,
              "history": {"step": [run.steps], "val_nmse": [nmse], "train_loss": [nmse]}, "best_nmse": nmse,
              "best_step": run.steps, "final_nmse": nmse, "wall_time_s": 0.0, "task": {"key": "test", "runs": [run.key]}}
    store.put(run, record, weights)
