"""Run one notebook with papermill under a profile, after checking every parameter and path first.

A chapter's executed notebook goes to ``build/executed/<profile>/<notebook>.ipynb`` and its results JSON to
``build/results/<profile>/<notebook>.json`` (values recorded by the notebook plus provenance), the folders the book
is rendered from; a run with overrides (``-p``) is kept apart, under ``build/custom/<profile>/<overrides>/``
(:func:`custom_folder`), so it never becomes the book's chapter. A notebook run by path is kept under ``by-path/``
(see :func:`~.notebooks.notebook_key`).

One run per results file at a time (:mod:`~.locks`). A run writes its notebook and record beside their
final paths (``<path>.partial``, status ``running``) and moves them into place only when papermill has
finished without an error, so a run that is killed leaves the previous complete record and notebook as they
were; one that is stopped by Ctrl-C or SIGTERM leaves its partial record marked ``interrupted``; one that
fails keeps its record and notebook beside the previous ones, as ``<path>.failed``. The kernel dies with the
run (:mod:`~.kernels`).
"""

from __future__ import annotations

import datetime as dt
import functools
import os
import time
import traceback
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from transformer_theory.pipeline.locks import results_lock
from transformer_theory.pipeline.notebooks import notebook_key, notebook_parameters, resolve_notebook
from transformer_theory.pipeline.parameters import check_parameters, point_name
from transformer_theory.storage.paths import build_dir, check_writable_file
from transformer_theory.pipeline.profiles import load_profile
from transformer_theory.storage.provenance import config_hash, environment, parameters_hash, source_hash
from transformer_theory.storage.results import failed_path, partial_path, read_results, write_json_atomic


@dataclass
class RunSpec:
    """A validated run: which notebook, under which profile, with which parameters, written where."""

    path: Path  # the notebook, resolved
    profile: str
    parameters: dict[str, Any]  # profile values, then command-line overrides (checked, coerced)
    defaults: dict[str, Any]
    output: Path
    results: Path
    key: str  # where its results are kept (notebooks.notebook_key)
    overrides: dict[str, Any] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.path.stem

    @property
    def parameters_hash(self) -> str:
        """Identifies the notebook and its effective parameters."""
        return parameters_hash(self.key, {**self.defaults, **self.parameters})

    @functools.cached_property
    def source_hash(self) -> str:
        """Identifies the notebook's code and the library code it imports (see :mod:`~transformer_theory.storage.provenance`)."""
        return source_hash(self.path)

    @property
    def config_hash(self) -> str:
        """Identifies the run: parameters and source; a result with another hash is stale."""
        return config_hash(self.parameters_hash, self.source_hash)


def prepare_run(
    notebook: str,
    profile: str = "book",
    overrides: dict[str, Any] | None = None,
    output: str | Path | None = None,
    results: str | Path | None = None,
) -> RunSpec:
    """Resolve and validate everything about a run; raises ``ValueError`` before anything executes.

    ``output`` must be a writable ``.ipynb`` path other than the notebook itself; unless ``results`` is
    given, the results JSON goes beside it. Without ``output``, a run with ``overrides`` goes to
    :func:`custom_folder`, one without to the book's ``build/executed/<profile>/`` and ``build/results/<profile>/``.
    The parameters are checked by the chapter's parameters dataclass (:func:`check_chapter`).
    """
    profile_map = load_profile(profile)
    path = resolve_notebook(notebook)
    key = notebook_key(path)
    defaults = notebook_parameters(path)
    optional = optional_parameters(path.stem)
    from_profile = check_parameters(path.stem, defaults, profile_map.get(path.stem, {}), source=f"params/{profile}.yaml",
                                    may_be_empty=optional)
    from_cli = check_parameters(path.stem, defaults, overrides or {}, source="-p", may_be_empty=optional)
    if output is None and from_cli:  # a custom run: never where the book is rendered from
        output = custom_folder(profile, from_cli) / f"{key}.ipynb"
    if results is None:  # a custom output keeps its results JSON beside it
        results = Path(output).with_suffix(".json") if output else build_dir() / "results" / profile / f"{key}.json"
    output = Path(output) if output else build_dir() / "executed" / profile / f"{key}.ipynb"
    check_chapter(key, {**defaults, **from_profile, **from_cli})
    check_writable_file(output, "--output", ".ipynb")
    check_writable_file(results, "results file", ".json")
    if output.resolve() == path:
        raise ValueError(f"--output {output} is the notebook being run: papermill would overwrite it")
    return RunSpec(path, profile, {**from_profile, **from_cli}, defaults, output, Path(results), key, dict(from_cli))


def custom_folder(profile: str, overrides: dict[str, Any]) -> Path:
    """Where a run of ``profile`` with command-line ``overrides`` is kept: ``build/custom/<profile>/<name>/``, the name
    readable and stable (the overrides sorted by name, :func:`~.parameters.point_name`: ``N=9_d=4``)."""
    return build_dir() / "custom" / profile / point_name(dict(sorted(overrides.items())))


def optional_parameters(stem: str) -> tuple[str, ...]:
    """The list parameters of the training chapter ``stem`` that may be empty (its optional parts; none for
    another notebook)."""
    from transformer_theory.chapters import EXPERIMENTS

    return EXPERIMENTS[stem].optional if stem in EXPERIMENTS else ()


