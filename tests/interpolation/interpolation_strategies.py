"""Hypothesis strategies for datasets that satisfy the assumptions of Theorem 1.6, with the
adversarial families of issue 3: heavy token sharing, nested sequences, N = 1, n_j = 1, m_j = n_j,
targets equal to input tokens, targets shared between sequences, near-duplicate tokens across
sequences (1e-7 apart), data scales 1e-3..1e3, d from 2 to 64; and of issue 13 (from
:mod:`transformer_theory.interpolation.examples`): sequences that are copies of one another 1e-8 to
1e-12 apart (``twins``), pools with near-duplicates 1e-9 to 1e-12 apart (``close_pool``) and interleaved
rotations of points on a circle (``circle``, d = 2)."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from transformer_theory.interpolation import SequenceDataset
from transformer_theory.interpolation.examples import circle_dataset, near_duplicate_dataset, twin_dataset

FAMILIES = ("generic", "sharing", "nested", "singletons", "near_duplicates", "twins", "close_pool", "circle")


def _inputs(family: str, rng: np.random.Generator, N: int, d: int, scale: float) -> list[np.ndarray]:
    seed = int(rng.integers(2**31))
    if family == "twins":
        gap = 10.0 ** -int(rng.integers(8, 13))
        return [x * scale for x in twin_dataset(int(rng.integers(1, 6)), d, gap, seed, copies=min(N + 1, 4)).inputs]
    if family == "close_pool":
        return near_duplicate_dataset(N, d, 10.0 ** -int(rng.integers(9, 13)), seed, scale=scale).inputs
    if family == "circle":  # d = 2 whatever was drawn
        return [x * scale for x in circle_dataset(N, int(rng.integers(2, 7)), seed).inputs]
    if family == "generic":
        return [rng.uniform(-scale, scale, (int(rng.integers(1, 6)), d)) for _ in range(N)]
    if family == "singletons":
        return [rng.uniform(-scale, scale, (1, d)) for _ in range(N)]
    if family == "nested":
        pool = rng.uniform(-scale, scale, (N, d))
        return [pool[: k + 1] for k in rng.permutation(N)]
    pool = rng.uniform(-scale, scale, (N + 2, d))
    if family == "near_duplicates":  # every pool token also appears 1e-7·scale away
        pool = np.concatenate([pool, pool + 1e-7 * scale * rng.standard_normal(pool.shape)])
    seqs, seen = [], set()
    for _ in range(40 * N):
        idx = rng.choice(len(pool), size=int(rng.integers(1, min(5, len(pool)) + 1)), replace=False)
        key = frozenset(idx.tolist())
        if key not in seen:
            seen.add(key)
            seqs.append(pool[idx])
        if len(seqs) == N:
            break
    return seqs


def _targets(kind: str, rng: np.random.Generator, xs: list[np.ndarray], full: bool, scale: float) -> list[np.ndarray]:
    d = xs[0].shape[1]
    shared = rng.uniform(-scale, scale, (3, d))
    out = []
    for x in xs:
        m = len(x) if full else int(rng.integers(1, len(x) + 1))
        if kind == "input_tokens":  # targets are tokens of the input itself
            y = x[rng.choice(len(x), size=m, replace=False)]
        elif kind == "shared":  # targets drawn from a small pool shared by all sequences
            y = np.concatenate([shared, rng.uniform(-scale, scale, (m, d))])[rng.choice(3 + m, size=m, replace=False)]
        else:
            y = rng.uniform(-scale, scale, (m, d))
        out.append(y)
    return out


@st.composite
def datasets(draw, max_N: int = 6, dims=(2, 3, 4, 7, 64), families=FAMILIES) -> SequenceDataset:
    family = draw(st.sampled_from(families))
    N = draw(st.integers(1, max_N))
    d = draw(st.sampled_from(dims))
    scale = 10.0 ** draw(st.integers(-3, 3))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    xs = _inputs(family, rng, N, d, scale)
    ys = _targets(draw(st.sampled_from(["random", "input_tokens", "shared"])), rng, xs, draw(st.booleans()), scale)
    return SequenceDataset(xs, ys)


@st.composite
def rational_datasets(draw, max_N: int = 4) -> SequenceDataset:
    """Small datasets with Fraction coordinates (denominators up to 12), heavy sharing included."""
    N = draw(st.integers(1, max_N))
    d = draw(st.sampled_from([2, 3]))
    coord = st.fractions(min_value=-3, max_value=3, max_denominator=12)
    pool = draw(st.lists(st.tuples(*[coord] * d), min_size=N + 1, max_size=N + 3, unique=True))
    seqs, seen = [], set()
    for _ in range(N):
        idx = draw(st.lists(st.integers(0, len(pool) - 1), min_size=1, max_size=4, unique=True))
        if frozenset(idx) not in seen:
            seen.add(frozenset(idx))
            seqs.append([pool[i] for i in idx])
    targets = [draw(st.lists(st.tuples(*[coord] * d), min_size=1, max_size=len(x), unique=True)) for x in seqs]
    return SequenceDataset(seqs, targets)
