"""The training experiments of the book, named after their chapter notebooks.

An experiment (:class:`~transformer_theory.chapters.experiment.Experiment`) turns its parameters (the same
names and values as the chapter's ``parameters`` cell, filled from the profile entry of that name in
``params/<profile>.yaml``) into a list of runs, each with the tags a chapter tabulates. The CLI
(``python -m transformer_theory train NAME --profile P``) and the notebook therefore train exactly the
same runs and share one run store. Every chapter implements one protocol on its parameters: ``runs``,
``predictions``, ``tables`` and ``claims`` (the verdicts it asserts, by name), which the notebook shows and records
and ``tests/test_committed_results.py`` checks on the committed runs through the same function.

* ``07_depth_separation`` -- InfoFlow's Theorem 1 (Yu et al. 2026), in
  :mod:`~transformer_theory.chapters.depth_separation`.
* ``10_intrinsic_dimension`` -- InfoFlow §4.1 and the single-layer head count of its predecessor, in
  :mod:`~transformer_theory.chapters.intrinsic_dimension`.
* ``08_max_position_retrieval``, ``09_aggregation_cost``, ``11_triangle_center`` -- InfoFlow Theorem 2 and
  §4.3, Theorem 3 and §4.4, §4.2, in :mod:`.max_position`, :mod:`.aggregation` and :mod:`.triangle_center`.
* ``12_predictions_vs_training`` -- the held-out suite of the InfoFlow calculator, in
  :mod:`~transformer_theory.chapters.heldout`: each configuration's target and architecture at its
  sequence lengths and model sizes, the scoreboard's seeds and diagnostic follow-ups.
* ``13_training_recipe`` -- the engine calibrated on the predecessor's head-count tables (P1 Tables 2 and 5), in
  :mod:`~transformer_theory.chapters.calibration`.
* ``14_mechanism_ablation`` -- the ablation of InfoFlow §4.1's two-layer recipe (its chapter comes with its runs), in
  :mod:`~transformer_theory.chapters.ablation`.

Importing this module registers the targets the chapters train on (:mod:`~transformer_theory.training.registry`):
the papers' targets of :mod:`~transformer_theory.infoflow.targets` and the held-out suite's own trees.
"""

from __future__ import annotations

import os
from typing import Any

from transformer_theory.chapters import (ablation, aggregation, calibration, computed, depth_separation, heldout,
                                         intrinsic_dimension, max_position, triangle_center)
from transformer_theory.checks import unknown_name
from transformer_theory.chapters.experiment import Experiment, RunResult, best_over_seeds
from transformer_theory.infoflow import heldout as heldout_suite
from transformer_theory.infoflow import targets
from transformer_theory.training.distributed import train_runs
from transformer_theory.training.registry import register_targets
from transformer_theory.training.store import RunStore
from transformer_theory.training.tasks import TrainOptions

# the names are part of the runs' keys: chapters 07 to 11 train on the papers' targets, chapter 12 on its own trees
register_targets({name: getattr(targets, name) for name in targets.__all__})
register_targets(heldout_suite.TREES)

EXPERIMENTS: dict[str, Experiment] = {
    "07_depth_separation": depth_separation.EXPERIMENT,
    "08_max_position_retrieval": max_position.EXPERIMENT,
    "09_aggregation_cost": aggregation.EXPERIMENT,
    "10_intrinsic_dimension": intrinsic_dimension.EXPERIMENT,
    "11_triangle_center": triangle_center.EXPERIMENT,
    "12_predictions_vs_training": heldout.EXPERIMENT,
    "13_training_recipe": calibration.EXPERIMENT,
    "14_mechanism_ablation": ablation.EXPERIMENT,
}

#: Every chapter's parameters dataclass, by notebook name: the single source of each parameter's default, type and
#: description (:func:`~transformer_theory.chapters.parameters.descriptions`), checked on construction.
PARAMETERS: dict[str, type] = {
    "00_overview": computed.OverviewParameters,
    "01_transformer_layers": computed.LayersParameters,
    "02_hardmax_interpolation": computed.HardmaxParameters,
    "03_softmax_interpolation": computed.SoftmaxParameters,
    "04_complexity": computed.ComplexityParameters,
    "05_tikhonov": computed.TikhonovParameters,
    "06_infoflow_framework": computed.InfoFlowFrameworkParameters,
    "07_depth_separation": depth_separation.DepthSeparationParameters,
    "08_max_position_retrieval": max_position.MaxPositionParameters,
    "09_aggregation_cost": aggregation.AggregationParameters,
    "10_intrinsic_dimension": intrinsic_dimension.IntrinsicDimensionParameters,
    "11_triangle_center": triangle_center.TriangleCenterParameters,
    "12_predictions_vs_training": heldout.HeldOutParameters,
    "13_training_recipe": calibration.CalibrationParameters,
    "14_mechanism_ablation": ablation.AblationParameters,
}


def experiment(name: str) -> Experiment:
    """The experiment called ``name`` (``ValueError`` listing the valid names otherwise)."""
    if name not in EXPERIMENTS:
        raise unknown_name("experiment", name, EXPERIMENTS)
    return EXPERIMENTS[name]


def run_experiment(name: str, parameters: dict[str, Any] | None = None, *, store: RunStore | str | os.PathLike,
                   scheduler: str | None = None, n_workers: int | None = None,
                   models_per_task: int | None = None, options: TrainOptions = TrainOptions()) -> list[RunResult]:
    """The :class:`~transformer_theory.chapters.experiment.RunResult` (tags and record) of every run of experiment
    ``name`` with ``parameters``.

    Records come from the store when present; missing runs are trained (see
    :func:`~transformer_theory.training.distributed.train_runs`) and stored.

    Args:
        name: The experiment's name (a chapter notebook's stem, :data:`EXPERIMENTS`).
        parameters: Overrides of the experiment's defaults (``None``: the defaults).
        store: A :class:`RunStore` (a notebook's ``context.store``: ``build/runs/<profile>/``, reading the
            committed ``results/<profile>/runs/`` first) or a folder.
        scheduler: The address of a running Dask scheduler to train the missing runs on.
        n_workers: Otherwise, the single-threaded workers of a local cluster (default: one per core); ``0``
            trains in this process.
        models_per_task: The most models batched into one task (:func:`~transformer_theory.training.plan_tasks`).
        options: How a task is executed (device, threads, checkpoints, progress).

    Returns:
        One :class:`~transformer_theory.chapters.experiment.RunResult` per run, in the order of the experiment's run
        list.
    """
    runs = experiment(name).runs(parameters)
    if not isinstance(store, RunStore):
        store = RunStore(store)
    records = train_runs([r.config for r in runs], store, scheduler=scheduler, n_workers=n_workers,
                         models_per_task=models_per_task, options=options,
                         with_weights={r.config.key for r in runs if r.weights})
    return [RunResult(r.tags, record) for r, record in zip(runs, records)]
