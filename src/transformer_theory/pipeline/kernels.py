"""The kernel manager of every papermill run: its kernel dies with the process that runs the notebook."""

from __future__ import annotations

from jupyter_client.manager import AsyncKernelManager

from transformer_theory.pipeline.processes import guarded_command, stopping


class ParentBoundKernelManager(AsyncKernelManager):
    """nbclient's default manager, with the kernel started through :func:`~.processes.guarded_command`.

    The kernel keeps its own session and process group (jupyter_client's choice: Ctrl-C at the terminal does
    not reach it), and ``PR_SET_PDEATHSIG`` kills it when the run's process exits, even by SIGKILL. Once the
    run is stopping (Ctrl-C, SIGTERM), the kernel is killed at once rather than asked to shut down: the
    graceful way takes seconds and makes ipykernel log a traceback for the cell it was running.
    """

    def format_kernel_cmd(self, extra_arguments: list[str] | None = None) -> list[str]:
        return guarded_command(super().format_kernel_cmd(extra_arguments))

    async def shutdown_kernel(self, now: bool = False, restart: bool = False) -> None:
        await super().shutdown_kernel(now=now or stopping(), restart=restart)
