"""The triangle-center experiment (InfoFlow §4.2, chapter ``11_triangle_center``).

Target ``min_{t1,t2,t3} ||x(t1) + x(t2) + x(t3)||`` (:func:`~transformer_theory.infoflow.targets.triangle_center`),
tokens ``x(t) ~ N(0, 2 I_2)`` with norms clamped to [0.2, 4]; two-layer models (h1, h2) with width E and
per-head dimension ``E / h1`` (the paper's E = n h): (2, 2) with E = 24, (4, 4) with E = 24 and (4, 4) with
E = 48, at every sequence length T. The paper's sizes are known; its steps, batch, seeds and data size are
not (ours: a fixed training set, the target computed once; more steps at the shortest T, where the model
learns, than at the longer ones, where it sits near NMSE 1 after a few hundred steps).
"""

from __future__ import annotations

from typing import Any

from transformer_theory.models.config import TransformerConfig
from transformer_theory.training.config import RunConfig
from transformer_theory.training.experiment import Experiment, ExperimentRun

#: The chapter's parameters (the notebook's parameters cell holds the same names and values).
DEFAULTS: dict[str, Any] = {
    "seq_lens": [8, 16, 32, 64],
    "configs": [[2, 2, 24], [4, 4, 24], [4, 4, 48]],  # (h1, h2, E), InfoFlow §4.2
    "steps": 6000,          # at the shortest sequence length
    "long_steps": 2000,     # at every longer one
    "squared": False,
    "seeds": [0],
    "batch_size": 256,
    "lr": 3e-3,
    "warmup": 200,
    "weight_decay": 1e-2,
    "train_size": 50_000,
    "val_size": 4096,
    "eval_every": 100,
    "ffn_width": 64,
    "encoder_width": 32,
}


def model(h1: int, h2: int, E: int, p: dict[str, Any]) -> TransformerConfig:
    """The InfoFlow model on d = 2 tokens: heads (h1, h2), width E, per-head dimension E / h1, no PE."""
    if E % h1:
        raise ValueError(f"configs: E = {E} is not a multiple of h1 = {h1} (per-head dimension E / h1)")
    return TransformerConfig(d=2, heads=(h1, h2), embed_dim=E, head_dim=E // h1, ffn_width=p["ffn_width"],
                             encoder_width=p["encoder_width"], cls_token=True, readout_dim=1, cls_only_last=True)


def runs(p: dict[str, Any]) -> list[ExperimentRun]:
    """Every (configuration, T, seed) run, tagged ``h1, h2, E, T, seed``."""
    out = []
    shortest = min(p["seq_lens"])
    for T in p["seq_lens"]:
        for h1, h2, E in p["configs"]:
            for seed in p["seeds"]:
                run = RunConfig(model=model(h1, h2, E, p), target="triangle_center",
                                target_args={"squared": p["squared"]}, seq_len=T,
                                steps=p["steps"] if T == shortest else p["long_steps"], batch_size=p["batch_size"],
                                lr=p["lr"], warmup=p["warmup"], weight_decay=p["weight_decay"],
                                train_size=p["train_size"], val_size=p["val_size"], eval_every=p["eval_every"],
                                seed=seed)
                out.append(ExperimentRun({"h1": h1, "h2": h2, "E": E, "T": T, "seed": seed}, run))
    return out


EXPERIMENT = Experiment("11_triangle_center", DEFAULTS, runs)
