"""Datasets used by the chapters, tests and benchmarks.

``toy_dataset`` is the three-sequence example of the paper's Figs. 5, 6 and 9 (coordinates read off
the figures); ``random_dataset`` draws datasets that satisfy the assumptions, optionally with heavy
token sharing between sequences. The hard families of the robustness tests: ``near_duplicate_dataset``
(shared pools with near-duplicate tokens), ``twin_dataset`` (sequences that differ by a tiny shift) and
``circle_dataset`` (interleaved rotations of points on a circle).
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


def near_duplicate_dataset(
    N: int, d: int, gap: float, seed: int = 0, n_max: int = 5, scale: float = 1.0
) -> SequenceDataset:
    """Heavy sharing with near-duplicates: every input is a random subset of a pool of N + 2 tokens and their
    copies ``gap·scale`` away (random direction), so tokens of different sequences, and of one sequence, are
    ``gap`` apart relative to the data; 1..n_j targets uniform in ``[−scale, scale]^d``."""
    rng = np.random.default_rng(seed)
    pool = rng.uniform(-scale, scale, size=(N + 2, d))
    noise = rng.standard_normal(pool.shape)
    pool = np.concatenate([pool, pool + gap * scale * noise / np.linalg.norm(noise, axis=1, keepdims=True)])
    inputs, seen = [], set()
    while len(inputs) < N:
        idx = rng.choice(len(pool), size=int(rng.integers(1, min(n_max, len(pool)) + 1)), replace=False)
        if frozenset(idx.tolist()) not in seen:
            seen.add(frozenset(idx.tolist()))
            inputs.append(pool[idx])
    targets = [rng.uniform(-scale, scale, size=(int(rng.integers(1, len(x) + 1)), d)) for x in inputs]
    return SequenceDataset(inputs, targets)


def twin_dataset(n: int, d: int, gap: float, seed: int = 0, copies: int = 2) -> SequenceDataset:
    """``copies`` sequences of n tokens, each a copy of the first moved by ``gap`` (every token has a twin
    ``gap`` away in every other sequence), with different targets: the sequences differ only at that scale."""
    rng = np.random.default_rng(seed)
    base = rng.uniform(-1, 1, size=(n, d))
    inputs = [base] + [base + gap * rng.standard_normal(base.shape) / np.sqrt(d) for _ in range(copies - 1)]
    targets = [rng.uniform(-1, 1, size=(int(rng.integers(1, n + 1)), d)) for _ in inputs]
    return SequenceDataset(inputs, targets)


def circle_dataset(N: int, n: int, seed: int = 0, m: int = 2) -> SequenceDataset:
    """Circle rotations in d = 2: sequence j holds n equally spaced points of the unit circle rotated by
    ``2πj/(nN)`` (the N·n tokens interleave, neighbours ``2π/(nN)`` apart); its m targets are m of its points
    rotated by a random angle and halved."""
    rng = np.random.default_rng(seed)
    angles = 2 * np.pi * np.arange(n) / n
    inputs, targets = [], []
    for j in range(N):
        theta = angles + 2 * np.pi * j / (n * N)
        inputs.append(np.stack([np.cos(theta), np.sin(theta)], axis=1))
        phi = theta[:m] + rng.uniform(0, 2 * np.pi)
        targets.append(0.5 * np.stack([np.cos(phi), np.sin(phi)], axis=1))
    return SequenceDataset(inputs, targets)
