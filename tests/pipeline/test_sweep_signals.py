"""``sweep`` under Ctrl-C and SIGKILL, with real processes. These check the executor's contract
(``transformer_theory.pipeline.sweep``): whatever runs the points must keep them green.

Each point's kernel writes ``<x>.pid`` with its own pid and its parent's (the worker that runs it).
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from pipeline_helpers import Background, add_hold_notebook, connection_file, gone, wait_for
from transformer_theory.storage.results import read_results


def point_files(root: Path, name: str, x: int) -> list[Path]:
    """The point's files (its label is ``x=<x>_hold=..._pids=...``), by suffix: ``.json``, ``.json.partial``."""
    return sorted((root / "build" / "sweeps" / "smoke" / name).glob(f"x={x}_*.json*"))


@pytest.mark.parametrize(
    "to_group, signum, status",
    [(True, signal.SIGINT, 130), (False, signal.SIGTERM, 143)],
    ids=["ctrl-c-to-the-terminal-group", "sigterm-to-the-sweep"],
)
def test_ctrl_c_stops_a_sweep_at_once(tiny_project: Path, to_group: bool, signum: int, status: int) -> None:
    name = add_hold_notebook(tiny_project)
    with Background(tiny_project) as bg:
        sweep = bg.start("sweep", name, "--profile", "smoke", "-p", "x", "1,2,3", "--jobs", "2", *bg.hold_args())
        pids = bg.kernels(2)  # points 1 and 2 run (and wait); point 3 is queued
        connections = [connection_file(kernel) for kernel, _ in pids]
        start = time.monotonic()
        # Ctrl-C at a terminal signals the whole foreground group (workers too); `kill` the sweep alone
        (os.killpg if to_group else os.kill)(sweep.pid, signum)
        try:
            _, err = sweep.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            raise AssertionError("the sweep did not stop within 20 s") from None
        assert time.monotonic() - start < 10, "the sweep must stop at once"
        assert sweep.returncode == status, err
        assert "Traceback" not in err
        assert "2 interrupted" in err and "1 cancelled" in err
        leftover = lambda: [pid for pair in pids for pid in pair if not gone(pid)]  # noqa: E731
        assert wait_for(lambda: not leftover(), 5), f"workers or kernels left running: {leftover()}"
        assert not (bg.pids / "3.pid").exists(), "the queued point must not start"
        assert not any(c.exists() for c in connections), "a kernel connection file (with its key) was left behind"
    for x in (1, 2):
        [partial] = point_files(tiny_project, name, x)  # no results file: nothing finished
        assert partial.name.endswith(".json.partial") and read_results(partial)["status"] == "interrupted"
    assert point_files(tiny_project, name, 3) == [], "the queued point left a record"


def test_sigkill_of_a_sweep_leaves_no_workers_or_kernels(tiny_project: Path) -> None:
    name = add_hold_notebook(tiny_project)
    with Background(tiny_project) as bg:
        sweep = bg.start("sweep", name, "--profile", "smoke", "-p", "x", "1,2", "--jobs", "2", *bg.hold_args())
        pids = bg.kernels(2)
        assert {parent for _, parent in pids} != {sweep.pid}, "each point runs in a worker process"
        os.kill(sweep.pid, signal.SIGKILL)  # the sweep's process only, as the OOM killer would
        leftover = lambda: [pid for pair in pids for pid in pair if not gone(pid)]  # noqa: E731
        assert wait_for(lambda: not leftover(), 5), f"workers or kernels outlived the sweep: {leftover()}"
