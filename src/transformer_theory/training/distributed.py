"""Sweeps of runs: the missing runs' tasks are jobs (:class:`TrainingJob`) of the project's one executor,
:func:`~transformer_theory.training.jobs.run_jobs`, trained in this process or on Dask workers, their records
and weights kept in the run store (:class:`TaskStore`).

The default is a ``LocalCluster`` with one single-threaded worker process per core, at most one per task
(two 1-thread processes train about 1.7x faster than one 2-thread process on this project's 2-core machines);
``scheduler`` submits the same tasks to an existing cluster instead (``dask scheduler`` plus
``dask worker`` processes, or dask-jobqueue on SLURM). Workers write checkpoints and results into
the store folder (put it on a shared filesystem for a multi-machine cluster); the results also come
back to this process, which stores them too. Progress of the workers' tasks arrives as Dask events
and drives one tqdm bar here (steps of all tasks, best validation NMSE, ETA). A worker process need not have
imported whoever registered the runs' targets: each job carries the target functions its runs name (by
reference, so unpickling imports their modules) and registers them before it trains.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import os
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any

import torch
from tqdm import tqdm

from transformer_theory.checks import non_negative_int
from transformer_theory.training.config import RunConfig
from transformer_theory.training.jobs import current_worker, run_jobs
from transformer_theory.training.record import RunRecord
from transformer_theory.training.registry import TargetFunction, register_targets, target_function
from transformer_theory.training.store import RunStore
from transformer_theory.training.tasks import Task, TrainOptions, plan_tasks
from transformer_theory.training.trainer import train_task

#: Dask event topic of the workers' progress messages.
PROGRESS_TOPIC = "transformer_theory.training"


#: glibc ``mallopt`` parameters, and the thresholds restored on workers (glibc's dynamic ceilings).
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
_MMAP_THRESHOLD, _TRIM_THRESHOLD = 32 * 2**20, 64 * 2**20


def reuse_freed_memory() -> bool:
    """Undo the small malloc trim threshold that Dask's nanny puts in its workers' environment.

    ``distributed.nanny.pre-spawn-environ`` sets ``MALLOC_TRIM_THRESHOLD_=65536``; glibc then stops raising
    its mmap threshold, so every tensor above 128 kB is mapped and unmapped afresh at each use. That made
    a training step 1.7x slower on a worker than in a plain process (6.4 s against 10.8 s for 100 steps of
    3 batched models, measured on this project's 2-core machines). Raising the two thresholds lets the
    allocator keep and reuse freed blocks again. Returns whether it applied (only where the variable is
    set and the C library is glibc)."""
    if "MALLOC_TRIM_THRESHOLD_" not in os.environ:
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    return bool(mallopt(_M_MMAP_THRESHOLD, _MMAP_THRESHOLD)) and bool(mallopt(_M_TRIM_THRESHOLD, _TRIM_THRESHOLD))


@dataclass(frozen=True)
class TrainingJob:
    """A task to train, with its checkpoints and records in the store at ``root`` (a
    :class:`~transformer_theory.training.jobs.Job`; its result is each run's record and, from a Dask worker,
    its weights if kept)."""

    task: Task
    root: str
    options: TrainOptions
    #: ``(name, function)`` of each target the task's runs name, registered on the worker before it trains.
    targets: tuple[tuple[str, TargetFunction], ...] = ()

    @classmethod
    def of(cls, task: Task, root: str, options: TrainOptions) -> TrainingJob:
        """The job of ``task``, with the functions registered here for the targets its runs name."""
        names = sorted({run.target for run in task.runs})
        return cls(task, root, options, tuple((name, target_function(name)) for name in names))

    @property
    def key(self) -> str:
        return f"train-{self.task.key(self.options)}"

    @property
    def cost(self) -> int:
        return self.task.cost

    def run(self) -> list[tuple[dict[str, Any], dict | None]]:
        """Train the task; ``(record, weights)`` of each run. In this process: as the options say, the records
        stored (weights ``None``). On a Dask worker: with the task's targets registered, in one thread unless
        the options say otherwise, reporting progress as Dask events; the weights, if kept, come back too, for
        the submitting process to store."""
        store = RunStore(self.root)
        worker = current_worker()
        if worker is None:
            return [(record, None) for record in train_task(self.task, store, self.options)]
        register_targets(dict(self.targets))
        reuse_freed_memory()
        torch.set_num_threads(self.options.threads or 1)
        options = replace(self.options, threads=self.options.threads or 1, progress=False)
        records = train_task(self.task, store, options, report=lambda msg: worker.log_event(PROGRESS_TOPIC, msg))
        return [(r, store.weights(run) if options.save_weights else None) for run, r in zip(self.task.runs, records)]


class TaskStore:
    """The results of training jobs (:class:`TrainingJob`) in a run store, for
    :func:`~transformer_theory.training.jobs.run_jobs`: a job's result is its runs' records, each with its weights
    where the run's key is in ``with_weights``."""

    def __init__(self, runs: RunStore, with_weights: Collection[str] = ()) -> None:
        self.runs = runs
        self.with_weights = with_weights

    @property
    def root(self) -> Path:
        return self.runs.root

    def result(self, job: TrainingJob) -> list[dict[str, Any]] | None:
        """The stored records of the job's runs, or ``None`` if one is missing (see :meth:`RunStore.get`)."""
        records = [self.runs.get(run, weights=run.key in self.with_weights) for run in job.task.runs]
        return None if None in records else records

    def keep(self, job: TrainingJob, result: list[tuple[dict[str, Any], dict | None]]) -> None:
        """Store each run's record and weights (``ValueError`` if a record is inconsistent with its run), unless the
        store already holds that record (and its weights, if any): a task trained in this process, or on a worker
        that shares the store, wrote it as it finished."""
        for run, (record, weights) in zip(job.task.runs, result):
            if self.runs.get(run, weights=weights is not None) != record:
                self.runs.put(run, record, weights)


@contextlib.contextmanager
def progress_bar(client: Any, jobs: Sequence[TrainingJob],
                 enabled: bool = True) -> Iterator[Callable[[TrainingJob], None]]:
    """One tqdm bar over the tasks of ``jobs`` on the Dask ``client`` (a
    :data:`~transformer_theory.training.jobs.Progress`): the steps of all tasks, from the workers' progress events
    and each finished job, the best validation NMSE and the ETA."""
    done: dict[str, int] = {}
    best: dict[str, float] = {}
    bar = tqdm(total=sum(job.task.runs[0].steps for job in jobs), desc=f"{len(jobs)} tasks", unit="step",
               disable=not enabled, dynamic_ncols=True)

    def progress(event: tuple[float, dict[str, Any]]) -> None:
        msg = event[1]
        done[msg["task"]] = msg["step"]
        finite = [v for v in msg["nmse"] if v is not None]
        if finite:
            best[msg["task"]] = min(finite)
        bar.update(sum(done.values()) - bar.n)
        if best:
            bar.set_postfix_str(f"best nmse {min(best.values()):.2e}", refresh=False)

    def finished(job: TrainingJob) -> None:
        done[job.task.key(job.options)] = job.task.runs[0].steps
        bar.update(sum(done.values()) - bar.n)

    try:
        client.subscribe_topic(PROGRESS_TOPIC, progress)
        yield finished
    finally:
        bar.close()
        client.unsubscribe_topic(PROGRESS_TOPIC)


def train_runs(runs: Sequence[RunConfig], store: RunStore, *, scheduler: str | None = None,
               n_workers: int | None = None, models_per_task: int | None = None,
               options: TrainOptions = TrainOptions(), with_weights: Collection[str] = ()) -> list[RunRecord]:
    """The records of ``runs`` (in order, each a :class:`~transformer_theory.training.record.RunRecord`): reused from
    ``store`` where valid, else trained and stored. A run whose key is in ``with_weights`` is trained again unless its
    weights are kept too (and readable).

    ``scheduler``: address of a running Dask scheduler. Otherwise ``n_workers`` single-threaded
    workers of a local cluster (default: one per core, at most one per task); ``n_workers=0`` trains in this
    process, one task after another (the costliest first). ``models_per_task`` bounds the models batched into
    one task (see :func:`~transformer_theory.training.tasks.plan_tasks`); the plan does not depend on the
    executor.
    """
    if n_workers is not None:
        non_negative_int("n_workers", n_workers)
    records = {run.key: store.get(run, weights=run.key in with_weights) for run in runs}
    missing = [run for run in runs if records[run.key] is None]
    jobs = [TrainingJob.of(task, str(store.root), options) for task in plan_tasks(missing, models_per_task)]
    trained = run_jobs(jobs, TaskStore(store, with_weights), scheduler=scheduler, workers=n_workers,
                       progress=partial(progress_bar, enabled=options.progress))
    for job, task_records in zip(jobs, trained):
        records.update(zip(job.task.keys, task_records))
    return [RunRecord.from_dict(records[run.key]) for run in runs]
