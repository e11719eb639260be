"""Independent jobs and their one executor, :func:`run_jobs`: the engine's training tasks and jobs of one record.

A :class:`Job` names itself (``key``, also its Dask key), says what it costs (``cost``: the costliest start
first) and runs (``run()``, in this process or on a Dask worker, so it must pickle). Its result is kept in a
:class:`JobStore`, which also says whether it already holds a job's whole, valid result (then the job is not
run). A :class:`StoredJob` gives one record and checks one (``valid``), kept by a
:class:`~transformer_theory.training.store.RecordStore` under the job's key (chapter 05's runs, :mod:`transformer_theory.chapters.tikhonov_runs`); a training
task gives a record per run, kept with the runs' weights in the run store
(:class:`~transformer_theory.training.distributed.TrainingJob`,
:func:`~transformer_theory.training.distributed.train_runs`).
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, Protocol

from transformer_theory.checks import non_negative_int
from transformer_theory.storage.paths import build_dir

#: Seconds to wait for an existing scheduler (``scheduler=``, ``--scheduler``) to answer before giving up.
CONNECT_TIMEOUT_S = 5


class Job(Protocol):
    """An independent piece of work: ``key`` names it, ``cost`` orders the start (costliest first)."""

    @property
    def key(self) -> str: ...

    @property
    def cost(self) -> float: ...

    def run(self) -> Any: ...


class StoredJob(Job, Protocol):
    """A job whose result is one record, kept in a store under the job's key."""

    def run(self) -> dict[str, Any]: ...

    def valid(self, record: dict[str, Any]) -> bool:
        """Whether ``record`` is an intact result of exactly this job (else it is run again)."""
        ...


class JobStore(Protocol):
    """Where :func:`run_jobs` finds and keeps the results of its jobs (in the folder ``root``)."""

    @property
    def root(self) -> Path: ...

    def result(self, job: Any) -> Any | None:
        """The result of ``job`` as stored, if whole and valid; else ``None`` (the job is run)."""
        ...

    def keep(self, job: Any, result: Any) -> None:
        """Check the ``result`` that ``job`` returned and store it (an error if it is inconsistent)."""
        ...


#: Shows the progress of jobs on a Dask client: called with the client and the jobs submitted to it, it gives
#: a context (entered before the first result, left after the last) whose value is called as each job finishes.
Progress = Callable[[Any, Sequence[Job]], AbstractContextManager[Callable[[Job], None]]]


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

    The project's one executor of independent training jobs: the engine's tasks and the jobs of one record.
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
    _start_forkserver_deaf_to_ctrl_c()
    try:
        # forkserver: workers that have imported torch exit at once on close (spawned ones linger ~4 s until killed)
        with dask.config.set({"distributed.worker.multiprocessing-method": "forkserver",
                              "temporary-directory": str(scratch)}), _first_interrupt_deferred():
            cluster = LocalCluster(n_workers=n_workers or os.cpu_count() or 1, threads_per_worker=1, processes=True,
                                   dashboard_address=None, silence_logs=logging.WARNING, local_directory=str(scratch))
        client = Client(cluster)
        yield client
    finally:
        try:
            if client is not None:
                client.close()
            if cluster is not None:
                cluster.close()
        finally:
            _remove(scratch)


def _remove(folder: Path, timeout_s: float = 10.0) -> None:
    """Remove ``folder``, trying again while it reappears or stays for up to ``timeout_s``: a worker that is still
    exiting (its close timed out on a busy machine) can write or delete in it while it is being removed."""
    deadline = time.monotonic() + timeout_s
    while True:
        shutil.rmtree(folder, ignore_errors=True)
        if not folder.exists() or time.monotonic() > deadline:
            return
        time.sleep(0.1)


