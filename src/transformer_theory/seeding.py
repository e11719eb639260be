"""One seeding helper for every source of randomness the project uses."""

from __future__ import annotations

import random

import numpy as np
import torch


def seed_everything(seed: int) -> np.random.Generator:
    """Seed ``random``, NumPy's legacy global RNG and torch; return a fresh NumPy ``Generator``.

    Library code takes explicit ``numpy.random.Generator`` objects; this helper exists so that a
    notebook's single ``seed`` parameter also fixes code that uses the global RNGs (torch init).
    """
    if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    random.seed(int(seed))
    np.random.seed(int(seed) % 2**32)
    torch.manual_seed(int(seed))
    return np.random.default_rng(int(seed))
