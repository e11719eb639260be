"""The run store: one JSON record per finished run, named by the run's key, written atomically.

A record holds the run's full configuration, seed, metric history, best and final validation NMSE,
wall time, the task it was trained in, device and provenance (package versions, git commit,
platform). :meth:`RunStore.get` returns a record only if it is intact and matches the run exactly
(key, engine version, configuration, a consistent history, best step, wall time and task) and the weights
kept beside it (``<key>.pt``), if any, are readable; a corrupt, truncated, stale or foreign file counts as
missing, so the run is trained again. A run whose trained model a chapter reads needs its weights: without
readable ones its record counts as missing too (``get(run, weights=True)``). Unfinished tasks keep their
checkpoints in ``checkpoints/``.

Locations: ``build/runs/<profile>/`` by default; the committed book-profile runs live in
``results/<profile>/runs/`` and are read first (:func:`default_store`); a folder given instead replaces both
(``make reproduce`` trains into a fresh store). :class:`RecordStore` is the same store for
records of any kind, and keeps the results of jobs of one record for
:func:`~transformer_theory.training.jobs.run_jobs` (chapter 05's runs of
:mod:`~transformer_theory.chapters.tikhonov_runs`: a :class:`RunStore` keeps them beside the engine's runs, keyed
with the same :data:`~transformer_theory.training.config.ENGINE_VERSION`).
"""

from __future__ import annotations

import json
import math
import os
import zipfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from transformer_theory.storage.paths import run_store_folders
from transformer_theory.storage.results import write_json_atomic
from transformer_theory.training.config import ENGINE_VERSION, RunConfig
from transformer_theory.training.jobs import StoredJob

if TYPE_CHECKING:  # torch is imported where weights are read or written: reading records needs none
    import torch

    from transformer_theory.models.transformer import Transformer


def _is_nmse(value: Any) -> bool:
    return value is None or (isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
                             and value >= 0)


def valid_record(record: Any, run: RunConfig) -> bool:
    """Whether ``record`` is an intact result of exactly ``run`` under this engine version."""
    try:
        if record["key"] != run.key or record["engine_version"] != ENGINE_VERSION:
            return False
        if record["config"] != run.to_dict() or record["seed"] != run.seed:
            return False
        history = record["history"]
        steps, nmse, loss = history["step"], history["val_nmse"], history["train_loss"]
        if not steps or not len(steps) == len(nmse) == len(loss) or steps[-1] != run.steps:
            return False
        if not all(_is_nmse(v) for v in nmse) or not all(_is_nmse(v) for v in loss):
            return False
        finite = [(v, s) for v, s in zip(nmse, steps) if v is not None]
        best, best_step = min(finite) if finite else (None, None)
        if record["best_nmse"] != best or record["best_step"] != best_step or record["final_nmse"] != nmse[-1]:
            return False
        wall, task = record["wall_time_s"], record["task"]
        return _is_nmse(wall) and wall is not None and isinstance(task["key"], str) and run.key in task["runs"]
    except (KeyError, TypeError, IndexError):
        return False


def readable_weights(path: Path) -> bool:
    """Whether ``path`` is an intact weights file (a zip archive, as ``torch.save`` writes, whose every member
    passes its CRC check): a truncated or damaged file is not."""
    try:
        with zipfile.ZipFile(path) as archive:
            return archive.testzip() is None
    except (OSError, zipfile.BadZipFile, EOFError):
        return False


class RecordStore:
    """JSON records named by their key under ``root`` (written there, atomically); ``read_also`` are further
    folders searched first, read-only. A record counts only if it is a JSON object that passes the caller's
    check: a corrupt, truncated, stale or foreign file counts as missing."""

    def __init__(self, root: str | os.PathLike, read_also: Sequence[str | os.PathLike] = ()) -> None:
        self.root = Path(root)
        self.read_also = [Path(p) for p in read_also]

    def record_path(self, key: str, root: Path | None = None) -> Path:
        """The file of record ``key`` in the folder ``root`` (default: the store's own)."""
        return (root or self.root) / f"{key}.json"

    def read_from(self, root: Path, key: str, valid: Callable[[dict[str, Any]], bool]) -> dict[str, Any] | None:
        """The record named ``key`` in the folder ``root`` if it is a JSON object for which ``valid`` holds.

        Args:
            root: The folder to read.
            key: The record's name.
            valid: The caller's check of the parsed record (e.g. that it belongs to exactly this run).

        Returns:
            The record, or ``None`` (missing, unreadable, not an object, or refused by ``valid``).
        """
        try:
            record = json.loads(self.record_path(key, root).read_text())
        except (OSError, ValueError):
            return None
        return record if isinstance(record, dict) and valid(record) else None

    def read(self, key: str, valid: Callable[[dict[str, Any]], bool]) -> dict[str, Any] | None:
        """The first record named ``key`` (``read_also`` first, then ``root``) for which ``valid`` holds, or ``None``."""
        for root in [*self.read_also, self.root]:
            record = self.read_from(root, key, valid)
            if record is not None:
                return record
        return None

    def write(self, key: str, record: dict[str, Any]) -> None:
        """Write ``record`` as ``<key>.json`` in the store's own folder, atomically."""
        write_json_atomic(self.record_path(key), record)

    def result(self, job: StoredJob) -> dict[str, Any] | None:
        """The record of ``job`` (under its key, checked by its ``valid``), or ``None``: a
        :class:`~transformer_theory.training.jobs.JobStore` of jobs of one record."""
        return self.read(job.key, job.valid)

    def keep(self, job: StoredJob, record: dict[str, Any]) -> None:
        """Write the record that ``job`` returned under its key (``RuntimeError`` if ``valid`` refuses it)."""
        if not job.valid(record):
            raise RuntimeError(f"job {job.key}: the run returned an inconsistent record; not stored")
        self.write(job.key, record)


