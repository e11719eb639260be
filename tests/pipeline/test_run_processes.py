"""``run`` under signals and concurrency, with real processes: its kernel dies with it, a killed re-run keeps
the previous record, Ctrl-C marks the run interrupted, a second run of the same notebook is refused."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from pathlib import Path

import pytest
from jupyter_client.provisioning.local_provisioner import LocalProvisioner

from conftest import cli
from pipeline_helpers import Background, add_hold_notebook, connection_file, gone, wait_for
from transformer_theory.pipeline.kernels import ParentBoundKernelManager
from transformer_theory.storage.results import read_results


def results_of(root: Path, name: str) -> Path:
    return root / "build" / "results" / "smoke" / f"{name}.json"


def test_sigkill_of_run_kills_its_kernel(tiny_project: Path) -> None:
    """The kernel holds the GIL (a long regex): ipykernel's own parent poller cannot notice the kill."""
    name = add_hold_notebook(tiny_project)
    with Background(tiny_project) as bg:
        bg.hold_profile(name, gil=True)
        run = bg.start("run", name, "--profile", "smoke")
        [(kernel, parent)] = bg.kernels(1)
        assert parent == run.pid
        os.kill(run.pid, signal.SIGKILL)
        assert wait_for(lambda: gone(kernel), 4), "the kernel outlived its SIGKILLed run"


def test_killed_rerun_keeps_the_previous_ok_record(tiny_project: Path) -> None:
    name = add_hold_notebook(tiny_project)
    assert cli("run", name, "--profile", "smoke").returncode == 0
    results = results_of(tiny_project, name)
    executed = tiny_project / "build" / "executed" / "smoke" / f"{name}.ipynb"
    before = results.read_bytes(), executed.read_bytes()
    with Background(tiny_project) as bg:
        bg.hold_profile(name, x=3)  # the same results file as the first run
        run = bg.start("run", name, "--profile", "smoke")
        [(kernel, _)] = bg.kernels(1)
        os.kill(run.pid, signal.SIGKILL)
        assert wait_for(lambda: gone(kernel), 10)
    assert (results.read_bytes(), executed.read_bytes()) == before, "the killed re-run replaced the ok record"
    data = read_results(results)
    assert data["status"] == "ok" and data["values"] == {"x_seen": 1, "y": 2}


def test_ctrl_c_on_run_marks_it_interrupted_and_exits_130(tiny_project: Path) -> None:
    name = add_hold_notebook(tiny_project)
    with Background(tiny_project) as bg:
        bg.hold_profile(name)
        run = bg.start("run", name, "--profile", "smoke")
        [(kernel, _)] = bg.kernels(1)
        os.killpg(run.pid, signal.SIGINT)  # what Ctrl-C at a terminal does
        _, err = run.communicate(timeout=30)
        assert run.returncode == 130, err
        assert "Traceback" not in err and "interrupted" in err
        assert wait_for(lambda: gone(kernel), 10)
    results = results_of(tiny_project, name)
    assert not results.exists(), "an interrupted run must not replace the results file"
    partial = read_results(results.with_name(results.name + ".partial"))
    assert partial["status"] == "interrupted" and partial["values"] == {"x_seen": 1}


def test_an_interrupted_run_leaves_no_kernel_connection_file(tiny_project: Path) -> None:
    name = add_hold_notebook(tiny_project)
    with Background(tiny_project) as bg:
        bg.hold_profile(name)
        run = bg.start("run", name, "--profile", "smoke")
        [(kernel, _)] = bg.kernels(1)
        connection = connection_file(kernel)
        assert connection.is_file() and connection.parent == results_of(tiny_project, name).parent
        os.killpg(run.pid, signal.SIGINT)
        run.communicate(timeout=30)
        assert run.returncode == 130 and wait_for(lambda: gone(kernel), 10)
    assert not connection.exists(), "the kernel's connection file (with its key) was left behind"


def test_a_kernel_is_shut_down_without_an_interrupt(monkeypatch: pytest.MonkeyPatch) -> None:
    """jupyter_client sends SIGINT before every shutdown; a kernel busy with a message then logs "KeyboardInterrupt
    caught in kernel" at the end of a run that nothing interrupted."""
    sent: list[int] = []
    send_signal = LocalProvisioner.send_signal

    async def recording(self: LocalProvisioner, signum: int) -> None:
        sent.append(signum)
        await send_signal(self, signum)

    monkeypatch.setattr(LocalProvisioner, "send_signal", recording)

    async def start_and_shut_down() -> bool:
        manager = ParentBoundKernelManager(kernel_name="python3")
        await manager.start_kernel()
        await manager.shutdown_kernel()
        return await manager.is_alive()

    assert asyncio.run(start_and_shut_down()) is False
    assert signal.SIGINT not in sent


def test_second_concurrent_run_of_a_notebook_is_refused(tiny_project: Path) -> None:
    name = add_hold_notebook(tiny_project)
    with Background(tiny_project) as bg:
        bg.hold_profile(name, x=2)
        first = bg.start("run", name, "--profile", "smoke")
        bg.kernels(1)
        start = time.monotonic()
        second = cli("run", name, "--profile", "smoke")
        assert second.returncode == 2, second.stdout + second.stderr
        assert f"notebook '{name}' [smoke] is already running (pid {first.pid})" in second.stderr
        assert time.monotonic() - start < 20, "the refusal must come before any execution"
        bg.hold.unlink()
        first.communicate(timeout=120)
        assert first.returncode == 0
    data = read_results(results_of(tiny_project, name))
    assert data["parameters"]["x"] == 2 and data["values"] == {"x_seen": 2, "y": 4}
