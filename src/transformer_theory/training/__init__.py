"""Training of the torch models: the engine (batched, resumable, distributed training of the model family on
registered targets). The book's chapters that train, which use the engine, are :mod:`transformer_theory.chapters`
(chapter 05's Tikhonov runs among them); the engine imports none of them.

* :class:`~.context.Context` -- what a chapter runs in: profile, run store, recorder of its key numbers.
* :class:`RunConfig` -- one run (model, target, sizes, optimiser, seed); its ``key`` names it in a store.
* :func:`register_targets` -- the targets runs can name (:mod:`.registry`; the chapters register theirs).
* :class:`RunRecord` -- a finished run's record (its :class:`History`, the validation curve), typed (:mod:`.record`);
  the run store keeps it as JSON.
* :func:`train_runs` -- the records of a list of runs: reused from a :class:`RunStore`, otherwise trained
  as batched tasks, jobs of ``run_jobs``, in this process or on a Dask cluster (:mod:`.distributed`).
* :func:`~transformer_theory.training.jobs.run_jobs` -- the one executor of independent jobs (:mod:`.jobs`): the
  engine's tasks and jobs of one record, such as chapter 05's runs (kept in the same run store).
* :func:`train_task` -- one task: K models in one tensor program (:class:`Ensemble`), AdamW with
  warm-up and cosine schedule, validation NMSE, checkpoints, progress (:mod:`.trainer`).
"""

from __future__ import annotations

from transformer_theory.lazy import lazy_names

#: name -> module that defines it, loaded on first use (PEP 562, :mod:`transformer_theory.lazy`): a notebook's
#: context (:mod:`.context`, :mod:`.store`) does not pull in torch or Dask.
_NAMES = {
    "ENGINE_VERSION": "transformer_theory.training.config", "RunConfig": "transformer_theory.training.config",
    "Context": "transformer_theory.training.context", "train_runs": "transformer_theory.training.distributed",
    "Ensemble": "transformer_theory.training.ensemble", "init_model": "transformer_theory.training.ensemble",
    "initial_model": "transformer_theory.training.ensemble",
    "History": "transformer_theory.training.record", "RunRecord": "transformer_theory.training.record",
    "register_targets": "transformer_theory.training.registry", "RunStore": "transformer_theory.training.store",
    "default_store": "transformer_theory.training.store", "Task": "transformer_theory.training.tasks",
    "TrainOptions": "transformer_theory.training.tasks", "plan_tasks": "transformer_theory.training.tasks",
    "train_task": "transformer_theory.training.trainer",
}

__all__ = sorted(_NAMES)
__getattr__, __dir__ = lazy_names(__name__, _NAMES, globals())
