"""A sweep on a 2-worker Dask LocalCluster gives exactly the serial results and leaves no worker process
behind, neither after a normal close nor after its parent process is killed with SIGKILL."""

from __future__ import annotations

import os
import platform
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import psutil

from tiny_runs import QUIET, tiny_run, restore_threads  # noqa: F401 (autouse fixture)
from transformer_theory.training import RunStore, TrainOptions, train_runs
from transformer_theory.training.distributed import reuse_freed_memory
import pytest

from transformer_theory.training.jobs import _first_interrupt_deferred, current_worker, dask_client

RUNS = [tiny_run(heads, seed, steps=40, eval_every=20) for heads in ((2, 2), (1, 2)) for seed in (0, 1)]


def descendants() -> set[int]:
    """This process's descendants except multiprocessing's helpers (forkserver and resource tracker, idle
    processes that live as long as this one); the workers forked by the forkserver are counted."""
    me = psutil.Process()
    helpers = {p.pid for p in me.children()
               if any(h in " ".join(p.cmdline()) for h in ("forkserver", "resource_tracker"))}
    return {p.pid for p in me.children(recursive=True)} - helpers


def test_local_cluster_equals_serial_and_cleans_up(tmp_path: Path) -> None:
    serial = train_runs(RUNS, RunStore(tmp_path / "serial"), n_workers=0, models_per_task=2,
                        options=TrainOptions(**QUIET))
    before = descendants()
    distributed = train_runs(RUNS, RunStore(tmp_path / "dask"), n_workers=2, models_per_task=2,
                             options=TrainOptions(progress=False))
    assert descendants() <= before, "worker processes left over after the client closed"
    for a, b in zip(serial, distributed):
        assert a.history == b.history and a.best_nmse == b.best_nmse
        assert a.task["key"] == b.task["key"] and b.provenance["execution"]["threads"] == 1
    assert len({r.task["key"] for r in distributed}) == 2  # two tasks of two models each, one per worker
    assert all(RunStore(tmp_path / "dask").weights(run) is not None for run in RUNS)


def test_the_local_clusters_scratch_space_is_under_build_and_removed(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("TRANSFORMER_THEORY_ROOT", str(tmp_path))
    stale = tmp_path / "build" / "dask" / "999999999"  # a pid no process has: left by a killed run
    stale.mkdir(parents=True)
    with dask_client(n_workers=1) as client:
        scratch = Path(client.run(lambda dask_worker: dask_worker.local_directory).popitem()[1])
        assert scratch.is_relative_to(tmp_path / "build" / "dask" / str(os.getpid()))
        assert not stale.exists()
    assert not (tmp_path / "build" / "dask" / str(os.getpid())).exists()


def test_ctrl_c_of_train_removes_the_scratch_space(tiny_project: Path) -> None:
    train = subprocess.Popen([sys.executable, "-m", "transformer_theory", "train", "09_aggregation_cost", "--profile",
                              "smoke", "--workers", "1", "-p", "steps", "100000", "-p", "cost_steps", "100000"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True)
    scratch = tiny_project / "build" / "dask" / str(train.pid)
    try:
        deadline = time.monotonic() + 120
        while not list(scratch.glob("dask-scratch-space/worker-*")) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert list(scratch.glob("dask-scratch-space/worker-*")), "the local cluster never started its worker"
        os.killpg(train.pid, signal.SIGINT)  # Ctrl-C at a terminal
        _, err = train.communicate(timeout=60)
        assert train.returncode == 130, err
        assert not scratch.exists(), ("the interrupted run left its Dask scratch space: "
                                      f"{sorted(str(p.relative_to(scratch)) for p in scratch.rglob('*'))}\n{err[-3000:]}")
    finally:
        if train.poll() is None:
            os.killpg(train.pid, signal.SIGKILL)
            train.wait()


def test_workers_ignore_ctrl_c_which_is_the_parents() -> None:
    with dask_client(n_workers=1) as client:
        assert list(client.run(lambda: signal.getsignal(signal.SIGINT) == signal.SIG_IGN).values()) == [True]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_ctrl_c_while_the_cluster_starts_is_raised_after_it_started() -> None:
    steps = []
    with pytest.raises(KeyboardInterrupt):
        with _first_interrupt_deferred():
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.05)  # the handler runs between bytecodes, here
            steps.append("the block went on")
    assert steps == ["the block went on"]
    with pytest.raises(KeyboardInterrupt):  # a second Ctrl-C does not wait
        with _first_interrupt_deferred():
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.05)
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.05)
            steps.append("not reached")
    assert steps == ["the block went on"] and signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_workers_exit_when_the_parent_is_killed(tmp_path: Path) -> None:
    script = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        from tiny_runs import tiny_run
        from transformer_theory.training import RunStore, TrainOptions, train_runs
        runs = [tiny_run((2, 2), seed, steps=100000) for seed in (0, 1)]
        options = TrainOptions(progress=False, checkpoint_every_steps=20)
        train_runs(runs, RunStore(sys.argv[1]), n_workers=2, models_per_task=1, options=options)
    """)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    parent = subprocess.Popen([sys.executable, "-c", script, str(tmp_path)], env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while not list(tmp_path.glob("checkpoints/*.pt")) and time.monotonic() < deadline:
            time.sleep(0.2)  # until the workers train (they checkpoint every 20 steps)
        assert list(tmp_path.glob("checkpoints/*.pt")), "the workers never started training"
        processes = psutil.Process(parent.pid).children(recursive=True)  # workers, forkserver, resource tracker
        assert len(processes) >= 2
        parent.kill()
        parent.wait()
        gone, alive = psutil.wait_procs(processes, timeout=30)
        assert not alive, f"left over after SIGKILL of the parent: {[p.cmdline() for p in alive]}"
    finally:
        parent.kill()


def test_a_job_knows_whether_it_runs_on_a_worker() -> None:
    """A training job trains as the options say here, and in one thread reporting Dask events on a worker."""
    assert current_worker() is None
    with dask_client(n_workers=1) as client:
        assert client.submit(lambda: current_worker() is not None, pure=False).result()
    assert current_worker() is None


def test_workers_get_the_allocator_back(monkeypatch) -> None:
    """Dask's nanny sets MALLOC_TRIM_THRESHOLD_ (1.7x slower training steps on its workers); the worker task
    raises glibc's thresholds again where the variable is set, and leaves a plain process alone."""
    monkeypatch.delenv("MALLOC_TRIM_THRESHOLD_", raising=False)
    assert reuse_freed_memory() is False
    if platform.libc_ver()[0] != "glibc":
        return
    with dask_client(n_workers=1) as client:
        applied = client.run(reuse_freed_memory)
        environ = client.run(lambda: os.environ.get("MALLOC_TRIM_THRESHOLD_"))
    assert list(environ.values()) == ["65536"] and list(applied.values()) == [True]