class RunStore(RecordStore):
    """Records of :class:`RunConfig` runs (see the module docstring), with their weights and the tasks'
    checkpoints under ``root``."""

    def weights_path(self, key: str) -> Path:
        """Where the trained weights of run ``key`` are written (``<key>.pt``)."""
        return self.root / f"{key}.pt"

    def checkpoint_path(self, task_key: str) -> Path:
        """Where the unfinished task ``task_key`` keeps its checkpoint (``checkpoints/<task_key>.pt``)."""
        return self.root / "checkpoints" / f"{task_key}.pt"

    def _found(self, run: RunConfig, weights: bool) -> tuple[dict[str, Any], Path] | None:
        """The first valid record of ``run`` and its folder: weights beside it readable, or absent unless
        ``weights``."""
        for root in [*self.read_also, self.root]:
            path = root / f"{run.key}.pt"
            if (path.exists() or weights) and not readable_weights(path):
                continue
            record = self.read_from(root, run.key, lambda record: valid_record(record, run))
            if record is not None:
                return record, path
        return None

    def get(self, run: RunConfig, weights: bool = False) -> dict[str, Any] | None:
        """The stored record of ``run``, or ``None`` (absent, corrupt or stale, its weights unreadable, or, with
        ``weights``, not kept: train it again)."""
        found = self._found(run, weights)
        return found[0] if found else None

    def put(self, run: RunConfig, record: dict[str, Any], weights: dict[str, torch.Tensor] | None = None) -> None:
        """Store ``record`` (checked against ``run``) and optionally the trained ``weights``.

        Args:
            run: The run the record belongs to.
            record: Its result record (:func:`~transformer_theory.training.trainer.train_task`).
            weights: The trained model's ``state_dict`` (``None``: not kept).

        Raises:
            ValueError: ``record`` is not a valid record of ``run`` (:func:`valid_record`).
        """
        if not valid_record(record, run):
            raise ValueError(f"record for run {run.key} is inconsistent with the run; not stored")
        if weights is not None:
            import torch

            self.root.mkdir(parents=True, exist_ok=True)
            tmp = self.weights_path(run.key).with_suffix(".pt.tmp")
            torch.save(weights, tmp)
            os.replace(tmp, self.weights_path(run.key))
        self.write(run.key, record)

    def weights(self, run: RunConfig) -> dict[str, torch.Tensor] | None:
        """The trained parameters of ``run`` if they were kept beside a valid record (a model's ``state_dict``),
        else ``None``; ``ValueError`` naming the file if it cannot be loaded."""
        found = self._found(run, weights=True)
        if found is None:
            return None
        import torch

        try:
            return torch.load(found[1], map_location="cpu", weights_only=True)
        except Exception as exc:  # torch raises RuntimeError, pickle errors, ... for a damaged file
            raise ValueError(f"run {run.key}: cannot read its weights {found[1]}: {exc}") from None


def trained_model(run: RunConfig, store: RunStore) -> Transformer:
    """The trained model of ``run`` in eval mode, its weights read from ``store`` (``ValueError`` if they were
    not kept)."""
    weights = store.weights(run)
    if weights is None:
        folders = ", ".join(str(root) for root in [*store.read_also, store.root])
        raise ValueError(f"run {run.key}: no readable weights {run.key}.pt beside a valid record in {folders} "
                         "(train_runs with its key in with_weights trains it again)")
    from transformer_theory.models.transformer import Transformer

    model = Transformer(run.model)
    model.load_state_dict(weights)
    return model.eval()


def default_store(profile: str, runs: str | os.PathLike | None = None) -> RunStore:
    """``build/runs/<profile>/``, reading the committed ``results/<profile>/runs/`` first, or the folder ``runs``
    alone (see :func:`~transformer_theory.storage.paths.run_store_folders`)."""
    root, read_also = run_store_folders(profile, runs)
    return RunStore(root, read_also=read_also)
