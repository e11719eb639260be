"""The learning-rate schedule: linear warm-up, then a half cosine (InfoFlow §4: cosine annealing)."""

from __future__ import annotations

import math

from transformer_theory.training.config import RunConfig


def learning_rate(run: RunConfig, step: int) -> float:
    """The learning rate of update ``step`` (0-based): ``lr·(step+1)/warmup`` during the warm-up, then
    from ``lr`` down to ``lr·min_lr_ratio`` at the last update along a half cosine."""
    if step < run.warmup:
        return run.lr * (step + 1) / run.warmup
    span = max(1, run.steps - 1 - run.warmup)
    progress = min(1.0, (step - run.warmup) / span)
    floor = run.lr * run.min_lr_ratio
    return floor + (run.lr - floor) * 0.5 * (1.0 + math.cos(math.pi * progress))