def _start_forkserver_deaf_to_ctrl_c() -> None:
    """Start multiprocessing's fork server (once a process) ignoring SIGINT, which the Dask workers it forks inherit:
    a Ctrl-C at a terminal reaches the whole foreground process group, and a worker that died of it would be
    restarted by its nanny while this process closes the cluster and removes its scratch space. The interrupt is
    this process's: it closes the cluster, which stops the workers. (A Ctrl-C in the few milliseconds the fork
    server takes to start is lost.) Only from the main thread, the only one that may set signal handlers."""
    from multiprocessing import forkserver

    if threading.current_thread() is not threading.main_thread():
        forkserver.ensure_running()
        return
    handler = signal.signal(signal.SIGINT, signal.SIG_IGN)  # an ignored signal stays ignored across fork and exec
    try:
        forkserver.ensure_running()
    finally:
        signal.signal(signal.SIGINT, handler)


@contextlib.contextmanager
def _first_interrupt_deferred() -> Iterator[None]:
    """Hold a first Ctrl-C (SIGINT) until the block ends, then raise ``KeyboardInterrupt``; a second one raises at
    once. Around the start of a ``LocalCluster``: interrupted half-way, its event-loop thread goes on starting
    workers (and writing their scratch space) after the interrupt, where nothing can close them. Only in the main
    thread (the only one that may set signal handlers); elsewhere the block runs as it is."""
    if threading.current_thread() is not threading.main_thread() or signal.getsignal(signal.SIGINT) is not \
            signal.default_int_handler:
        yield
        return
    held: list[int] = []

    def hold(signum: int, frame: Any) -> None:
        if held:
            raise KeyboardInterrupt
        held.append(signum)

    signal.signal(signal.SIGINT, hold)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    if held:
        raise KeyboardInterrupt


def execute(jobs: Sequence[Job], client: Any) -> Iterator[tuple[Job, Any]]:
    """Submit every job to the Dask ``client`` (costliest first) and yield ``(job, result)`` as each finishes."""
    from distributed import as_completed

    futures = {client.submit(job.run, key=job.key, priority=job.cost, pure=False): job for job in jobs}
    for future in as_completed(futures):
        yield futures[future], future.result()


def current_worker() -> Any | None:
    """The Dask worker this code runs on, or ``None`` in a plain process (where distributed need not be imported)."""
    if "distributed" not in sys.modules:
        return None
    from distributed import get_worker

    try:
        return get_worker()
    except ValueError:  # not in a worker's task
        return None


def run_jobs(jobs: Sequence[Job], store: JobStore, *, scheduler: str | None = None, workers: int | None = None,
             progress: Progress | None = None) -> list[Any]:
    """The results of ``jobs`` (in order): a valid result in ``store`` is reused, the missing jobs are run and
    their results checked and kept there.

    Args:
        jobs: independent jobs; jobs with the same key run once.
        store: where the results are read and kept: a
            :class:`~transformer_theory.training.store.RecordStore` for jobs of one record
            (:class:`StoredJob`), or a store of the jobs' own kind.
        scheduler: address of a running Dask scheduler to run the missing jobs on.
        workers: otherwise, the single-threaded workers of a local cluster (default: one per core, at most one
            per missing job); ``0`` runs the jobs in this process, costliest first.
        progress: shows the progress of the jobs run on Dask (none: nothing is shown).

    Raises:
        RuntimeError: a job left no valid result in ``store``; and whatever ``store.keep`` raises for an
            inconsistent result (a :class:`~transformer_theory.training.store.RecordStore`: ``RuntimeError``).
    """
    if workers is not None:
        non_negative_int("workers", workers)
    missing: dict[str, Job] = {}
    for job in sorted(jobs, key=lambda j: -j.cost):
        if job.key not in missing and store.result(job) is None:
            missing[job.key] = job
    todo = list(missing.values())
    if todo and scheduler is None and workers == 0:
        for job in todo:
            store.keep(job, job.run())
    elif todo:
        n_workers = None if scheduler is not None else min(workers or os.cpu_count() or 1, len(todo))
        with dask_client(scheduler, n_workers) as client:
            shown = progress(client, todo) if progress else contextlib.nullcontext(lambda job: None)
            with shown as finished:
                for job, result in execute(todo, client):
                    store.keep(job, result)
                    finished(job)
    results = [store.result(job) for job in jobs]
    for job, result in zip(jobs, results):
        if result is None:
            raise RuntimeError(f"job {job.key} did not produce a valid record in {store.root}")
    return results
