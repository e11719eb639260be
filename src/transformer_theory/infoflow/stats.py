"""Comparison structure of a target: order beta', dimension beta_1 per level, depth, comparison number.

Names from InfoFlow (Yu et al. 2026, as summarised); **the definitions are a reconstruction** (see the
book's page on how it reconstructs the papers):

* *order* beta' of a reduction: the number of distinct positions jointly entering one comparison
  (``max_t a^T x(t)``: 1; ``x(s)^T A x(t)``: 2; ``||x(t1)+x(t2)+x(t3)||``: 3); of a target: the maximum.
* *level* of a node: 1 + the longest chain of nodes nested inside it (level 1 runs first).
* *dimension* beta_1 at a level: the number of nodes at that level (they must run in parallel: each
  needs its own head in the layer executing the level; P1's intrinsic dimension D).
* *depth*: the highest level: the nesting depth of the tree as written. It is the number of layers a
  schedule needs when every level is a separate retrieval; a pointer chase needs fewer (pointer
  doubling, see :func:`~transformer_theory.infoflow.prediction.minimal_depth`).
* *comparison number*: candidate tuples compared, ``sum over reductions of T^{order}``.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from transformer_theory.checks import positive_int
from transformer_theory.infoflow.architecture import Architecture
from transformer_theory.infoflow.trees import Reduction, Tree


@dataclass(frozen=True)
class ComparisonStats:
    """Result of :func:`comparison_stats`."""

    order: int                       # beta' (0 when the target has no comparison)
    dimension: dict[int, int]        # beta_1 per level, level 1 = innermost (executed first)
    depth: int
    seq_len: int
    number: int                      # comparison number at seq_len
    orders: tuple[int, ...]          # order of every reduction (post-order)
    nodes: tuple[tuple[str, int, int, int], ...]  # (label, level, order, rank) per node

    @property
    def beta1(self) -> int:
        """The largest comparison dimension over levels."""
        return max(self.dimension.values(), default=0)

    def number_at(self, T: int) -> int:
        """Comparison number ``sum_R T^{order(R)}`` as a function of the sequence length."""
        return sum(T ** o for o in self.orders)

    @property
    def number_formula(self) -> str:
        """E.g. ``'2 T^2 + 2 T'``."""
        c = Counter(self.orders)
        parts = []
        for o in sorted(c, reverse=True):
            mono = "1" if o == 0 else ("T" if o == 1 else f"T^{o}")
            parts.append(mono if c[o] == 1 else f"{c[o]} {mono}")
        return " + ".join(parts) if parts else "0"


def comparison_stats(target: Tree, seq_len: int) -> ComparisonStats:
    """Comparison order, dimension per level, depth and comparison number of ``target`` at ``seq_len``."""
    if not isinstance(target, Tree):
        raise ValueError(f"target must be a comparison Tree, got {type(target).__name__}")
    seq_len = positive_int("seq_len", seq_len)
    orders, nodes, dims = [], [], Counter()
    for info in target.nodes():
        node = info.node
        order = node.order if isinstance(node, Reduction) else 0
        rank = node.rank if isinstance(node, Reduction) else 0
        if isinstance(node, Reduction):
            orders.append(order)
        dims[info.height] += 1
        nodes.append((info.label, info.height, order, rank))
    return ComparisonStats(order=max(orders, default=0), dimension=dict(sorted(dims.items())),
                           depth=max(dims, default=0), seq_len=int(seq_len),
                           number=sum(int(seq_len) ** o for o in orders), orders=tuple(orders),
                           nodes=tuple(nodes))


def comparison_capacity(arch: Architecture, seq_len: int) -> int:
    """Query-key comparisons a model performs: ``sum_l h_l (T+1)^2`` (CLS included), i.e. O(L h T^2).

    A target with comparison number ~T^3 outgrows every fixed architecture (InfoFlow §4.2 reading).
    """
    seq_len = positive_int("seq_len", seq_len)
    return sum(h * (seq_len + 1) ** 2 for h in arch.heads)
