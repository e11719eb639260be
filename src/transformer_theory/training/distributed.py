"""Sweeps of runs: the missing runs' tasks trained in this process or as ``dask.distributed`` tasks.

The default is a ``LocalCluster`` with one single-threaded worker process per core (two 1-thread
processes train about 1.7x faster than one 2-thread process on this project's 2-core machines);
``scheduler`` submits the same tasks to an existing cluster instead (``dask scheduler`` plus
``dask worker`` processes, or dask-jobqueue on SLURM). Workers write checkpoints and results into
the store folder (put it on a shared filesystem for a multi-machine cluster); the results also come
back to this process, which stores them too. Progress of the workers' tasks arrives as Dask events
and drives one tqdm bar here (steps of all tasks, best validation NMSE, ETA).
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import logging
import os
import shutil
from collections.abc import Collection, Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import torch
from tqdm import tqdm

from transformer_theory.checks import non_negative_int
from transformer_theory.pipeline.paths import build_dir
from transformer_theory.training.config import RunConfig
from transformer_theory.training.store import RunStore
from transformer_theory.training.tasks import Task, TrainOptions, plan_tasks
from transformer_theory.training.trainer import train_task

#: Dask event topic of the workers' progress messages.
PROGRESS_TOPIC = "transformer_theory.training"
#: Seconds to wait for an existing scheduler (``scheduler=``, ``--scheduler``) to answer before giving up.
CONNECT_TIMEOUT_S = 5


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


def _worker_task(task: Task, root: str, options: TrainOptions) -> list[tuple[dict[str, Any], dict | None]]:
    """Runs on a Dask worker: train ``task`` with its store at ``root``; return records and weights."""
    from distributed import get_worker

    reuse_freed_memory()
    torch.set_num_threads(options.threads or 1)
    worker = get_worker()
    store = RunStore(root)
    options = replace(options, threads=options.threads or 1, progress=False)
    records = train_task(task, store, options, report=lambda msg: worker.log_event(PROGRESS_TOPIC, msg))
    return [(r, store.weights(run) if options.save_weights else None) for run, r in zip(task.runs, records)]


def scratch_folder() -> Path:
    """The local cluster's scratch space of this process, ``build/dask/<pid>/`` (Dask's default is
    ``$TMPDIR/dask-scratch-space``); the folders of processes that no longer run are removed first."""
    parent = build_dir() / "dask"
    for folder in parent.glob("*"):
        if folder.name.isdigit() and not _running(int(folder.name)):
            shutil.rmtree(folder, ignore_errors=True)
    return parent / str(os.getpid())


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


@contextlib.contextmanager
def dask_client(scheduler: str | None = None, n_workers: int | None = None) -> Iterator[Any]:
    """A ``distributed.Client`` of the cluster at ``scheduler``, or of a new ``LocalCluster`` with ``n_workers``
    single-threaded worker processes (default: one per core), its scratch space in :func:`scratch_folder`;
    closed (the local cluster shut down, its scratch space removed) on exit.
    ``ValueError`` naming the address if the scheduler does not answer within :data:`CONNECT_TIMEOUT_S`.

    The project's one executor of independent training jobs: the engine's tasks and the Tikhonov runs.
    """
    import dask
    from distributed import Client, LocalCluster

    if n_workers is not None:
        non_negative_int("n_workers", n_workers)
    if scheduler is not None:
        try:
            client = Client(scheduler, timeout=CONNECT_TIMEOUT_S)
        except (OSError, ValueError) as exc:  # unreachable (after the timeout), or a malformed address
            raise ValueError(f"cannot connect to the Dask scheduler at {scheduler}: {exc}") from None
        try:
            yield client
        finally:
            client.close()
        return
    scratch, cluster, client = scratch_folder(), None, None
    try:  # an interrupt while the cluster starts removes its scratch space too
        # forkserver: workers that have imported torch exit at once on close (spawned ones linger ~4 s until killed)
        with dask.config.set({"distributed.worker.multiprocessing-method": "forkserver",
                              "temporary-directory": str(scratch)}):
            cluster = LocalCluster(n_workers=n_workers or os.cpu_count() or 1, threads_per_worker=1, processes=True,
                                   dashboard_address=None, silence_logs=logging.WARNING, local_directory=str(scratch))
        client = Client(cluster)
        yield client
    finally:
        if client is not None:
            client.close()
        if cluster is not None:
            cluster.close()
        shutil.rmtree(scratch, ignore_errors=True)


def _run_on_dask(client: Any, tasks: list[Task], store: RunStore, options: TrainOptions) -> None:
    from distributed import as_completed

    total = sum(t.runs[0].steps for t in tasks)
    done: dict[str, int] = {}
    best: dict[str, float] = {}
    bar = tqdm(total=total, desc=f"{len(tasks)} tasks", unit="step", disable=not options.progress, dynamic_ncols=True)

    def progress(event: tuple[float, dict[str, Any]]) -> None:
        msg = event[1]
        done[msg["task"]] = msg["step"]
        finite = [v for v in msg["nmse"] if v is not None]
        if finite:
            best[msg["task"]] = min(finite)
        bar.update(sum(done.values()) - bar.n)
        if best:
            bar.set_postfix_str(f"best nmse {min(best.values()):.2e}", refresh=False)

    try:
        client.subscribe_topic(PROGRESS_TOPIC, progress)
        futures = {client.submit(_worker_task, t, str(store.root), options, pure=False, priority=t.cost,
                                 key=f"train-{t.key(options)}"): t for t in tasks}
        for future in as_completed(futures):
            task = futures[future]
            for run, (record, weights) in zip(task.runs, future.result()):
                store.put(run, record, weights)
            done[task.key(options)] = task.runs[0].steps
            bar.update(sum(done.values()) - bar.n)
    finally:
        bar.close()
        client.unsubscribe_topic(PROGRESS_TOPIC)


def train_runs(runs: Sequence[RunConfig], store: RunStore, *, scheduler: str | None = None,
               n_workers: int | None = None, models_per_task: int | None = None,
               options: TrainOptions = TrainOptions(), with_weights: Collection[str] = ()) -> list[dict[str, Any]]:
    """The records of ``runs`` (in order): reused from ``store`` where valid, else trained and stored. A run
    whose key is in ``with_weights`` is trained again unless its weights are kept too (and readable).

    ``scheduler``: address of a running Dask scheduler. Otherwise ``n_workers`` single-threaded
    workers of a local cluster (default: one per core); ``n_workers=0`` trains in this process, one
    task after another. ``models_per_task`` bounds the models batched into one task (see
    :func:`~transformer_theory.training.tasks.plan_tasks`); the plan does not depend on the executor.
    """
    if n_workers is not None:
        non_negative_int("n_workers", n_workers)
    missing = [run for run in runs if store.get(run, weights=run.key in with_weights) is None]
    tasks = plan_tasks(missing, models_per_task)
    if tasks and scheduler is None and n_workers == 0:
        for task in tasks:
            train_task(task, store, options)
    elif tasks:
        with dask_client(scheduler, n_workers) as client:
            _run_on_dask(client, tasks, store, options)
    records = [store.get(run, weights=run.key in with_weights) for run in runs]
    if any(r is None for r in records):
        raise RuntimeError("some runs did not produce a valid record in the store")
    return records
