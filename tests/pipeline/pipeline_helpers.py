"""Helpers for the pipeline tests that run real processes: a notebook that waits, its kernel's pid, clean-up.

The notebook ``02_hold`` records ``x_seen``, writes ``<x>.pid`` ("kernel_pid parent_pid") into the folder
``pids``, waits while the file ``hold`` exists (sleeping, or inside a GIL-holding regex when ``gil`` is
true, as a long C call would), then records ``y = 2 x``.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

from conftest import make_notebook

HOLD = "02_hold"


def add_hold_notebook(root: Path) -> str:
    make_notebook(
        root / "notebooks" / f"{HOLD}.ipynb",
        """
        x = 1
        hold = ""
        pids = ""
        gil = False
        """,
        """
        import os, re, time
        from pathlib import Path
        from transformer_theory import kernel_context
        record = kernel_context().record
        record("x_seen", x)
        if pids:
            Path(pids, f".{x}").write_text(f"{os.getpid()} {os.getppid()}")
            os.replace(Path(pids, f".{x}"), Path(pids, f"{x}.pid"))
        while hold and os.path.exists(hold):
            if gil:
                re.match(r"(a+)+$", "a" * 29 + "b")
            else:
                time.sleep(0.05)
        record("y", 2 * x)
        """,
    )
    return HOLD


def gone(pid: int) -> bool:
    """Whether ``pid`` has exited (a zombie waiting for its reaper counts as exited)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except (FileNotFoundError, ProcessLookupError):
        return True


def connection_file(kernel: int) -> Path:
    """The connection file the kernel ``kernel`` was started with (its ``-f`` argument)."""
    args = Path(f"/proc/{kernel}/cmdline").read_bytes().decode().split("\0")
    return Path(args[args.index("-f") + 1])


def wait_for(condition: Callable[[], bool], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.1)
    return condition()


class Background:
    """CLI commands started in their own session (as from a terminal), with the hold file and pid folder.

    ``with Background(root) as bg:`` kills on exit whatever is left: the commands' process groups and every
    process named in a pid file (kernels keep their own session, so they are not in those groups).
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self.hold = root / "hold"
        self.pids = root / "pids"
        self.procs: list[subprocess.Popen] = []

    def __enter__(self) -> "Background":
        self.pids.mkdir(exist_ok=True)
        self.hold.touch()
        return self

    def start(self, *args: str) -> subprocess.Popen:
        proc = subprocess.Popen([sys.executable, "-m", "transformer_theory", *args], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, start_new_session=True)
        self.procs.append(proc)
        return proc

    def hold_args(self) -> list[str]:
        """A sweep's one-point axes ``hold`` and ``pids``."""
        return ["-p", "hold", str(self.hold), "-p", "pids", str(self.pids)]

    def hold_profile(self, name: str, **values: object) -> None:
        """The smoke profile gives the notebook ``name`` the hold file, the pid folder and ``values``: a ``run``
        without ``-p`` writes the book's results file (``-p`` would keep it apart, under build/custom/)."""
        entry = {"hold": str(self.hold), "pids": str(self.pids), **values}
        lines = "".join(f"  {key}: {json.dumps(value)}\n" for key, value in entry.items())
        (self.root / "params" / "smoke.yaml").write_text(f"01_tiny:\n  scale: 2.0\n{name}:\n{lines}")

    def kernels(self, count: int, timeout: float = 120) -> list[tuple[int, int]]:
        """Wait until ``count`` kernels have written their pid files; their ``(kernel, parent)`` pids."""
        files = lambda: sorted(self.pids.glob("*.pid"))  # noqa: E731
        assert wait_for(lambda: len(files()) >= count, timeout), f"only {len(files())} of {count} kernels started"
        return [tuple(map(int, f.read_text().split())) for f in files()]

    def __exit__(self, *exc: object) -> None:
        self.hold.unlink(missing_ok=True)
        for pid_file in self.pids.glob("*.pid"):
            for pid in map(int, pid_file.read_text().split()):
                if not gone(pid) and _ours(pid):
                    os.kill(pid, signal.SIGKILL)
        for proc in self.procs:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=30)
            proc.stdout.close()
            proc.stderr.close()


def _ours(pid: int) -> bool:
    """Whether ``pid`` is still one of this test's processes (a kernel or a CLI process), not a reused pid."""
    try:
        command = Path(f"/proc/{pid}/cmdline").read_bytes()
    except FileNotFoundError:
        return False
    return b"ipykernel_launcher" in command or b"transformer_theory" in command
