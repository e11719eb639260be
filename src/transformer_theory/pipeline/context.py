"""The one place that reads what the runner tells a notebook's kernel: :func:`kernel_context`.

The runner (:func:`~transformer_theory.pipeline.runner.execute`) starts each kernel with the environment of
:func:`kernel_environment`: the profile (:data:`PROFILE_ENV`), the results file to write (:data:`RESULTS_ENV`) and,
for a reproduction, the fresh run store (:data:`RUNS_ENV`). A notebook turns them into its
:class:`~transformer_theory.training.context.Context` with one call, ``context = kernel_context()``, and passes the
context on; no library module below the pipeline reads the environment. Outside the runner (an interactive session)
the context is the :data:`INTERACTIVE_PROFILE`'s, its numbers kept in memory.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from transformer_theory.storage.results import Recorder
from transformer_theory.training.context import Context

#: Environment variable holding the profile the notebook being executed runs under.
PROFILE_ENV = "TRANSFORMER_THEORY_PROFILE"
#: Environment variable holding the results file of the notebook being executed.
RESULTS_ENV = "TRANSFORMER_THEORY_RESULTS"
#: Environment variable naming a run-store folder that replaces the profile's (``make reproduce`` trains into a fresh
#: store with it).
RUNS_ENV = "TRANSFORMER_THEORY_RUNS"
#: The profile of an interactive session (no runner around it).
INTERACTIVE_PROFILE = "book"


def kernel_environment(profile: str, results: str | os.PathLike, runs: str | os.PathLike | None = None) -> dict[str, str]:
    """The variables the runner sets in a kernel's environment: its ``profile``, its ``results`` file and the run-store
    folder ``runs`` (empty when ``None``: the profile's store), as absolute paths (the kernel runs in the notebook's
    folder). All three are set, so that nothing the runner's own environment holds leaks into the kernel."""
    return {PROFILE_ENV: profile, RESULTS_ENV: str(Path(results).resolve()),
            RUNS_ENV: "" if runs is None else str(Path(runs).resolve())}


def kernel_context(environ: Mapping[str, str] | None = None) -> Context:
    """The context of the running notebook, from the variables :func:`kernel_environment` set (``environ``, default
    this process's environment): its profile (default :data:`INTERACTIVE_PROFILE`), its run store (the profile's, or
    the folder of :data:`RUNS_ENV`) and its recorder (writing to the results file of :data:`RESULTS_ENV`, if set)."""
    environ = os.environ if environ is None else environ
    results = environ.get(RESULTS_ENV)
    return Context.for_profile(environ.get(PROFILE_ENV) or INTERACTIVE_PROFILE, environ.get(RUNS_ENV) or None,
                               Recorder(Path(results) if results else None))
