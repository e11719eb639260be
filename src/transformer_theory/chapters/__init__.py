"""The book's training chapters (07 to 14), one module each, on the training engine of
:mod:`transformer_theory.training` (which knows no chapter), and chapter 05 (Paper A's Tikhonov experiment:
:mod:`.tikhonov`, its runs :mod:`.tikhonov_runs`, jobs of the engine's executor in the same run store).

* :mod:`.experiment` -- what a chapter's experiment is (:class:`~.experiment.Experiment`: named defaults that build
  tagged runs, and the chapter's protocol on them: ``runs``, ``predictions``, ``tables``, ``claims``), what a run's
  result is (:class:`~.experiment.RunResult`), the InfoFlow/P1 model every chapter trains and the statistic every
  chapter reports.
* one module per chapter: :mod:`.depth_separation` (07), :mod:`.max_position` (08), :mod:`.aggregation` (09),
  :mod:`.intrinsic_dimension` (10), :mod:`.triangle_center` (11), :mod:`.heldout` (12), :mod:`.calibration` (13),
  :mod:`.ablation` (14); :mod:`.predictions` writes the predictions chapters 08, 09 and 12 commit before training;
  :mod:`.parameters` holds what the frozen parameter dataclasses of the chapters share (each field's description
  included); :mod:`.computed` holds those of chapters 00 to 06, which train no experiment.
* :mod:`.registry` -- the chapters by notebook name (:data:`EXPERIMENTS`; :data:`PARAMETERS`, every chapter's
  parameters dataclass; :func:`experiment`, :func:`run_experiment`), and the registration of the targets they
  train on (done on import of this package, so wherever a chapter's runs are built).
"""

from transformer_theory.chapters.experiment import RunResult
from transformer_theory.chapters.registry import EXPERIMENTS, PARAMETERS, best_over_seeds, experiment, run_experiment

__all__ = ["EXPERIMENTS", "PARAMETERS", "RunResult", "best_over_seeds", "experiment", "run_experiment"]
