"""The paper's depths and this project's parameter bounds for the interpolation constructions.

Depths as Paper A states them: ``2M + 2N + 1`` blocks with hardmax attention (Theorem 1.6) and
``2M + 3N`` with softmax attention (Theorem 1.8), M = Σ m_j. Our constructions never use more
(:func:`~transformer_theory.interpolation.construction.build_interpolator` pads to exactly that depth with
``match_paper_depth=True``).

Parameter bound (this project's, not the paper's constant): in the structured count of
:meth:`~transformer_theory.interpolation.transformer.Transformer.num_parameters` one block holds at most

* a feed-forward layer of hidden width ≤ 4: a flat-top hat (η, u, 4 biases, δ, 4 bump coefficients: 2d + 9
  numbers), the affine embedding ``x ↦ η x + τ₀`` (width 1, counted densely: 2d + 2) or an exactification layer
  (η, w, two window ends: d + 3), each at most the 8d + 5 of a dense width-4 layer (η, W, U, b);
* a self-attention layer: ρ, V (c·I, or w wᵀ: at most d) and A (v vᵀ, a bᵀ or c·I: at most 2d), at most 3d + 1,

so one block holds at most 11d + 6; :func:`block_parameter_bound` is 11d + 7 (one number of slack; the
bound chapter 04 quotes) and :func:`construction_parameter_bound` = the paper's
depth times that: O(d Σ m_j), independent of the input lengths n_j (Theorems 1.6 and 1.8).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Callable

from transformer_theory.checks import one_of, positive_int
from transformer_theory.interpolation.attention import ATTENTIONS


def paper_num_blocks_hardmax(N: int, M: int) -> int:
    """The paper's depth for hardmax attention (Theorem 1.6): ``L = 2M + 2N + 1``."""
    return 2 * M + 2 * N + 1


def paper_num_blocks_softmax(N: int, M: int) -> int:
    """The paper's depth for softmax attention (Theorem 1.8): ``L = 2M + 3N``."""
    return 2 * M + 3 * N


#: attention kind -> the paper's block count L(N, M)
PAPER_NUM_BLOCKS: dict[str, Callable[[int, int], int]] = {
    "hardmax": paper_num_blocks_hardmax,
    "softmax": paper_num_blocks_softmax,
}
assert tuple(PAPER_NUM_BLOCKS) == ATTENTIONS


def block_parameter_bound(d: int) -> int:
    """``11d + 7``: the most structured parameters one block of either construction holds (module docstring)."""
    return 11 * positive_int("d", d) + 7


def construction_parameter_bound(m_lengths: Sequence[int], d: int, attention: str = "hardmax") -> int:
    """``L·(11d + 7)`` with L the paper's depth: a bound on the construction's structured parameter count.

    It depends on the output lengths m_j only, never on the input lengths n_j.
    """
    one_of("attention", attention, ATTENTIONS)
    if len(m_lengths) == 0:
        raise ValueError("output lengths m_lengths must be a non-empty list of positive integers, got []")
    m = [positive_int(f"m_lengths[{j}]", v) for j, v in enumerate(m_lengths)]
    return PAPER_NUM_BLOCKS[attention](len(m), sum(m)) * block_parameter_bound(d)
