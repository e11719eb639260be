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

import dataclasses
import json
import subprocess
from collections.abc import Sequence
from typing import Any

from transformer_theory.checks import positive_int, seed_value
from transformer_theory.infoflow.heldout import PREDICTIONS_FILE, HeldOut, configurations
from transformer_theory.models.config import TransformerConfig
from transformer_theory.pipeline.paths import project_root
from transformer_theory.training.experiment import (TRAINING_DEFAULTS, Experiment, ExperimentRun, experiment_run,
                                                    infoflow_model)

__all__ = ["DEFAULTS", "EXPERIMENT", "selected", "model_config", "heldout_runs", "committed_predictions",
           "best_nmse", "curve_summary", "task_wall_times", "commit_that_added", "is_ancestor"]

#: The chapter's parameters (the book profile's sizes; see ``params/*.yaml`` for the others): every
#: configuration of the suite (``configurations = []``), the seeds the criterion takes the best of, no follow-ups.
DEFAULTS: dict[str, Any] = {**TRAINING_DEFAULTS, "seeds": [0, 1], "steps": 2000, "configurations": [],
                            "followups": []}

Result = tuple[dict[str, Any], dict[str, Any]]


def selected(names: Sequence[str]) -> list[HeldOut]:
    """The configurations called ``names`` in the suite's order (all of them for an empty list)."""
    suite = configurations()
    known = {c.name for c in suite}
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ValueError(f"configurations: unknown held-out configuration {unknown[0]!r}; valid: {', '.join(known)}")
    return [c for c in suite if not names or c.name in names]


def model_config(config: HeldOut, embed_dim: int, seq_len: int, p: dict[str, Any]) -> TransformerConfig:
    """The model the prediction for ``config`` at width ``embed_dim`` was made for: the InfoFlow/P1 model with
    the configuration's heads, per-head dimension ``E / max_l h_l``, and learned positions up to ``seq_len``
    where the architecture is positional."""
    model = infoflow_model(p, config.heads, embed_dim, embed_dim // max(config.heads), p["ffn_width"])
    return dataclasses.replace(model, max_len=seq_len) if config.positional else model


def _followups(p: dict[str, Any]) -> list[tuple[HeldOut, list[int], int]]:
    out = []
    for i, entry in enumerate(p["followups"]):
        if not isinstance(entry, (list, tuple)) or len(entry) != 3 or not isinstance(entry[1], (list, tuple)):
            raise ValueError(f"followups[{i}] must be [configuration name, [seeds], steps], got {entry!r}")
        name, seeds, steps = entry
        (config,) = selected([name])
        out.append((config, [seed_value(s) for s in seeds], positive_int(f"followups[{i}] steps", steps)))
    return out


def heldout_runs(p: dict[str, Any]) -> list[ExperimentRun]:
    """The tagged runs: the scoreboard's runs (every selected configuration, width, length and seed at
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
                    model = model_config(config, E, T, p)
                    run = experiment_run({**p, "steps": steps}, model, config.target_name, dict(config.target_args),
                                         T, seed)
                    runs.append(ExperimentRun(tags, run))
    return runs


EXPERIMENT = Experiment("12_predictions_vs_training", DEFAULTS, heldout_runs)


def committed_predictions() -> dict[str, Any]:
    """The predictions document committed before any training (``results/book/12_predictions.json``)."""
    return json.loads((project_root() / PREDICTIONS_FILE).read_text())


def best_nmse(results: Sequence[Result]) -> dict[tuple[str, int, int], float | None]:
    """The statistic of the observation criterion for the scoreboard's runs (follow-ups left out): per
    ``(configuration, E, T)`` the minimum over seeds and checkpoints of the validation NMSE."""
    best: dict[tuple[str, int, int], float | None] = {}
    for tags, record in results:
        if tags["followup"]:
            continue
        key = (tags["name"], tags["E"], tags["T"])
        values = [v for v in (best.get(key), record["best_nmse"]) if v is not None]
        best[key] = min(values) if values else None
    return best


def curve_summary(record: dict[str, Any]) -> dict[str, Any]:
    """What a learning curve says about the training: the best NMSE and its step, the final NMSE, and
    ``late_gain``, the best NMSE of the first three quarters of the schedule over the best of all of it
    (about 1: it had settled; well above 1: it was still improving when the schedule ended)."""
    steps, nmse = record["history"]["step"], record["history"]["val_nmse"]
    total = record["config"]["steps"]
    early = [v for s, v in zip(steps, nmse) if v is not None and s <= 0.75 * total]
    best = record["best_nmse"]
    return {"best_nmse": best, "best_step": record["best_step"], "steps": total, "final_nmse": record["final_nmse"],
            "late_gain": (min(early) / best) if early and best else None}


def task_wall_times(results: Sequence[Result]) -> dict[str, float]:
    """Training wall time of every task (the runs trained together), by task key, in seconds."""
    return {record["task"]["key"]: record["wall_time_s"] for _, record in results}


def _git(*args: str) -> subprocess.CompletedProcess | None:
    try:
        return subprocess.run(["git", *args], cwd=project_root(), capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None


def commit_that_added(path: str) -> str | None:
    """The commit that added ``path`` (relative to the repository root) to the history; ``None`` without git."""
    out = _git("log", "--diff-filter=A", "--format=%H", "--", path)
    commits = out.stdout.split() if out is not None and out.returncode == 0 else []
    return commits[-1] if commits else None


def is_ancestor(first: str, second: str) -> bool | None:
    """Whether commit ``first`` precedes (or is) ``second`` in the history; ``None`` if git cannot tell."""
    out = _git("merge-base", "--is-ancestor", first, second)
    if out is None or out.returncode not in (0, 1):
        return None
    return out.returncode == 0
