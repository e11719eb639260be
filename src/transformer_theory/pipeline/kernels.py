"""The kernel manager of every papermill run: its kernel dies with the process that runs the notebook, its
connection file (which holds the kernel's key) is a path the run chooses and removes however it ends, it talks to
the kernel over local (IPC) sockets in a private folder (no TCP port, so no "Kernel is running over TCP without
encryption" warning), and its environment holds what the run tells the notebook (the runner's process environment is
left as it is)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import tempfile
from collections.abc import Mapping
from contextvars import ContextVar
from pathlib import Path
from typing import Any, Iterator

from jupyter_client.manager import AsyncKernelManager

from transformer_theory.pipeline.processes import guarded_command, stopping

#: The connection file and the folder of the IPC sockets of the kernels started in :func:`connection_file_at`.
_connection_file: ContextVar[tuple[Path, Path] | None] = ContextVar("connection_file", default=None)
_environment: ContextVar[Mapping[str, str]] = ContextVar("kernel_environment", default={})


@contextlib.contextmanager
def connection_file_at(path: Path) -> Iterator[None]:
    """Kernels started inside the block by :class:`ParentBoundKernelManager` write their connection file to
    ``path`` (instead of a ``/tmp/tmp*.json`` nobody removes after an interrupt) and their IPC sockets to a private
    temporary folder (a short path: a socket's path has at most 107 bytes); the file is removed on entry (left by
    a killed run), both on exit, however the block ends."""
    path = path.absolute()  # the kernel runs in the notebook's folder
    path.unlink(missing_ok=True)
    with tempfile.TemporaryDirectory(prefix="transformer-theory-kernel-") as sockets:
        token = _connection_file.set((path, Path(sockets)))
        try:
            yield
        finally:
            _connection_file.reset(token)
            path.unlink(missing_ok=True)


@contextlib.contextmanager
def kernel_environment_added(values: Mapping[str, str]) -> Iterator[None]:
    """Kernels started inside the block by :class:`ParentBoundKernelManager` get ``values`` added to the environment
    they inherit (this process's own environment does not change)."""
    token = _environment.set(dict(values))
    try:
        yield
    finally:
        _environment.reset(token)


def quiet_kernel_death_on_stop() -> None:
    """Install :func:`_drop_dead_kernel_reports` on the event loop nbclient runs on in this thread (jupyter_core's
    ``run_sync`` loop). Without it, a Ctrl-C that lands while a cell runs can end the run, after its "interrupted"
    line, with asyncio's "Task exception was never retrieved" and a traceback: the cell's task ends with nbclient's
    ``DeadKernelError`` once the kernel is killed, after the interrupt left nobody awaiting it."""
    from jupyter_core.utils import ensure_event_loop

    ensure_event_loop().set_exception_handler(_drop_dead_kernel_reports)


def _drop_dead_kernel_reports(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    """An event-loop exception handler: once the run is stopping (:func:`~.processes.stopping`), a task that ended with
    ``DeadKernelError`` is expected (:class:`ParentBoundKernelManager` kills the kernel at once) and not reported;
    every other report goes to asyncio's default handler."""
    from nbclient.exceptions import DeadKernelError

    if not (stopping() and isinstance(context.get("exception"), DeadKernelError)):
        loop.default_exception_handler(context)


class ParentBoundKernelManager(AsyncKernelManager):
    """nbclient's default manager, with the kernel started through :func:`~.processes.guarded_command`.

    The kernel keeps its own session and process group (jupyter_client's choice: Ctrl-C at the terminal does
    not reach it), and ``PR_SET_PDEATHSIG`` kills it when the run's process exits, even by SIGKILL. Once the
    run is stopping (Ctrl-C, SIGTERM), the kernel is killed at once rather than asked to shut down: the
    graceful way takes seconds and makes ipykernel log a traceback for the cell it was running. A shutdown
    sends no SIGINT first (jupyter_client's habit: a kernel busy with a message then logs "KeyboardInterrupt
    caught in kernel" although nothing was interrupted; the notebook has finished, or the kernel is killed).
    Inside :func:`connection_file_at`, the connection file goes to the path it names and the kernel listens on IPC
    sockets in that block's folder; inside :func:`kernel_environment_added`, the kernel's environment gets its values.
    """

    def format_kernel_cmd(self, extra_arguments: list[str] | None = None) -> list[str]:
        return guarded_command(super().format_kernel_cmd(extra_arguments))

    def write_connection_file(self, **kwargs: Any) -> None:
        where = _connection_file.get()
        if where is not None and not self.connection_file:
            self.connection_file = str(where[0])
            self.transport = "ipc"
            self.ip = str(where[1] / "kernel")  # the sockets are kernel-<port>
        super().write_connection_file(**kwargs)

    async def _async_pre_start_kernel(self, **kw: Any) -> Any:  # every (re)start passes its launch arguments here
        added = _environment.get()
        if added:
            kw["env"] = {**kw.get("env", os.environ), **added}
        return await super()._async_pre_start_kernel(**kw)

    async def _async_interrupt_kernel(self) -> None:  # jupyter_client 8 calls it at the start of a shutdown
        if not self.shutting_down:
            await super()._async_interrupt_kernel()

    async def shutdown_kernel(self, now: bool = False, restart: bool = False) -> None:
        await super().shutdown_kernel(now=now or stopping(), restart=restart)
