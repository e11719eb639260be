"""The training experiments of the book, named after their chapter notebooks.

An experiment (:class:`~transformer_theory.training.experiment.Experiment`) turns its parameters (the same
names and values as the chapter's ``parameters`` cell, filled from the profile entry of that name in
``params/<profile>.yaml``) into a list of runs, each with the tags a chapter tabulates. The CLI
(``python -m transformer_theory train NAME --profile P``) and the notebook therefore train exactly the
same runs and share one run store.

* ``07_depth_separation`` -- InfoFlow's Theorem 1 (Yu et al. 2026): the minimum pairwise dot product
  ``min_{s≠t} x(s)ᵀx(t)``, d = 4, one layer with h ∈ {1, 2, 4} heads against two layers with one head
  each, over sequence lengths T, and over the FFN width at one T. The paper's text shows no such
  experiment: this one is the project's own.
* ``10_intrinsic_dimension`` -- InfoFlow §4.1 and the single-layer head count of its predecessor, in
  :mod:`~transformer_theory.training.intrinsic_dimension`.
"""

from __future__ import annotations

import difflib
from typing import Any

from transformer_theory.pipeline.results import current_profile
from transformer_theory.training import intrinsic_dimension
from transformer_theory.training.distributed import train_runs
from transformer_theory.training.experiment import (TRAINING_DEFAULTS, Experiment, ExperimentRun, best_over_seeds,
                                                    experiment_run, infoflow_model)
from transformer_theory.training.store import RunStore, default_store
from transformer_theory.training.tasks import TrainOptions

__all__ = ["EXPERIMENTS", "best_over_seeds", "experiment", "run_experiment"]


def _depth_separation(p: dict[str, Any]) -> list[ExperimentRun]:
    configs = [(1, (h,)) for h in p["one_layer_heads"]] + [(2, tuple(p["two_layer_heads"]))]
    grid = [(T, p["ffn_width"]) for T in p["seq_lens"]]
    grid += [(p["width_seq_len"], w) for w in p["ffn_widths"] if (p["width_seq_len"], w) not in grid]
    runs = []
    for T, width in grid:
        for layers, heads in configs:
            model = infoflow_model(p, heads, p["embed_dim"], p["head_dim"], width)
            for seed in p["seeds"]:
                tags = {"layers": layers, "heads": list(heads), "T": T, "ffn_width": width, "seed": seed}
                runs.append(ExperimentRun(tags, experiment_run(p, model, "min_pairwise_dot", {"d": 4}, T, seed)))
    return runs


EXPERIMENTS: dict[str, Experiment] = {
    "07_depth_separation": Experiment("07_depth_separation", {
        **TRAINING_DEFAULTS, "steps": 3000, "seq_lens": [8, 16, 32], "one_layer_heads": [1, 2, 4],
        "two_layer_heads": [1, 1], "embed_dim": 32, "head_dim": 8, "ffn_widths": [16, 32, 64, 128],
        "width_seq_len": 16,
    }, _depth_separation),
    "10_intrinsic_dimension": intrinsic_dimension.EXPERIMENT,
}


def experiment(name: str) -> Experiment:
    """The experiment called ``name`` (``ValueError`` listing the valid names otherwise)."""
    if name not in EXPERIMENTS:
        hint = difflib.get_close_matches(name, list(EXPERIMENTS), n=1)
        raise ValueError(f"unknown experiment {name!r}" + (f" (did you mean {hint[0]!r}?)" if hint else "")
                         + f"; valid: {', '.join(EXPERIMENTS)}")
    return EXPERIMENTS[name]


def run_experiment(name: str, parameters: dict[str, Any] | None = None, *, profile: str | None = None,
                   store: RunStore | str | None = None, scheduler: str | None = None, n_workers: int | None = None,
                   options: TrainOptions = TrainOptions()) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """``(tags, record)`` for every run of experiment ``name`` with ``parameters``.

    ``profile`` (default: the profile the notebook runs under, :func:`~transformer_theory.pipeline.results.current_profile`)
    chooses the store.

    Records come from the store when present (``store``: a folder or :class:`RunStore`; default
    ``build/runs/<profile>/`` reading the committed ``results/<profile>/runs/`` first); missing runs
    are trained (see :func:`~transformer_theory.training.distributed.train_runs`) and stored.
    """
    runs = experiment(name).runs(parameters)
    if store is None:
        store = default_store(profile or current_profile())
    elif not isinstance(store, RunStore):
        store = RunStore(store)
    records = train_runs([r.config for r in runs], store, scheduler=scheduler, n_workers=n_workers, options=options)
    return [(r.tags, record) for r, record in zip(runs, records)]

