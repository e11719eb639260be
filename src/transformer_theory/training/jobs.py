"""Independent jobs and the one executor for them: the engine's training tasks and the Tikhonov runs.

A :class:`Job` names itself (``key``, also its Dask key), says what it costs (``cost``: the costliest start
first) and runs (``run()``, in this process or on a Dask worker, so it must pickle). A :class:`StoredJob`
gives one record and checks one (``valid``); :func:`run_jobs` keeps such records in a
:class:`~transformer_theory.training.store.RecordStore` under their keys. The engine's tasks give a record per
run and store them with their weights (:func:`~transformer_theory.training.distributed.train_runs`), on the
same executor (:func:`execute` on a :func:`dask_client`).
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol

from transformer_theory.checks import non_negative_int
from transformer_theory.storage.paths import build_dir
from transformer_theory.training.store import RecordStore

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


def execute(jobs: Sequence[Job], client: Any) -> Iterator[tuple[Job, Any]]:
    """Submit every job to the Dask ``client`` (costliest first) and yield ``(job, result)`` as each finishes."""
    from distributed import as_completed

    futures = {client.submit(job.run, key=job.key, priority=job.cost, pure=False): job for job in jobs}
    for future in as_completed(futures):
        yield futures[future], future.result()


def run_jobs(jobs: Sequence[StoredJob], store: RecordStore, *, scheduler: str | None = None,
             workers: int | None = None) -> list[dict[str, Any]]:
    """The records of ``jobs`` (in order): a valid record in ``store`` is reused, the missing jobs are run and
    their records checked and written.

    Args:
        jobs: jobs of one record each; jobs with the same key run once.
        store: where the records are read and written.
        scheduler: address of a running Dask scheduler to run the missing jobs on.
        workers: otherwise, the single-threaded workers of a local cluster (default: one per core, at most one
            per missing job); ``0`` runs the jobs in this process, costliest first.

    Raises:
        RuntimeError: a job returned a record that its ``valid`` refuses.
    """
    if workers is not None:
        non_negative_int("workers", workers)
    missing: dict[str, StoredJob] = {}
    for job in sorted(jobs, key=lambda j: -j.cost):
        if job.key not in missing and store.read(job.key, job.valid) is None:
            missing[job.key] = job

    def keep(job: StoredJob, record: dict[str, Any]) -> None:
        if not job.valid(record):
            raise RuntimeError(f"job {job.key}: the run returned an inconsistent record; not stored")
        store.write(job.key, record)

    if missing and scheduler is None and workers == 0:
        for job in missing.values():
            keep(job, job.run())
    elif missing:
        n_workers = None if scheduler is not None else min(workers or os.cpu_count() or 1, len(missing))
        with dask_client(scheduler, n_workers) as client:
            for job, record in execute(list(missing.values()), client):
                keep(job, record)
    records = [store.read(job.key, job.valid) for job in jobs]
    for job, record in zip(jobs, records):
        if record is None:
            raise RuntimeError(f"job {job.key} did not produce a valid record in {store.root}")
    return records
