"""Tasks: the runs trained together in one tensor program, and how to execute them.

The plan depends only on the runs and ``models_per_task`` (never on the executor), so the serial path
and every Dask cluster train the same tasks and get the same numbers. Batching runs changes the
floating-point rounding of a run's matrix products slightly, so a run's numbers are reproduced
exactly within the same task and to float rounding otherwise.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass

import torch

from transformer_theory.checks import is_integer, one_of, positive_int
from transformer_theory.models.transformer import Transformer
from transformer_theory.training.config import RunConfig

DEVICES = ("cpu", "cuda")


@dataclass(frozen=True)
class TrainOptions:
    """How a task is executed (not part of a run's key; recorded in its result).

    ``device``: ``"cpu"`` or ``"cuda"`` (an error if CUDA is not available). ``compile``: wrap the loss
    in ``torch.compile`` (faster for long runs, a one-off compilation cost; rounding differs slightly).
    ``threads``: torch's intra-op threads for the task (``None``: leave as is). Checkpoints are written
    every ``checkpoint_every_s`` seconds and, if given, every ``checkpoint_every_steps`` steps.
    ``progress``: a tqdm bar with steps, validation NMSE and ETA. ``save_weights``: keep each trained
    model's parameters in the store.
    """

    device: str = "cpu"
    compile: bool = False
    threads: int | None = None
    checkpoint_every_s: float = 120.0
    checkpoint_every_steps: int | None = None
    progress: bool = True
    save_weights: bool = True

    def __post_init__(self) -> None:
        one_of("device", self.device, DEVICES)
        if self.device == "cuda" and not torch.cuda.is_available():
            raise ValueError("device='cuda' was asked for but CUDA is not available")
        if not isinstance(self.compile, bool):
            raise ValueError(f"compile must be True or False, got {self.compile!r}")
        if self.threads is not None:
            positive_int("threads", self.threads)
        if not self.checkpoint_every_s > 0:
            raise ValueError(f"checkpoint_every_s must be positive, got {self.checkpoint_every_s!r}")
        if self.checkpoint_every_steps is not None:
            positive_int("checkpoint_every_steps", self.checkpoint_every_steps)


@dataclass(frozen=True)
class Task:
    """Runs of one batch signature, trained together."""

    runs: tuple[RunConfig, ...]

    @property
    def keys(self) -> list[str]:
        """The keys of the task's runs, in order."""
        return [r.key for r in self.runs]

    def key(self, options: TrainOptions) -> str:
        """Names the task's checkpoint: its runs and the options that change its numbers."""
        blob = json.dumps({"runs": self.keys, "device": options.device, "compile": options.compile})
        return hashlib.sha256(blob.encode()).hexdigest()[:20]

    @property
    def cost(self) -> int:
        """A proxy for the run time, by which the longest tasks are started first: per run, steps × samples ×
        tokens × parameters (the multiply-adds of a step grow with the last three)."""
        return sum(r.steps * step_size(r) for r in self.runs)


def step_size(run: RunConfig) -> int:
    """Samples × tokens (CLS included) × parameters of one training step of ``run``."""
    with torch.device("meta"):  # shapes only: nothing is allocated or initialised
        parameters = Transformer(run.model).num_parameters()
    return run.batch_size * (run.seq_len + 1) * parameters


def plan_tasks(runs: Sequence[RunConfig], models_per_task: int | None = None) -> list[Task]:
    """Group ``runs`` by batch signature (in order of first appearance), each group split into chunks of
    at most ``models_per_task`` runs (``None``: the whole group). Duplicate runs are trained once."""
    if models_per_task is not None:
        positive_int("models_per_task", models_per_task)
    groups: dict[str, list[RunConfig]] = {}
    seen: set[str] = set()
    for run in runs:
        if not isinstance(run, RunConfig):
            raise ValueError(f"runs must be RunConfig objects, got {type(run).__name__}")
        if run.key in seen:
            continue
        seen.add(run.key)
        groups.setdefault(run.batch_signature(), []).append(run)
    size = models_per_task
    tasks = []
    for group in groups.values():
        step = size if is_integer(size) else len(group)
        tasks.extend(Task(tuple(group[i:i + step])) for i in range(0, len(group), step))
    return tasks
