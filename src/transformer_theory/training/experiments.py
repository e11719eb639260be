"""The training experiments of the book, named after their chapter notebooks.

An experiment turns its parameters (the same names and values as the chapter's ``parameters`` cell,
filled from the profile entry of that name in ``params/<profile>.yaml``) into a list of runs, each with
the tags a chapter tabulates. The CLI (``python -m transformer_theory train NAME --profile P``) and the
notebook therefore train exactly the same runs and share one run store.

* ``07_depth_separation`` -- InfoFlow's Theorem 1 (Yu et al. 2026): the minimum pairwise dot product
  ``min_{s≠t} x(s)ᵀx(t)``, d = 4, one layer with h ∈ {1, 2, 4} heads against two layers with one head
  each, over sequence lengths T, and over the FFN width at one T. The paper's text shows no such
  experiment: this one is the project's own.
* ``10_intrinsic_dimension`` -- InfoFlow §4.1: ``Σ_{i≤D} max_{s,t} x(s)ᵀ A_i x(t)``, d = 4, two layers
  with (h1, h2) ∈ {(D, D), (D−1, D), (D, D−1)}, per-head dimension n, width E = n·D.
* ``08_max_position_retrieval``, ``09_aggregation_cost``, ``11_triangle_center`` -- InfoFlow Theorem 2 and
  §4.3, Theorem 3 and §4.4, §4.2: their run lists live in :mod:`.max_position`, :mod:`.aggregation` and
  :mod:`.triangle_center`.

Every model is the InfoFlow/P1 model of :mod:`transformer_theory.models`: a two-layer ReLU encoder,
a CLS token, no positional encoding, no LayerNorm, residual GeLU FFNs and a linear CLS readout (the
last layer computes only the CLS query).
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from transformer_theory.models.config import TransformerConfig
from transformer_theory.pipeline.results import current_profile
from transformer_theory.training import aggregation, max_position, triangle_center
from transformer_theory.training.config import RunConfig
from transformer_theory.training.distributed import train_runs
from transformer_theory.training.store import RunStore, default_store
from transformer_theory.training.tasks import TrainOptions

#: Training settings shared by the experiments (InfoFlow §4 with the sizes measured on CPU).
TRAINING_DEFAULTS: dict[str, Any] = {
    "steps": 8000,
    "batch_size": 256,
    "lr": 3e-3,
    "warmup": 200,
    "weight_decay": 1e-2,
    "train_size": 100_000,  # S1: "tens to hundreds of thousands" of i.i.d. training samples
    "val_size": 4096,
    "eval_every": 100,
    "seeds": [0, 1],
    "ffn_width": 64,
    "encoder_width": 32,
}


@dataclass(frozen=True)
class ExperimentRun:
    """One run of an experiment and the tags a chapter tabulates it by (``layers``, ``heads``, ``T``, ...)."""

    tags: dict[str, Any]
    config: RunConfig


@dataclass(frozen=True)
class Experiment:
    name: str
    defaults: dict[str, Any]
    build: Callable[[dict[str, Any]], list[ExperimentRun]]

    def parameters(self, values: dict[str, Any] | None = None) -> dict[str, Any]:
        """The defaults overridden by ``values``; an unknown name raises ``ValueError``."""
        values = dict(values or {})
        unknown = sorted(set(values) - set(self.defaults))
        if unknown:
            hint = difflib.get_close_matches(unknown[0], list(self.defaults), n=1)
            raise ValueError(f"experiment {self.name!r}: unknown parameter {unknown[0]!r}"
                             + (f" (did you mean {hint[0]!r}?)" if hint else "")
                             + f"; valid: {', '.join(self.defaults)}")
        return {**self.defaults, **values}

    def runs(self, values: dict[str, Any] | None = None) -> list[ExperimentRun]:
        return self.build(self.parameters(values))


def _model(p: dict[str, Any], heads: Sequence[int], embed_dim: int, head_dim: int, ffn_width: int) -> TransformerConfig:
    return TransformerConfig(d=4, heads=tuple(heads), embed_dim=embed_dim, head_dim=head_dim, ffn_width=ffn_width,
                             encoder_width=p["encoder_width"], cls_token=True, readout_dim=1, cls_only_last=True)


def _run(p: dict[str, Any], model: TransformerConfig, target: str, target_args: dict, seq_len: int,
         seed: int) -> RunConfig:
    return RunConfig(model=model, target=target, target_args=target_args, seq_len=seq_len, steps=p["steps"],
                     batch_size=p["batch_size"], lr=p["lr"], warmup=p["warmup"], weight_decay=p["weight_decay"],
                     train_size=p["train_size"], val_size=p["val_size"], eval_every=p["eval_every"], seed=seed)


def _depth_separation(p: dict[str, Any]) -> list[ExperimentRun]:
    configs = [(1, (h,)) for h in p["one_layer_heads"]] + [(2, tuple(p["two_layer_heads"]))]
    grid = [(T, p["ffn_width"]) for T in p["seq_lens"]]
    grid += [(p["width_seq_len"], w) for w in p["ffn_widths"] if (p["width_seq_len"], w) not in grid]
    runs = []
    for T, width in grid:
        for layers, heads in configs:
            model = _model(p, heads, p["embed_dim"], p["head_dim"], width)
            for seed in p["seeds"]:
                tags = {"layers": layers, "heads": list(heads), "T": T, "ffn_width": width, "seed": seed}
                runs.append(ExperimentRun(tags, _run(p, model, "min_pairwise_dot", {"d": 4}, T, seed)))
    return runs


def _intrinsic_dimension(p: dict[str, Any]) -> list[ExperimentRun]:
    runs = []
    for D in p["D_values"]:
        for h1, h2 in ((D, D), (D - 1, D), (D, D - 1)):
            model = _model(p, (h1, h2), p["head_dim"] * D, p["head_dim"], p["ffn_width"])
            for seed in p["seeds"]:
                tags = {"D": D, "h1": h1, "h2": h2, "T": p["seq_len"], "seed": seed}
                args = {"D": D, "d": 4, "seed": p["target_seed"]}
                runs.append(ExperimentRun(tags, _run(p, model, "pairwise_max", args, p["seq_len"], seed)))
    return runs


EXPERIMENTS: dict[str, Experiment] = {
    "07_depth_separation": Experiment("07_depth_separation", {
        **TRAINING_DEFAULTS, "steps": 3000, "seq_lens": [8, 16, 32], "one_layer_heads": [1, 2, 4],
        "two_layer_heads": [1, 1], "embed_dim": 32, "head_dim": 8, "ffn_widths": [16, 32, 64, 128],
        "width_seq_len": 16,
    }, _depth_separation),
    "10_intrinsic_dimension": Experiment("10_intrinsic_dimension", {
        **TRAINING_DEFAULTS, "D_values": [2, 3, 4, 5, 6], "seq_len": 16, "head_dim": 16, "target_seed": 0,
    }, _intrinsic_dimension),
    "08_max_position_retrieval": Experiment("08_max_position_retrieval", max_position.DEFAULTS, max_position.runs),
    "09_aggregation_cost": Experiment("09_aggregation_cost", aggregation.DEFAULTS, aggregation.runs),
    "11_triangle_center": Experiment("11_triangle_center", triangle_center.DEFAULTS, triangle_center.runs),
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


def best_over_seeds(results: Sequence[tuple[dict[str, Any], dict[str, Any]]]) -> list[dict[str, Any]]:
    """One row per configuration (the tags without ``seed``): the minimum over seeds of the best validation
    NMSE (the statistic InfoFlow and its predecessor report), with the seeds' values beside it."""
    rows: dict[str, dict[str, Any]] = {}
    for tags, record in results:
        config = {k: v for k, v in tags.items() if k != "seed"}
        row = rows.setdefault(repr(sorted(config.items())), {**config, "seed_nmse": {}})
        row["seed_nmse"][tags.get("seed")] = record["best_nmse"]
    for row in rows.values():
        finite = [v for v in row["seed_nmse"].values() if v is not None]
        row["nmse"] = min(finite) if finite else None
    return list(rows.values())
