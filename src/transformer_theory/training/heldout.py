"""The training runs of chapter 12: every held-out configuration of :mod:`transformer_theory.infoflow.heldout`.

One run per (configuration, embedding dimension, sequence length, seed). The model is the InfoFlow/P1 model
of :mod:`transformer_theory.models` (Yu et al. 2026, §4; the predecessor's eq. 4) with exactly the
architecture the prediction was made for: the configuration's heads per layer, width ``E``, per-head
dimension ``n = E / max_l h_l`` (the predecessor's ``E = n h`` in the widest layer), learned absolute
positional encoding where the architecture has it (InfoFlow §4.4) and none otherwise, a CLS token read out
linearly. The target is the configuration's own tree, sampled from its own input distribution (Gaussian
tokens, or :class:`~transformer_theory.infoflow.trees.PointerCycleInputs` for the pointer chases).

``followups`` are extra runs for diagnosing a disagreement (more seeds, or a longer schedule) after the
scoreboard was drawn: they are tagged ``followup`` and never enter the scoreboard, whose statistic and
criterion were fixed before training (:data:`~transformer_theory.infoflow.heldout.CRITERION`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from transformer_theory.checks import positive_int, seed_value
from transformer_theory.infoflow.heldout import HeldOut, configurations
from transformer_theory.models.config import TransformerConfig
from transformer_theory.training.config import RunConfig

__all__ = ["selected", "heldout_runs"]


def selected(names: Sequence[str]) -> list[HeldOut]:
    """The configurations called ``names`` in the suite's order (all of them for an empty list)."""
    suite = configurations()
    known = {c.name for c in suite}
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ValueError(f"configurations: unknown held-out configuration {unknown[0]!r}; valid: {', '.join(known)}")
    return [c for c in suite if not names or c.name in names]


def model_config(config: HeldOut, embed_dim: int, seq_len: int, p: dict[str, Any]) -> TransformerConfig:
    """The model the prediction for ``config`` at width ``embed_dim`` was made for."""
    return TransformerConfig(d=4, heads=config.heads, embed_dim=embed_dim, head_dim=embed_dim // max(config.heads),
                             ffn_width=p["ffn_width"], encoder_width=p["encoder_width"],
                             max_len=seq_len if config.positional else None, cls_token=True, readout_dim=1,
                             cls_only_last=True)


def _run(config: HeldOut, embed_dim: int, seq_len: int, seed: int, steps: int, p: dict[str, Any]) -> RunConfig:
    return RunConfig(model=model_config(config, embed_dim, seq_len, p), target=config.target_name,
                     target_args=dict(config.target_args), seq_len=seq_len, steps=steps, batch_size=p["batch_size"],
                     lr=p["lr"], warmup=p["warmup"], weight_decay=p["weight_decay"], train_size=p["train_size"],
                     val_size=p["val_size"], eval_every=p["eval_every"], seed=seed)


def _followups(p: dict[str, Any]) -> list[tuple[HeldOut, list[int], int]]:
    out = []
    for i, entry in enumerate(p["followups"]):
        if not isinstance(entry, (list, tuple)) or len(entry) != 3 or not isinstance(entry[1], (list, tuple)):
            raise ValueError(f"followups[{i}] must be [configuration name, [seeds], steps], got {entry!r}")
        name, seeds, steps = entry
        (config,) = selected([name])
        out.append((config, [seed_value(s) for s in seeds], positive_int(f"followups[{i}] steps", steps)))
    return out


def heldout_runs(p: dict[str, Any]) -> list[tuple[dict[str, Any], RunConfig]]:
    """``(tags, run)`` for the scoreboard's runs (every selected configuration, width, length and seed at
    ``steps``) and then the follow-ups (tagged ``followup: True``)."""
    seeds = [seed_value(s) for s in p["seeds"]]
    if len(seeds) < 2:
        raise ValueError(f"seeds: the observation criterion takes the best of at least 2 seeds, got {seeds}")
    plan = [(c, seeds, positive_int("steps", p["steps"]), False) for c in selected(p["configurations"])]
    plan += [(c, s, steps, True) for c, s, steps in _followups(p)]
    runs = []
    for config, seeds_, steps, followup in plan:
        for E in config.model_sizes or (config.embed_dim,):
            for T in config.seq_lens:
                for seed in seeds_:
                    tags = {"name": config.name, "target": config.target().name, "heads": list(config.heads),
                            "E": E, "T": T, "steps": steps, "seed": seed, "followup": followup}
                    runs.append((tags, _run(config, E, T, seed, steps, p)))
    return runs
