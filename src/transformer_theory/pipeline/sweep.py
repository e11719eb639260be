"""Parameter sweeps: one executed notebook and one results JSON per grid point, resumable.

Points whose results already exist (status ``ok``, same configuration hash) are skipped, so a sweep
that was interrupted resumes where it stopped; a corrupt results file is treated as missing.
"""

from __future__ import annotations

import itertools
import re
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from transformer_theory.pipeline.paths import build_dir, check_writable_folder
from transformer_theory.pipeline.results import read_results
from transformer_theory.pipeline.runner import RunSpec, execute, prepare_run


def grid_points(grid: dict[str, list[Any]]) -> list[dict[str, Any]]:
    """The Cartesian product of the grid, in the order the names were given."""
    names = list(grid)
    return [dict(zip(names, combo)) for combo in itertools.product(*(grid[n] for n in names))]


def point_name(point: dict[str, Any]) -> str:
    """A file-name-safe label of a grid point, e.g. ``N=10_seed=0``."""

    def fmt(value: Any) -> str:
        text = ",".join(map(str, value)) if isinstance(value, (list, tuple)) else str(value)
        return re.sub(r"[^A-Za-z0-9.,+-]", "-", text)

    return "_".join(f"{k}={fmt(v)}" for k, v in point.items())


@dataclass
class SweepReport:
    done: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)


def _is_complete(spec: RunSpec) -> bool:
    data = read_results(spec.results)
    return bool(data) and data.get("status") == "ok" and data.get("config_hash") == spec.config_hash and spec.output.is_file()


def run_sweep(
    notebook: str,
    grid: dict[str, list[Any]],
    profile: str = "book",
    jobs: int = 1,
    out_dir: str | Path | None = None,
    progress: bool = True,
) -> SweepReport:
    """Run ``notebook`` at every point of ``grid`` (``jobs`` processes in parallel).

    Every point is validated before any runs. Outputs go to
    ``build/sweeps/<profile>/<notebook>/<point>.ipynb`` (and ``.json``) unless ``out_dir`` is given.
    """
    if jobs < 1:
        raise ValueError(f"--jobs must be at least 1, got {jobs}")
    if not grid:
        raise ValueError("a sweep needs at least one '-p NAME v1,v2,...'")
    first = prepare_run(notebook, profile)
    folder = check_writable_folder(Path(out_dir) if out_dir else build_dir() / "sweeps" / profile / first.key, "--output")
    specs = {}
    for point in grid_points(grid):
        label = point_name(point)
        specs[label] = prepare_run(notebook, profile, point, output=folder / f"{label}.ipynb")
    report = SweepReport()
    todo: dict[str, RunSpec] = {}
    for label, spec in specs.items():
        if _is_complete(spec):
            report.skipped.append(label)
        else:
            todo[label] = spec
    with ProcessPoolExecutor(max_workers=jobs) as pool, tqdm(
        total=len(todo), desc=f"sweep {first.name}", disable=not progress or not todo
    ) as bar:
        futures = {pool.submit(execute, spec): label for label, spec in todo.items()}
        for future in as_completed(futures):
            label = futures[future]
            try:
                result = future.result()
            except Exception as exc:  # the worker itself broke (not the notebook)
                report.failed[label] = f"{type(exc).__name__}: {exc}"
            else:
                if result["status"] == "ok":
                    report.done.append(label)
                else:
                    report.failed[label] = (result.get("error") or "failed").splitlines()[-1]
            bar.update(1)
    return report
