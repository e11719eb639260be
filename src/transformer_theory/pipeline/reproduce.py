"""``make reproduce``: recompute a profile's results in a folder of their own, compare them with the committed ones.

Every notebook (or the ones named) runs under the profile into ``build/reproduce/<profile>/``: executed
notebooks in ``executed/``, results JSONs in ``results/``, and a fresh run store in ``runs/`` (passed to each
kernel, :func:`~.runner.execute`; this process's environment does not change), so the training chapters and the
Tikhonov runs train
again and never read the committed ``results/<profile>/``. The runs of the training chapters are trained
first, all chapters' runs as one sweep on a local Dask cluster (:func:`train_chapters`); their notebooks then
read them from the store. A notebook whose results there are complete and
current is not run again: an interrupted reproduction resumes where it stopped (and its trainings from their
checkpoints). :func:`comparison_page` then sets every recomputed key number of every chapter, and every run's
best validation NMSE (the Tikhonov runs: each stage's minimal loss), beside the committed value with their
ratio, and gives the measured time of each part. Nothing under ``results/`` changes until :func:`accept`
copies the recomputed files there.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from transformer_theory.checks import is_real, non_negative_int
from transformer_theory.pipeline.notebooks import list_notebooks, resolve_notebook
from transformer_theory.storage.paths import build_dir, results_dir
from transformer_theory.pipeline.profiles import load_profile
from transformer_theory.storage.results import read_results, write_file_atomic, write_text_atomic
from transformer_theory.pipeline.runner import RunSpec, execute, prepare_run
from transformer_theory.tables import markdown_table

#: A recorded value with more numbers than this is compared in one summary row.
MAX_ROWS_PER_VALUE = 6
#: Run-store entries that are not finished runs.
_CHECKPOINTS = "checkpoints"
#: Models batched into one training task of a reproduction (the book's intrinsic-dimension runs were trained so:
#: the three head configurations of one D and seed).
MODELS_PER_TASK = 3
#: The record of a reproduction's up-front training, in its folder.
TRAINING_RECORD = "training.json"


def reproduce_folder(profile: str) -> Path:
    """``build/reproduce/<profile>/``."""
    return build_dir() / "reproduce" / profile


@dataclass
class Part:
    """One notebook of a reproduction: its run, and whether it ran now (``False``: found complete)."""

    spec: RunSpec
    ran: bool
    result: dict[str, Any]

    @property
    def ok(self) -> bool:
        return self.result.get("status") == "ok"


def _spec(notebook: str, profile: str, folder: Path) -> RunSpec:
    stem = resolve_notebook(notebook).stem
    return prepare_run(stem, profile, output=folder / "executed" / f"{stem}.ipynb",
                       results=folder / "results" / f"{stem}.json")


def _complete(spec: RunSpec) -> dict[str, Any] | None:
    data = read_results(spec.results)
    if data and data.get("status") == "ok" and data.get("config_hash") == spec.config_hash and spec.output.is_file():
        return data
    return None


def chapter_runs(profile: str, names: Sequence[str]) -> list[Any]:
    """The runs (:class:`~transformer_theory.training.RunConfig`) that the training chapters among ``names`` ask
    for under ``profile``: each experiment's runs for the profile's entry of its chapter, as the notebook and the
    ``train`` command get them, each run once (a run two parts of a chapter share is trained once)."""
    from transformer_theory.chapters import EXPERIMENTS

    entries = load_profile(profile)
    runs = [r.config for name in names if name in EXPERIMENTS for r in EXPERIMENTS[name].runs(entries.get(name, {}))]
    return list({run.key: run for run in runs}.values())


def train_chapters(profile: str, names: Sequence[str], n_workers: int | None = None,
                   runs: str | os.PathLike | None = None) -> dict[str, Any] | None:
    """Train the runs that the training chapters among ``names`` ask for under ``profile`` and that the run store
    lacks, as one sweep on a local Dask cluster of ``n_workers`` single-threaded workers (default: one per core;
    0: in this process), the costliest tasks first. A notebook alone would train what it misses in its own
    process, one task after another. The store is :func:`~transformer_theory.training.default_store`'s (a
    reproduction's fresh one: the folder ``runs``). Returns the runs,
    tasks, workers and wall time, or ``None`` when nothing was missing."""
    from transformer_theory.chapters import EXPERIMENTS
    from transformer_theory.training import default_store, plan_tasks, train_runs

    store = default_store(profile, runs)
    missing = [run for run in chapter_runs(profile, names) if store.get(run) is None]
    if not missing:
        return None
    tasks = plan_tasks(missing, MODELS_PER_TASK)
    workers = n_workers if n_workers is not None else os.cpu_count() or 1
    print(f"training {len(missing)} runs ({len(tasks)} tasks) of {', '.join(n for n in names if n in EXPERIMENTS)} "
          f"on {workers or 'no'} Dask workers ...", flush=True)
    start = time.perf_counter()
    train_runs(missing, store, n_workers=n_workers, models_per_task=MODELS_PER_TASK)
    return {"runs": len(missing), "tasks": len(tasks), "workers": workers,
            "wall_time_s": round(time.perf_counter() - start, 1),
            "finished_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")}


def notebook_names(notebooks: Sequence[str] | None = None) -> list[str]:
    """The chapters named (checked), or every chapter."""
    return [resolve_notebook(n).stem for n in notebooks] if notebooks else [p.stem for p in list_notebooks()]


def reproduce(profile: str, notebooks: Sequence[str] | None = None, folder: str | Path | None = None,
              run: bool = True, n_workers: int | None = None) -> list[Part]:
    """Run every notebook of ``notebooks`` (default: all) under ``profile`` into ``folder`` (default
    :func:`reproduce_folder`) with the fresh run store ``folder/runs``, printing each one's progress; complete
    ones are kept. Every notebook and path is checked before the first one runs; then the runs of the training
    chapters to run are trained (:func:`train_chapters` with ``n_workers``; its record in ``folder``).

    ``run=False`` runs nothing: the parts are the complete notebooks found in ``folder`` (``ValueError`` if a
    named one is missing, failed or stale there, or if there is none).
    """
    load_profile(profile)
    if n_workers is not None:
        non_negative_int("n_workers", n_workers)
    folder = Path(folder) if folder is not None else reproduce_folder(profile)
    specs = [_spec(name, profile, folder) for name in notebook_names(notebooks)]
    if not run:
        found = [(spec, _complete(spec)) for spec in specs]
        missing = [spec.name for spec, done in found if done is None]
        if notebooks and missing:
            raise ValueError(f"{', '.join(missing)}: no complete, current results in {folder}/results (run "
                             "`make reproduce` first)")
        parts = [Part(spec, False, done) for spec, done in found if done is not None]
        for name in missing:
            print(f"{name}: no complete, current results in {folder}/results, left out")
        if not parts:
            raise ValueError(f"no complete, current results in {folder}/results: run `make reproduce` first")
        return parts
    parts = []
    runs = (folder / "runs").resolve()
    training = train_chapters(profile, [spec.name for spec in specs if _complete(spec) is None], n_workers, runs)
    if training is not None:
        write_text_atomic(folder / TRAINING_RECORD, json.dumps(training, indent=1))
    for spec in specs:
        done = _complete(spec)
        if done is not None:
            parts.append(Part(spec, False, done))
            print(f"{spec.name}: complete in {spec.results.parent}, kept ({done['wall_time_s']:.1f} s)")
            continue
        print(f"{spec.name}: running [{profile}] ...", flush=True)
        result = execute(spec, runs=runs)
        parts.append(Part(spec, True, result))
        print(f"{spec.name}: {result['status']} ({result['wall_time_s']:.1f} s)", flush=True)
    return parts


# --- comparison ----------------------------------------------------------------------------------------------

_MISSING = object()


def _leaves(value: Any, path: str) -> list[tuple[str, Any]]:
    """``(path, scalar)`` for every scalar inside ``value`` (lists by index, mappings by key)."""
    if isinstance(value, dict):
        return [leaf for key in value for leaf in _leaves(value[key], f"{path}.{key}")]
    if isinstance(value, list):
        return [leaf for i, item in enumerate(value) for leaf in _leaves(item, f"{path}[{i}]")]
    return [(path, value)]


def _number(value: Any) -> bool:
    return is_real(value) and math.isfinite(value)


def _show(value: Any) -> str:
    if value is _MISSING:
        return "missing"
    if _number(value) and not isinstance(value, int):
        return f"{value:.6g}"
    return str(value)


def ratio(committed: Any, recomputed: Any) -> str:
    """``recomputed / committed`` for two numbers (``"1 (equal)"`` when identical), else whether they agree."""
    if committed is _MISSING or recomputed is _MISSING:
        return "missing"
    if committed == recomputed and type(committed) is type(recomputed):
        return "1 (equal)"
    if _number(committed) and _number(recomputed):
        return f"{recomputed / committed:.6g}" if committed != 0 else "n/a (committed 0)"
    return "differs"


def _summary(pairs: list[tuple[Any, Any]]) -> str:
    """One cell for many leaves: the range of their ratios and how many differ."""
    differ = sum(1 for a, b in pairs if not (a == b and type(a) is type(b)))
    if not differ:
        return f"1 (all {len(pairs)} equal)"
    ratios = [b / a for a, b in pairs if _number(a) and _number(b) and a != 0]
    span = f"{min(ratios):.6g} to {max(ratios):.6g}, " if ratios else ""
    return f"{span}{differ} of {len(pairs)} differ"


def _brief(value: Any) -> str:
    if isinstance(value, (list, dict)):
        return f"{len(_leaves(value, ''))} values"
    return _show(value)


def value_rows(notebook: str, committed: dict[str, Any], recomputed: dict[str, Any]) -> list[dict[str, str]]:
    """Rows (notebook, value, committed, recomputed, ratio) for every recorded value of either side, one per
    scalar inside it; a value holding more than :data:`MAX_ROWS_PER_VALUE` scalars gets one summary row."""
    rows = []

    def row(value: str, old: str, new: str, cell: str) -> None:
        rows.append({"notebook": notebook, "value": value, "committed": old, "recomputed": new, "ratio": cell})

    for name in sorted(set(committed) | set(recomputed)):
        a, b = committed.get(name, _MISSING), recomputed.get(name, _MISSING)
        if a is _MISSING or b is _MISSING:
            row(name, _brief(a), _brief(b), "missing")
            continue
        left, right = dict(_leaves(a, name)), dict(_leaves(b, name))
        paths = list(left) + [p for p in right if p not in left]
        if len(paths) <= MAX_ROWS_PER_VALUE:
            for path in paths:
                old, new = left.get(path, _MISSING), right.get(path, _MISSING)
                row(path, _show(old), _show(new), ratio(old, new))
            continue
        pairs = [(left[p], right[p]) for p in paths if p in left and p in right]
        one_sided = len(paths) - len(pairs)
        row(f"{name} ({len(paths)} values)", _brief(a), _brief(b),
            _summary(pairs) + (f"; {one_sided} on one side only" if one_sided else ""))
    return rows


def _records(folder: Path) -> dict[str, dict[str, Any]]:
    """Run records below ``folder`` (relative path -> record), checkpoints left out; unreadable files skipped."""
    records = {}
    for path in sorted(folder.rglob("*.json")) if folder.is_dir() else []:
        relative = path.relative_to(folder)
        if _CHECKPOINTS in relative.parts:
            continue
        try:
            record = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if isinstance(record, dict):
            records[str(relative)] = record
    return records


def _run_numbers(record: dict[str, Any]) -> list[tuple[str, Any]]:
    """(label, number) of a run record: an engine run's best validation NMSE, or each Tikhonov stage's minimal
    loss."""
    config = record.get("config", {})
    if record.get("kind") == "tikhonov":  # chapter 05's runs (chapters.tikhonov_runs.KIND)
        frozen = f", frozen {config.get('frozen')}" if config.get("frozen") else ""
        out = []
        for stage, epochs in zip(record.get("stages", []), config.get("epochs", [])):
            losses = [v for v in stage.get("losses", []) if _number(v)]
            out.append((f"Tikhonov ε={stage.get('eps'):g}, {epochs} epochs{frozen}: min loss",
                        min(losses) if losses else None))
        return out
    model = config.get("model", {})
    label = (f"{config.get('target')} {config.get('target_args', {})}, heads {model.get('heads')}, "
             f"T={config.get('seq_len')}, FFN {model.get('ffn_width')}, seed {record.get('seed')}: best NMSE")
    return [(label, record.get("best_nmse"))]


def run_rows(committed: dict[str, dict], recomputed: dict[str, dict]) -> list[dict[str, str]]:
    """Rows (run, committed, recomputed, ratio) for every recomputed run record."""
    rows = []
    for path, record in recomputed.items():
        theirs = dict(_run_numbers(committed[path])) if path in committed else {}
        for label, value in _run_numbers(record):
            old = theirs.get(label, _MISSING)
            rows.append({"run": f"`{Path(path).stem[:8]}` {label}", "committed": _show(old),
                         "recomputed": _show(value), "ratio": ratio(old, value)})
    return rows


def _seconds(value: Any) -> str:
    return f"{value:.1f}" if _number(value) else "?"


def comparison_page(profile: str, parts: Sequence[Part], folder: str | Path | None = None) -> str:
    """Markdown: the time of each part, the recomputed key numbers against the committed ones, the runs."""
    folder = Path(folder) if folder is not None else reproduce_folder(profile)
    committed_folder = results_dir() / profile
    times, values = [], []
    for part in parts:
        committed = read_results(committed_folder / f"{part.spec.name}.json")
        old = committed.get("wall_time_s") if committed else None
        new = part.result.get("wall_time_s")
        status = part.result.get("status", "?") + ("" if part.ran else " (kept)")
        times.append({"part": part.spec.name, "status": status,
                      "recomputed (s)": _seconds(new), "committed (s)": _seconds(old),
                      "ratio": ratio(old, new) if _number(old) and _number(new) else "n/a"})
        values += value_rows(part.spec.name, (committed or {}).get("values", {}), part.result.get("values", {}))
    recomputed_runs = _records(folder / "runs")
    committed_runs = _records(committed_folder / "runs")
    tasks = {}
    for record in recomputed_runs.values():  # an engine task's time is in each of its runs' records: count it once
        key = record.get("task", {}).get("key") or record.get("key")
        tasks[key] = record.get("wall_time_s", 0.0) if _number(record.get("wall_time_s")) else 0.0
    total = sum(p.result.get("wall_time_s", 0.0) for p in parts if _number(p.result.get("wall_time_s")))
    training = read_results(folder / TRAINING_RECORD)
    if training:
        times.append({"part": f"training up front: {training.get('runs')} runs in {training.get('tasks')} tasks on "
                              f"{training.get('workers')} Dask workers", "status": "ok",
                      "recomputed (s)": _seconds(training.get("wall_time_s")), "committed (s)": "", "ratio": ""})
    times.append({"part": "**all notebooks**", "status": f"{sum(p.ok for p in parts)} of {len(parts)} ok",
                  "recomputed (s)": _seconds(total), "committed (s)": "", "ratio": ""})
    times.append({"part": f"training time of the runs ({len(tasks)} tasks, {len(recomputed_runs)} runs; summed over "
                          "workers)", "status": "", "recomputed (s)": _seconds(sum(tasks.values())),
                  "committed (s)": "", "ratio": ""})
    unused = sorted(set(committed_runs) - set(recomputed_runs))
    lines = [
        f"# Reproduction of the `{profile}` profile",
        "",
        f"Recomputed into `{folder}` (fresh run store `runs/`), compared with the committed "
        f"`results/{profile}/`. Ratios are recomputed / committed.",
        "",
        "## Time of each part",
        "",
        markdown_table(times),
        "",
        "## Key numbers of every chapter",
        "",
        markdown_table(values, ["notebook", "value", "committed", "recomputed", "ratio"]) if values else "(none)",
        "",
        "## Training runs",
        "",
        markdown_table(run_rows(committed_runs, recomputed_runs), ["run", "committed", "recomputed", "ratio"])
        if recomputed_runs else "(no run was trained)",
        "",
    ]
    if unused:
        lines += [f"{len(unused)} committed run records were not recomputed by these notebooks: "
                  + ", ".join(f"`{u}`" for u in unused[:10]) + (" ..." if len(unused) > 10 else ""), ""]
    return "\n".join(lines)


# --- accepting ------------------------------------------------------------------------------------------------


def _copy(source: Path, target: Path) -> None:
    write_file_atomic(target, lambda fh: fh.write(source.read_bytes()), binary=True)


def accept(profile: str, parts: Sequence[Part], folder: str | Path | None = None) -> list[Path]:
    """Copy the recomputed results JSONs of ``parts`` and every recomputed run record into ``results/<profile>/``
    (a run's weights only where the committed folder already keeps them); the files written.

    ``ValueError`` before anything is copied if a part did not finish ``ok`` or is no longer current (the code
    or the parameters changed since it ran).
    """
    folder = Path(folder) if folder is not None else reproduce_folder(profile)
    for part in parts:
        if not part.ok or _complete(part.spec) is None:
            raise ValueError(f"not accepted: {part.spec.name} did not finish ok with today's code and parameters "
                             f"({part.result.get('status')}); nothing was copied")
    target = results_dir() / profile
    written = []
    for part in parts:
        write_text_atomic(target / part.spec.results.name, part.spec.results.read_text())
        written.append(target / part.spec.results.name)
    runs = folder / "runs"
    for relative in _records(runs):
        _copy(runs / relative, target / "runs" / relative)
        written.append(target / "runs" / relative)
        weights = (runs / relative).with_suffix(".pt")
        if weights.is_file() and (target / "runs" / relative).with_suffix(".pt").is_file():
            _copy(weights, (target / "runs" / relative).with_suffix(".pt"))
            written.append((target / "runs" / relative).with_suffix(".pt"))
    return written
