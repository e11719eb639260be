"""Checkpoints of a training task, written atomically and trusted only when they match the task.

A checkpoint holds everything a resumed task needs to continue exactly as if it had never stopped
(as nanoGPT's ``train.py`` saves model, optimiser, iteration and best validation loss): the stacked
parameters, the optimiser state, the step (which fixes the schedule), the data streams' and torch's
RNG states, the metric history and the training time so far.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import torch

from transformer_theory.storage.results import write_file_atomic
from transformer_theory.training.config import ENGINE_VERSION

#: Version of the checkpoint layout (independent of the training semantics in ``ENGINE_VERSION``).
CHECKPOINT_FORMAT = 1


def save_checkpoint(path: str | os.PathLike, task_key: str, state: dict[str, Any]) -> None:
    """Write ``state`` for ``task_key`` to ``path`` atomically (temporary file, fsync, rename).

    Args:
        path: The checkpoint file (:meth:`~transformer_theory.training.store.RunStore.checkpoint_path`).
        task_key: The task's key (:meth:`~transformer_theory.training.tasks.Task.key`): only that task reads it.
        state: What the trainer resumes from (parameters, optimiser, step, data and RNG states, history, time).
    """
    payload = {"format": CHECKPOINT_FORMAT, "engine_version": ENGINE_VERSION, "task": task_key, **state}
    write_file_atomic(path, lambda fh: torch.save(payload, fh), binary=True)


def load_checkpoint(path: str | os.PathLike, task_key: str) -> dict[str, Any] | None:
    """The state saved for ``task_key`` at ``path``; ``None`` if it is missing, unreadable, of another
    format, engine version or task (such a checkpoint is ignored and the task starts afresh)."""
    try:
        payload = torch.load(Path(path), map_location="cpu", weights_only=True)
    except FileNotFoundError:
        return None
    except Exception:  # truncated or foreign file: never trusted
        return None
    if not isinstance(payload, dict):
        return None
    if (payload.get("format"), payload.get("engine_version"), payload.get("task")) != (
            CHECKPOINT_FORMAT, ENGINE_VERSION, task_key):
        return None
    return payload
