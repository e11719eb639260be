"""Hypothesis strategies for datasets that satisfy the assumptions of Theorem 1.6 (Paper A).

The families live in :mod:`transformer_theory.interpolation.examples` (shared with the chapters and the
benchmarks): heavy token sharing, nested sequences, N = 1, n_j = 1, m_j = n_j, targets equal to input
tokens, targets shared between sequences, near-duplicate tokens across sequences (1e-7 apart); here
hypothesis draws the family, the sizes, data scales 1e-3..1e3 and d from 2 to 64.
"""

from __future__ import annotations

from hypothesis import strategies as st

from transformer_theory.interpolation import SequenceDataset
from transformer_theory.interpolation.examples import FAMILIES, TARGET_KINDS, family_dataset


@st.composite
def datasets(draw, max_N: int = 6, dims=(2, 3, 4, 7, 64), families=FAMILIES) -> SequenceDataset:
    return family_dataset(
        draw(st.sampled_from(families)),
        N=draw(st.integers(1, max_N)),
        d=draw(st.sampled_from(dims)),
        scale=10.0 ** draw(st.integers(-3, 3)),
        seed=draw(st.integers(0, 2**32 - 1)),
        targets=draw(st.sampled_from(TARGET_KINDS)),
        full=draw(st.booleans()),
    )


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
