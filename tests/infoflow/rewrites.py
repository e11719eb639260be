"""Random comparison trees and plain rewrites of them (same function, written differently), for hypothesis.

A tree is a list of term specifications; :func:`build` writes it either *plainly* or *rewritten*:

* position terms: one ``Positions`` node per set (plain) or one node over the union (rewritten);
* k-th largest terms: ``rank=k`` (plain) or a max that masks the first ``k - 1`` maxima (rewritten), by
  position (``exclude``) or by value (a score that is ``-inf`` from the previous maximum on);
* shifts: a closed reduction ``C`` scaled by 2 as a separate term (plain) or added inside its host
  term's score, through a ``Sum`` or a ``Custom`` linear in ``C`` (rewritten).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from hypothesis import strategies as st

from transformer_theory.infoflow import Bilinear, Custom, Linear, Positions, Reduction, Tree

D = 4


@dataclass(frozen=True)
class Spec:
    kind: str                # "max1" | "min1" | "pair" | "kth" | "pos"
    seed: int
    k: int = 1               # kth: the rank
    positions: tuple[tuple[int, ...], ...] = ()  # pos: the position sets
    shift: str = ""          # hosts ("max1", "min1", "pair"): the kind of a closed term added as 2 C ("" none)
    shift_seed: int = 0
    custom: bool = False     # the shift is written through a Custom; kth: masked by value


def _vec(seed: int, salt: int) -> np.ndarray:
    return np.random.default_rng([seed, salt]).normal(size=D) / np.sqrt(D)


def _closed(kind: str, seed: int, var: str, scale: float = 1.0) -> Reduction:
    op = "max" if kind == "max1" else "min"
    return Reduction(op, var, Linear(var, scale * _vec(seed, 0)), label=var)


def _sum_first(toks: np.ndarray) -> np.ndarray:
    return toks[..., 0].sum(axis=1)


def _merged_positions(sets: list[tuple[int, ...]]) -> Positions:
    """One node over the union of ``sets`` computing the sum over the sets of their first coordinates."""
    union = sorted(set().union(*sets))
    counts = np.array([sum(p in s for s in sets) for p in union], dtype=float)
    return Positions(union, lambda toks: (toks[..., 0] * counts).sum(axis=1))


def _masked(q: np.ndarray, b: np.ndarray, k: int, var: str) -> Reduction:
    """The k-th largest ``q^T x(var)``, returning ``b^T x``, as a max masking the first ``k - 1`` maxima."""

    def rank(j: int, value: Linear | None = None) -> Reduction:
        return Reduction("max", var, Linear(var, q), exclude=tuple(rank(i) for i in range(1, j)), value=value,
                         label=f"{var}m{j}")

    return rank(k, Linear(var, b))


def _masked_by_value(q: np.ndarray, b: np.ndarray, k: int, var: str) -> Reduction:
    """The same, with each score masked where it reaches the previous maximum's value."""
    if k == 1:
        return Reduction("max", var, Linear(var, q), value=Linear(var, b), label=var)
    node = Reduction("max", f"{var}_1", Linear(f"{var}_1", q), label=f"{var}v1")
    for j in range(2, k + 1):  # each level binds its own variable (the masks are nested in the scores)
        v = var if j == k else f"{var}_{j}"
        node = Reduction("max", v, Custom(lambda x, m: np.where(x @ q < m, x @ q, -np.inf), (v, node)),
                         value=Linear(v, b) if j == k else None, label=f"{var}v{j}")
    return node


def build(specs: list[Spec], rewritten: bool) -> Tree:
    terms: list = []
    pos_sets = [p for s in specs if s.kind == "pos" for p in s.positions]
    merged = False
    for i, s in enumerate(specs):
        t = f"t{i}"
        guest = _closed(s.shift, s.shift_seed, f"c{i}") if s.shift and rewritten else None
        if s.kind in ("max1", "min1"):
            if guest is None:
                terms.append(_closed(s.kind, s.seed, t))
            else:
                a = _vec(s.seed, 0)
                score = (Custom(lambda x, m, a=a: x @ a + 2.0 * m, (t, guest)) if s.custom
                         else Linear(t, a) + 2.0 * guest)
                terms.append(Reduction("max" if s.kind == "max1" else "min", t, score, label=t))
        elif s.kind == "pair":
            A = np.random.default_rng([s.seed, 9]).normal(size=(D, D)) / np.sqrt(D)
            inner = Reduction("max", f"s{i}", Bilinear(f"s{i}", t, A), label=f"s{i}")
            score = inner if guest is None else (
                Custom(lambda m, c: m + 2.0 * c, (inner, guest)) if s.custom else inner + 2.0 * guest)
            terms.append(Reduction("max", t, score, label=t))
        elif s.kind == "kth":
            q, b = _vec(s.seed, 1), _vec(s.seed, 2)
            if not rewritten:
                terms.append(Reduction("max", t, Linear(t, q), rank=s.k, value=Linear(t, b), label=t))
            else:
                terms.append((_masked_by_value if s.custom else _masked)(q, b, s.k, t))
        elif rewritten:
            if not merged:
                terms.append(_merged_positions(pos_sets))
                merged = True
        else:
            terms += [Positions(p, _sum_first) for p in s.positions]
        if s.shift and not rewritten:
            terms.append(_closed(s.shift, s.shift_seed, f"c{i}", scale=2.0))
    return Tree(terms, input_dim=D, name="rewritten" if rewritten else "plain")


@st.composite
def specs(draw, max_terms: int = 4, positional: bool = True) -> list[Spec]:
    """A random list of term specifications; few seeds, so equal terms occur."""
    kinds = ["max1", "min1", "pair", "kth"] + (["pos"] if positional else [])
    out = []
    for _ in range(draw(st.integers(1, max_terms))):
        kind = draw(st.sampled_from(kinds))
        seed = draw(st.integers(0, 2))
        if kind == "kth":
            out.append(Spec(kind, seed, k=draw(st.integers(1, 4)), custom=draw(st.booleans())))
        elif kind == "pos":
            sets = draw(st.lists(st.sets(st.integers(1, 5), min_size=1, max_size=3).map(lambda x: tuple(sorted(x))),
                                 min_size=1, max_size=3))
            out.append(Spec(kind, seed, positions=tuple(sets)))
        elif draw(st.booleans()):
            out.append(Spec(kind, seed, shift=draw(st.sampled_from(["max1", "min1"])),
                            shift_seed=draw(st.integers(0, 2)), custom=draw(st.booleans())))
        else:
            out.append(Spec(kind, seed))
    return out