def check_chapter(key: str, parameters: dict[str, Any]) -> None:
    """Build the parameters dataclass of the chapter ``key`` (if it is one) from its ``parameters``, and a training
    chapter's runs, so that a value it refuses (a negative size, an empty list of seeds, a width that is no list)
    fails, naming the parameter, before the kernel starts."""
    from transformer_theory.chapters import EXPERIMENTS, PARAMETERS

    try:
        if key in PARAMETERS:
            PARAMETERS[key](**parameters)
        if key in EXPERIMENTS:
            experiment = EXPERIMENTS[key]
            experiment.runs({name: value for name, value in parameters.items() if name in experiment.defaults})
    except ValueError as exc:
        raise ValueError(f"notebook '{key}': {exc}") from None


def _now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")


def connection_path(results: Path) -> Path:
    """The kernel's connection file of the run writing ``results`` (``<results>.kernel``, removed when it ends)."""
    return results.with_name(results.name + ".kernel")


def mark_interrupted(spec: RunSpec) -> bool:
    """Mark the partial record of a stopped run ``interrupted``; whether there was one still ``running``. The
    kernel's connection file, if the stopped process left it, is removed.

    Call it holding the run's lock, once the run's process (and kernel) no longer writes.
    """
    connection_path(spec.results).unlink(missing_ok=True)
    path = partial_path(spec.results)
    data = read_results(path)
    if not data or data.get("status") != "running":
        return False
    write_json_atomic(path, {**data, "status": "interrupted", "finished_at": _now()})
    return True


def execute(spec: RunSpec, *, log_output: bool = False, runs: str | os.PathLike | None = None) -> dict[str, Any]:
    """Execute ``spec`` with papermill (kernel ``python3``) and write its results JSON atomically.

    The kernel learns its profile, its results file and (``runs``, a folder) a run store replacing the profile's
    from the environment it is started with (:func:`~.context.kernel_environment`; the notebook's
    :func:`~.context.kernel_context` reads it); this process's environment does not change.

    Returns the results dict; its ``status`` is ``"ok"`` or ``"failed"`` (with ``error``; the record and
    notebook are then written to ``<path>.failed`` (:func:`~.results.failed_path`), and the previous results
    stay as they were). A run that ends ``ok`` removes the ``.failed`` files. ``ValueError``
    if another run holds the results file; a ``KeyboardInterrupt`` (Ctrl-C, or SIGTERM under
    :func:`~.processes.signals_raise`) marks the partial record ``interrupted`` and propagates, naming that
    record in its attribute ``partial_record`` (absent when the run had not started yet).
    """
    import papermill

    from transformer_theory.pipeline.context import kernel_environment
    from transformer_theory.pipeline.kernels import (ParentBoundKernelManager, connection_file_at,
                                                     kernel_environment_added, quiet_kernel_death_on_stop)

    with results_lock(spec.results, f"notebook '{spec.name}' [{spec.profile}]"):
        partial_record, partial_notebook = partial_path(spec.results), partial_path(spec.output)
        effective = {**spec.defaults, **spec.parameters}
        header = {
            "notebook": spec.name,
            "source": str(spec.path),
            "profile": spec.profile,
            "parameters": effective,
            "overrides": spec.overrides,
            "seed": effective.get("seed"),
            "config_hash": spec.config_hash,
            "parameters_hash": spec.parameters_hash,
            "source_hash": spec.source_hash,
            "status": "running",
            "started_at": _now(),
            "executed_notebook": str(partial_notebook),
            **environment(),
            "values": {},
        }
        write_json_atomic(partial_record, header)
        partial_notebook.unlink(missing_ok=True)  # left by an interrupted run: never move it into place
        spec.output.parent.mkdir(parents=True, exist_ok=True)
        kernel_env = kernel_environment(spec.profile, partial_record, runs)
        start = time.perf_counter()
        error = None
        quiet_kernel_death_on_stop()
        try:
            with warnings.catch_warnings(), connection_file_at(connection_path(spec.results)), \
                    kernel_environment_added(kernel_env):
                # the partial notebook's name does not end in .ipynb, on purpose
                warnings.filterwarnings("ignore", message="The specified file .* does not end in")
                papermill.execute_notebook(
                    str(spec.path),
                    str(partial_notebook),
                    parameters=spec.parameters,
                    kernel_name="python3",
                    kernel_manager_class=ParentBoundKernelManager,
                    cwd=str(spec.path.parent),
                    progress_bar=False,
                    log_output=log_output,
                )
        except Exception as exc:  # papermill wraps the notebook's own exception
            error = "".join(traceback.format_exception_only(type(exc), exc)).strip()[-4000:]
        except KeyboardInterrupt as exc:
            exc.partial_record = partial_record if mark_interrupted(spec) else None  # type: ignore[attr-defined]
            raise
        failed = [failed_path(spec.results), failed_path(spec.output)]
        record_path, notebook_path = failed if error else (spec.results, spec.output)
        final = {
            **header,
            "status": "failed" if error else "ok",
            "error": error,
            "wall_time_s": round(time.perf_counter() - start, 3),
            "finished_at": _now(),
            "executed_notebook": str(notebook_path) if partial_notebook.exists() else None,
            "values": (read_results(partial_record) or {}).get("values", {}),
        }
        if partial_notebook.exists():
            os.replace(partial_notebook, notebook_path)
        else:  # papermill wrote nothing (the kernel did not start): no notebook belongs to this record
            notebook_path.unlink(missing_ok=True)
        write_json_atomic(record_path, final)
        partial_record.unlink()
        if not error:  # the last failure is no longer the latest word
            for path in failed:
                path.unlink(missing_ok=True)
    return final
