"""Key numbers of a notebook run, written atomically to ``build/results/<profile>/<notebook>.json``.

Notebooks record them through their context's :class:`Recorder` (``context.record``, see
:class:`~transformer_theory.training.context.Context`); the runner (:mod:`transformer_theory.pipeline.runner`)
gives the kernel the file to write and completes it with the run's provenance (parameters, seed, versions, commit,
wall time, status) when papermill finishes.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Callable

import numpy as np


def to_jsonable(value: Any, *, where: str = "value") -> Any:
    """Convert NumPy scalars/arrays and tuples to plain JSON types; reject what JSON cannot hold.

    Args:
        value: The value to convert (dict keys become strings; NaN and infinities the strings ``"nan"``,
            ``"inf"``, ``"-inf"``; other numbers, such as fractions, floats).
        where: The value's name, for the message.

    Raises:
        TypeError: a value of a type JSON cannot hold.
    """
    if isinstance(value, (np.generic,)):
        value = value.item()
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return str(value)  # JSON has no NaN/inf; keep them readable rather than invalid
        return value
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v, where=f"{where}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, dict):
        return {str(k): to_jsonable(v, where=f"{where}[{k!r}]") for k, v in value.items()}
    try:  # fractions, decimals, torch scalars
        return float(value)
    except (TypeError, ValueError):
        raise TypeError(f"{where}: cannot record a value of type {type(value).__name__}") from None


def write_file_atomic(path: str | os.PathLike, write: Callable[[IO], Any], binary: bool = False) -> None:
    """Write ``path`` atomically: ``write(fh)`` fills a temporary file in the same folder (mode 0644), which is
    flushed, synced and renamed onto ``path``; on any error the temporary file is removed and ``path`` untouched.

    Args:
        path: The file to write (missing folders are created).
        write: Fills the open temporary file it is given.
        binary: Open the temporary file in binary mode.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, 0o644)  # mkstemp creates 0600
        with os.fdopen(fd, "wb" if binary else "w") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_text_atomic(path: str | os.PathLike, text: str) -> None:
    """Write ``text`` to ``path`` atomically (see :func:`write_file_atomic`)."""
    write_file_atomic(path, lambda fh: fh.write(text))


def write_json_atomic(path: str | os.PathLike, data: dict) -> None:
    """Write ``data`` as JSON to ``path`` atomically (see :func:`write_text_atomic`)."""
    write_text_atomic(path, json.dumps(data, indent=2, sort_keys=True) + "\n")


def partial_path(path: str | os.PathLike) -> Path:
    """Where a run writes ``path`` until it has finished (``<path>.partial``); see the runner."""
    path = Path(path)
    return path.with_name(path.name + ".partial")


def failed_path(path: str | os.PathLike) -> Path:
    """Where a failed run keeps ``path`` (``<path>.failed``), leaving the last good ``path`` as it was."""
    path = Path(path)
    return path.with_name(path.name + ".failed")


def read_results(path: str | os.PathLike) -> dict | None:
    """The results stored at ``path``, or ``None`` if the file is missing or not a valid results file.

    A corrupt or truncated file is treated as absent, so the run that should produce it is redone.
    """
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("values", {}), dict):
        return None
    return data


@dataclass(frozen=True)
class Recorder:
    """Where a notebook's key numbers go: ``values`` (this run's, in memory) and, when ``path`` is given (a run of
    ``python -m transformer_theory run``), that results file, each value added at once (atomically; the runner moves
    the file into place when the run ends). Meant for a chapter's key numbers, not for long metric histories
    (training runs keep those in the run store of :mod:`transformer_theory.training`)."""

    path: Path | None = None
    values: dict[str, Any] = field(default_factory=dict)

    def record(self, name: str, value: Any) -> Any:
        """Record a key number under ``name`` and return ``value`` unchanged (``ValueError`` for an empty name,
        ``TypeError`` for a value JSON cannot hold, see :func:`to_jsonable`). Each call rewrites the whole file."""
        if not isinstance(name, str) or not name.strip():
            raise ValueError(f"record: name must be a non-empty string, got {name!r}")
        clean = to_jsonable(value, where=f"record({name!r})")
        self.values[name] = clean
        if self.path is not None:
            data = read_results(self.path) or {}
            data.setdefault("values", {})[name] = clean
            write_json_atomic(self.path, data)
        return value
