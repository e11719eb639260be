"""Child processes that die with their parent, and termination signals turned into an exception.

A papermill kernel, or a sweep's worker, must not outlive the process that started it, even when that
process is killed with SIGKILL and runs no clean-up at all. On Linux, :func:`die_with_parent` asks the
kernel (``prctl(PR_SET_PDEATHSIG, SIGKILL)``) to kill the calling process when its parent exits. That is
immediate, needs no polling thread (ipykernel's own parent poller cannot run while the notebook holds
the GIL, in a long regex or C loop), and survives ``exec``: kernels start through
``python -m transformer_theory.pipeline.processes PARENT_PID KERNEL_COMMAND...``, which sets it and then
execs the kernel. Note that the signal is tied to the parent *thread* that started the child: start such
children from a thread that lives as long as they should (the main thread, or a task's thread).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
from typing import Iterator

_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


class Interrupted(KeyboardInterrupt):
    """SIGINT or SIGTERM arrived; ``signum`` says which (the command line exits with ``128 + signum``)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def die_with_parent(parent: int) -> None:
    """Have the calling process killed (SIGKILL) as soon as ``parent``, its parent, exits.

    Linux only (elsewhere a no-op apart from the check). If ``parent`` is already gone, exits at once.
    """
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG) failed")
    if os.getppid() != parent:  # the parent died before the request took effect
        os._exit(1)


def worker_initializer(parent: int) -> None:
    """Set up a sweep worker: it dies with ``parent``, ignores Ctrl-C (the parent stops it), and SIGTERM
    kills it (a forked worker inherits the parent's handlers)."""
    die_with_parent(parent)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def guarded_command(command: list[str]) -> list[str]:
    """``command`` started through this module, so that it dies with the calling process."""
    return [sys.executable, "-m", __name__, str(os.getpid()), *command]


_received: list[int] = []  # the signals that arrived inside signals_raise


def stopping() -> bool:
    """Whether SIGINT or SIGTERM has arrived inside :func:`signals_raise` (the process is stopping)."""
    return bool(_received)


@contextlib.contextmanager
def signals_raise() -> Iterator[None]:
    """Inside the block, SIGINT and SIGTERM raise :class:`Interrupted` (so ``finally`` clauses run)."""

    def handler(signum: int, frame: object) -> None:
        _received.append(signum)
        raise Interrupted(signum)

    _received.clear()
    previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


if __name__ == "__main__":
    die_with_parent(int(sys.argv[1]))
    os.execvp(sys.argv[2], sys.argv[2:])
