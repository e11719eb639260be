"""Datasets used by the chapters, tests and benchmarks.

``toy_dataset`` is the three-sequence example of the paper's Figs. 5, 6 and 9 (coordinates read off
the figures, spec §5); ``random_dataset`` draws datasets that satisfy the assumptions, optionally
with heavy token sharing between sequences.
"""

from __future__ import annotations

import numpy as np

from transformer_theory.interpolation.dataset import SequenceDataset


def toy_dataset() -> SequenceDataset:
    """Figs. 5, 6, 9: blue circles (n=5, m=1), green stars (n=4, m=2), orange triangles (n=3, m=1)."""
    inputs = [
        [(0, 1.5), (0, 0.25), (0, -0.25), (-1, -0.75), (1.25, -0.5)],
        [(0, 1.5), (0.4, 0), (-1, -0.75), (1.25, -0.5)],
        [(-1.5, 1.25), (1, 0.75), (0, 0.25)],
    ]
    targets = [[(2, 2)], [(-2, 0), (-0.57, -2.05)], [(2, -2)]]
    return SequenceDataset(inputs, targets)


def random_dataset(
    N: int,
    d: int,
    seed: int = 0,
    n_max: int = 6,
    m_max: int = 3,
    shared_pool: int | None = None,
    scale: float = 1.0,
) -> SequenceDataset:
    """N sequences of 1..n_max tokens in R^d (uniform in [−scale, scale]^d), 1..min(m_max, n_j) targets.

    With ``shared_pool = p`` every input is a random subset of one pool of p tokens (heavy sharing,
    nested sets); inputs that repeat an earlier set are redrawn.
    """
    rng = np.random.default_rng(seed)
    pool = rng.uniform(-scale, scale, size=(shared_pool, d)) if shared_pool else None
    inputs, targets, seen = [], [], set()
    while len(inputs) < N:
        if pool is not None:
            n = int(rng.integers(1, min(n_max, len(pool)) + 1))
            idx = rng.choice(len(pool), size=n, replace=False)
            if frozenset(idx.tolist()) in seen:
                continue
            seen.add(frozenset(idx.tolist()))
            x = pool[idx]
        else:
            x = rng.uniform(-scale, scale, size=(int(rng.integers(1, n_max + 1)), d))
        m = int(rng.integers(1, min(m_max, len(x)) + 1))
        inputs.append(x)
        targets.append(rng.uniform(-scale, scale, size=(m, d)))
    return SequenceDataset(inputs, targets)
