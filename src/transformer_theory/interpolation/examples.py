"""Every dataset family of the book, shared by the chapters, the benchmarks and the test strategies.

* :func:`toy_dataset`: the three-sequence example of Paper A's Figs. 5, 6 and 9.
* :func:`random_dataset`: random datasets that satisfy the assumptions, optionally drawn from one shared
  pool of tokens (heavy sharing, nested sets).
* :func:`uniform_dataset`: N sequences of exactly n tokens and m targets (the complexity sweeps).
* :func:`family_dataset`: the adversarial families of the property tests (:data:`FAMILIES`), with the
  target kinds of :data:`TARGET_KINDS`.
* :func:`adversarial_dataset`: the families of chapter 03's robustness table (:data:`ADVERSARIAL`).
* :func:`near_duplicate_dataset`, :func:`twin_dataset`, :func:`circle_dataset`: the hard families of the
  robustness tests (shared pools with near-duplicate tokens, sequences that differ by a tiny shift,
  interleaved rotations of points on a circle).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from transformer_theory.checks import boolean, one_of, positive_int, positive_real, seed_value
from transformer_theory.interpolation.dataset import SequenceDataset

#: Input families of the property tests: generic, heavy sharing, nested sets, single tokens, near duplicates
#: (1e-7 apart), copies of one sequence 1e-8 to 1e-12 apart (twins), pools with near-duplicates 1e-9 to 1e-12
#: apart (close pool), interleaved rotations of points on a circle (d = 2 whatever d is asked).
FAMILIES = ("generic", "sharing", "nested", "singletons", "near_duplicates", "twins", "close_pool", "circle")
#: How :func:`family_dataset` draws targets: fresh points, tokens of the input itself, or a shared pool.
TARGET_KINDS = ("random", "input_tokens", "shared")
#: The families of chapter 03's robustness table.
ADVERSARIAL = ("sharing + nesting", "single tokens", "near duplicates")


def toy_dataset(exact: bool = False) -> SequenceDataset:
    """Figs. 5, 6, 9 of Paper A: sky-blue circles (n=5, m=1), green stars (n=4, m=2), orange triangles (n=3, m=1).

    Coordinates decoded from the official figure files (they lie on a 0.05 grid; Figs. 5(a), 6(a) and 9(a)
    agree): sequence 2's second token is (0.4, −0.05). Sequence 2's second target was placed by hand in the
    drawing (a copy of the (−2, 0) marker moved to about (−0.56, −2.05)): no exact value exists, so
    (−0.56, −2.05) is our choice. ``exact=True``: the same decimals as Fractions (−0.05 is −1/20, not the
    nearest float), for the construction in rational arithmetic.
    """
    inputs = [
        [(0, 1.5), (0, 0.25), (0, -0.25), (-1, -0.75), (1.25, -0.5)],
        [(0, 1.5), (0.4, -0.05), (-1, -0.75), (1.25, -0.5)],
        [(-1.5, 1.25), (1, 0.75), (0, 0.25)],
    ]
    targets = [[(2, 2)], [(-2, 0), (-0.56, -2.05)], [(2, -2)]]
    if boolean("exact", exact):
        inputs, targets = ([[tuple(Fraction(str(v)) for v in token) for token in seq] for seq in seqs]
                           for seqs in (inputs, targets))
    return SequenceDataset(inputs, targets)


def _subsets(pool: np.ndarray, N: int, n_max: int, rng: np.random.Generator, tries: int | None = None) -> list[np.ndarray]:
    """Up to N distinct random subsets (1..n_max tokens) of the rows of ``pool``."""
    seqs, seen = [], set()
    attempts = 0
    while len(seqs) < N and (tries is None or attempts < tries):
        attempts += 1
        idx = rng.choice(len(pool), size=int(rng.integers(1, min(n_max, len(pool)) + 1)), replace=False)
        key = frozenset(idx.tolist())
        if key not in seen:
            seen.add(key)
            seqs.append(pool[idx])
    return seqs


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


def uniform_dataset(N: int, n: int, m: int, d: int, seed: int = 0) -> SequenceDataset:
    """N sequences of n tokens uniform in [−1, 1]^d, each with m targets uniform in [−1, 1]^d."""
    N, n, m, d = (positive_int(k, v) for k, v in (("N", N), ("n", n), ("m", m), ("d", d)))
    if m > n:
        raise ValueError(f"need m <= n for every sequence (outputs no longer than inputs), got m = {m}, n = {n}")
    rng = np.random.default_rng(seed_value(seed))
    return SequenceDataset([rng.uniform(-1, 1, (n, d)) for _ in range(N)], [rng.uniform(-1, 1, (m, d)) for _ in range(N)])


def _family_inputs(family: str, rng: np.random.Generator, N: int, d: int, scale: float) -> list[np.ndarray]:
    seed = int(rng.integers(2**31))
    if family == "twins":
        gap = 10.0 ** -int(rng.integers(8, 13))
        return [x * scale for x in twin_dataset(int(rng.integers(1, 6)), d, gap, seed, copies=min(N + 1, 4)).inputs]
    if family == "close_pool":
        return near_duplicate_dataset(N, d, 10.0 ** -int(rng.integers(9, 13)), seed, scale=scale).inputs
    if family == "circle":
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
    return _subsets(pool, N, 5, rng, tries=40 * N)


def _family_targets(kind: str, rng: np.random.Generator, xs: list[np.ndarray], full: bool, scale: float) -> list[np.ndarray]:
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


def family_dataset(
    family: str, N: int, d: int, scale: float = 1.0, seed: int = 0, targets: str = "random", full: bool = False
) -> SequenceDataset:
    """A dataset of one of the :data:`FAMILIES` (at most N sequences; sharing families may find fewer
    distinct subsets), with targets of kind ``targets`` (:data:`TARGET_KINDS`); ``full`` gives m_j = n_j."""
    one_of("family", family, FAMILIES)
    one_of("targets", targets, TARGET_KINDS)
    N, d, scale = positive_int("N", N), positive_int("d", d), positive_real("scale", scale)
    rng = np.random.default_rng(seed_value(seed))
    xs = _family_inputs(family, rng, N, d, scale)
    return SequenceDataset(xs, _family_targets(targets, rng, xs, full, scale))


def adversarial_dataset(family: str, N: int, d: int, scale: float = 1.0, seed: int = 0) -> SequenceDataset:
    """The families of chapter 03's robustness table (:data:`ADVERSARIAL`).

    ``"sharing + nesting"``: N sequences over a pool of N/2 + 2 tokens; ``"single tokens"``: n_j = m_j = 1;
    ``"near duplicates"``: N/2 sequences over a pool of N/2 + 1 tokens, each repeated 1e-7·scale away
    with the same targets.
    """
    one_of("family", family, ADVERSARIAL)
    N = positive_int("N", N)
    if family == "sharing + nesting":
        return random_dataset(N, d, seed=seed, shared_pool=N // 2 + 2, scale=scale)
    if family == "single tokens":
        return random_dataset(N, d, seed=seed, n_max=1, m_max=1, scale=scale)
    base = random_dataset(N // 2, d, seed=seed, shared_pool=N // 2 + 1, scale=scale)
    noise = np.random.default_rng(seed).normal(size=(N // 2 + 1, d)) * 1e-7 * scale
    twins = [x + noise[: len(x)] for x in base.inputs]
    return SequenceDataset(base.inputs + twins, base.targets + base.targets)


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
    inputs = _subsets(pool, N, n_max, rng)
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
