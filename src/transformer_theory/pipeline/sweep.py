"""Parameter sweeps: one executed notebook and one results JSON per grid point, resumable.

Points whose results already exist (status ``ok``, same configuration hash) are skipped, so a sweep
that was interrupted resumes where it stopped; a corrupt results file is treated as missing.

The points run through an executor, :func:`run_in_processes` (a process pool), kept apart from the sweep's
bookkeeping so that it can be replaced. Its contract, which ``tests/pipeline/test_sweep_signals.py`` checks:

* it yields ``(label, results dict or the exception)`` as points finish;
* its workers die with the sweep's process even when that is SIGKILLed, and so do their kernels
  (the runner's kernels die with whichever process runs the notebook);
* when the sweep stops it (Ctrl-C, SIGTERM: the generator is closed or an exception passes through it),
  queued points are cancelled and running workers are killed *before it returns*, so that no point
  writes its record any more.

On such a stop, :func:`run_sweep` marks the records of the points that were running ``interrupted`` and
raises :class:`SweepInterrupted`, carrying the report (the command line exits with ``128 + signal``).
"""

from __future__ import annotations

import contextlib
import itertools
import multiprocessing
import os
import signal
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from tqdm.auto import tqdm

from transformer_theory.checks import positive_int
from transformer_theory.pipeline.locks import results_lock
from transformer_theory.pipeline.parameters import point_name
from transformer_theory.storage.paths import build_dir, check_writable_folder
from transformer_theory.pipeline.processes import worker_initializer
from transformer_theory.storage.results import read_results
from transformer_theory.pipeline.runner import RunSpec, execute, mark_interrupted, prepare_run


def grid_points(grid: dict[str, list[Any]]) -> list[dict[str, Any]]:
    """The Cartesian product of the grid, in the order the names were given."""
    names = list(grid)
    return [dict(zip(names, combo)) for combo in itertools.product(*(grid[n] for n in names))]


@dataclass
class SweepReport:
    done: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)
    interrupted: list[str] = field(default_factory=list)  # were running when the sweep was stopped
    cancelled: list[str] = field(default_factory=list)  # had not started


class SweepInterrupted(KeyboardInterrupt):
    """The sweep was stopped by ``signum``; ``report`` says what was done, interrupted and cancelled."""

    def __init__(self, report: SweepReport, signum: int) -> None:
        super().__init__(f"sweep stopped by signal {signum}")
        self.report = report
        self.signum = signum


def _is_complete(spec: RunSpec) -> bool:
    data = read_results(spec.results)
    return bool(data) and data.get("status") == "ok" and data.get("config_hash") == spec.config_hash and spec.output.is_file()


def run_in_processes(specs: dict[str, RunSpec], jobs: int) -> Iterator[tuple[str, dict[str, Any] | BaseException]]:
    """Execute every spec in ``jobs`` worker processes; yield ``(label, result or exception)`` as they finish.

    The executor of :func:`run_sweep`; see the module docstring for its contract. Workers are forked (they
    inherit the imported modules; started from this thread), die with this process (``PR_SET_PDEATHSIG``),
    ignore Ctrl-C, and are killed when the generator stops early.
    """
    before = set(multiprocessing.active_children())
    pool = ProcessPoolExecutor(
        max_workers=jobs, mp_context=multiprocessing.get_context("fork"),
        initializer=worker_initializer, initargs=(os.getpid(),),
    )
    finished = False
    try:
        futures = {pool.submit(execute, spec): label for label, spec in specs.items()}
        for future in as_completed(futures):
            exc = future.exception()
            yield futures[future], exc if exc is not None else future.result()
        finished = True
    finally:
        if not finished:
            pool.shutdown(wait=False, cancel_futures=True)
            workers = set(multiprocessing.active_children()) - before
            for worker in workers:
                worker.kill()
            for worker in workers:
                worker.join()
        pool.shutdown(wait=True)


def _marked_interrupted(spec: RunSpec) -> bool:
    """Mark the point's partial record ``interrupted`` if it was running; ``False`` if it never started."""
    try:
        with results_lock(spec.results, f"point {spec.output.stem}"):
            return mark_interrupted(spec)
    except ValueError:  # another sweep of the same folder holds it: its record is not ours to mark
        return False


def run_sweep(
    notebook: str,
    grid: dict[str, list[Any]],
    profile: str = "book",
    jobs: int = 1,
    out_dir: str | Path | None = None,
    progress: bool = True,
) -> SweepReport:
    """Run ``notebook`` at every point of ``grid`` (``jobs`` processes in parallel).

    Every point is validated before any runs. Outputs go to
    ``build/sweeps/<profile>/<notebook>/<point>.ipynb`` (and ``.json``) unless ``out_dir`` is given.
    A ``KeyboardInterrupt`` (:class:`~.processes.Interrupted` for SIGTERM) becomes :class:`SweepInterrupted`.
    """
    positive_int("--jobs", jobs)
    if not grid:
        raise ValueError("a sweep needs at least one '-p NAME v1,v2,...'")
    first = prepare_run(notebook, profile)
    folder = check_writable_folder(Path(out_dir) if out_dir else build_dir() / "sweeps" / profile / first.key, "--output")
    specs = {}
    for point in grid_points(grid):
        label = point_name(point)
        specs[label] = prepare_run(notebook, profile, point, output=folder / f"{label}.ipynb")
    report = SweepReport()
    todo: dict[str, RunSpec] = {}
    for label, spec in specs.items():
        if _is_complete(spec):
            report.skipped.append(label)
        else:
            todo[label] = spec
    try:
        with tqdm(total=len(todo), desc=f"sweep {first.name}", disable=not progress or not todo) as bar, \
                contextlib.closing(run_in_processes(todo, jobs)) as outcomes:
            for label, outcome in outcomes:
                if isinstance(outcome, BaseException):  # the worker itself broke (not the notebook)
                    report.failed[label] = f"{type(outcome).__name__}: {outcome}"
                elif outcome["status"] == "ok":
                    report.done.append(label)
                else:
                    report.failed[label] = (outcome.get("error") or "failed").splitlines()[-1]
                bar.update(1)
    except KeyboardInterrupt as exc:
        for label, spec in todo.items():
            if label in report.done or label in report.failed:
                continue
            if _is_complete(spec):  # finished just before the stop
                report.done.append(label)
            elif _marked_interrupted(spec):
                report.interrupted.append(label)
            else:
                report.cancelled.append(label)
        raise SweepInterrupted(report, getattr(exc, "signum", signal.SIGINT)) from None
    return report

