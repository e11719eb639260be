"""Training of the torch models: the engine (batched, resumable, distributed training of the model family on
registered targets). The book's chapters that train, which use the engine, are :mod:`transformer_theory.chapters`
(chapter 05's Tikhonov runs among them); the engine imports none of them.

* :class:`~.context.Context` -- what a chapter runs in: profile, run store, recorder of its key numbers.
* :class:`RunConfig` -- one run (model, target, sizes, optimiser, seed); its ``key`` names it in a store.
* :func:`register_targets` -- the targets runs can name (:mod:`.registry`; the chapters register theirs).
* :func:`train_runs` -- the records of a list of runs: reused from a :class:`RunStore`, otherwise trained
  as batched tasks, jobs of ``run_jobs``, in this process or on a Dask cluster (:mod:`.distributed`).
* :func:`~transformer_theory.training.jobs.run_jobs` -- the one executor of independent jobs (:mod:`.jobs`): the
  engine's tasks and jobs of one record, such as chapter 05's runs (kept in the same run store).
* :func:`train_task` -- one task: K models in one tensor program (:class:`Ensemble`), AdamW with
  warm-up and cosine schedule, validation NMSE, checkpoints, progress (:mod:`.trainer`).
"""

from transformer_theory.training.config import ENGINE_VERSION, RunConfig
from transformer_theory.training.context import Context
from transformer_theory.training.distributed import train_runs
from transformer_theory.training.ensemble import Ensemble, init_model
from transformer_theory.training.registry import register_targets
from transformer_theory.training.store import RunStore, default_store
from transformer_theory.training.tasks import Task, TrainOptions, plan_tasks
from transformer_theory.training.trainer import train_task

__all__ = [
    "ENGINE_VERSION", "Context", "Ensemble", "RunConfig", "RunStore", "Task", "TrainOptions", "default_store",
    "init_model", "plan_tasks", "register_targets", "train_runs", "train_task",
]
