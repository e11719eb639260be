"""Transformers as ordered blocks of a feed-forward and a self-attention layer (Paper A, Fig. 3).

A block is ``SA ∘ FF`` (FF first, as in the paper's Fig. 3) or ``FF ∘ SA`` (``order="sa_ff"``, as in
the official Tikhonov code). There is no positional encoding and no normalisation, so the model is
permutation-equivariant and maps a sequence of n tokens to n tokens.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any, Sequence

import numpy as np

from transformer_theory.interpolation.arithmetic import EXACT, FLOAT, Arithmetic, to_float
from transformer_theory.interpolation.attention import SelfAttention
from transformer_theory.interpolation.dataset import as_tokens
from transformer_theory.interpolation.evaluation import Evaluation
from transformer_theory.interpolation.feed_forward import FeedForwardLayer
from transformer_theory.interpolation.segments import Segments

BLOCK_ORDERS = ("ff_sa", "sa_ff")


@dataclass(frozen=True, eq=False)
class Block:
    """One transformer block: ``SA(FF(X))`` (``order="ff_sa"``) or ``FF(SA(X))`` (``order="sa_ff"``)."""

    ff: FeedForwardLayer
    sa: SelfAttention
    order: str = "ff_sa"

    def __post_init__(self) -> None:
        if self.order not in BLOCK_ORDERS:
            raise ValueError(f"block order must be one of {BLOCK_ORDERS}, got {self.order!r}")

    @property
    def is_identity(self) -> bool:
        return self.ff.is_identity and self.sa.is_identity

    def rescaled(self, factor: Any) -> "Block":
        """The block ``X ↦ factor·TB(X / factor)`` (``factor > 0``; see :meth:`Transformer.rescaled`)."""
        return Block(self.ff.rescaled(factor), self.sa.rescaled(factor), self.order)

    def apply(self, X: np.ndarray, segments: Segments, structured: bool = True) -> np.ndarray:
        ff = self.ff.apply if structured else self.ff.apply_dense
        if self.order == "ff_sa":
            return self.sa.apply(ff(X), segments, structured)
        return ff(self.sa.apply(X, segments, structured))


@dataclass(eq=False, repr=False)
class Transformer:
    """``T = TB^L ∘ … ∘ TB^1`` acting on sequences of tokens in R^d.

    ``stages`` maps a stage name of the construction to its range of block indices; ``unit`` is the length
    unit of the construction's geometry (its box is ``[unit, 2·unit]^d``, see :meth:`rescaled`); ``checked``
    how many sequences of its dataset ``build_interpolator`` verified on each evaluation path.
    """

    blocks: list[Block]
    d: int
    exact: bool = False
    stages: dict[str, range] = field(default_factory=dict)
    unit: float = 1.0
    checked: dict[str, int] = field(default_factory=dict)

    @property
    def backend(self) -> Arithmetic:
        return EXACT if self.exact else FLOAT

    @property
    def guaranteed(self) -> bool:
        """Whether the construction's theorem covers this model (so it must interpolate on every path)."""
        return True

    @property
    def num_blocks(self) -> int:
        return len(self.blocks)

    @property
    def max_width(self) -> int:
        """The largest feed-forward hidden width d'."""
        return max((b.ff.width for b in self.blocks), default=0)

    def num_parameters(self, structured: bool = True) -> int:
        """Parameter count (Paper A: O(d Σ m_j) parameters; the per-block bound is in ``construction.bounds``).

        ``structured=True``: free parameters given the structure (identity layers 0, rank-one and c·I
        attention matrices d or 2d and 1, hat layers O(d)); this is the O(d·M) count of Theorem 1.6.
        ``structured=False``: a standard dense transformer of the same depth holding this model, every
        FF of width ``max_width`` and dense d×d matrices V, A: ``L·(1 + 2 d d' + d' + 1 + 2 d²)``.
        """
        if structured:
            return sum(b.ff.num_parameters(True) + b.sa.num_parameters(self.d, True) for b in self.blocks)
        w, d = self.max_width, self.d
        return self.num_blocks * ((1 + 2 * d * w + w) + (1 + 2 * d * d))

    def parameter_norms(self) -> dict[str, float]:
        """Sizes of the weights as dense arrays (η, W, U, b; ρ, V, A of every non-identity layer): the largest
        absolute entry and the Euclidean norm of all of them. Paper A's counts do not depend on the input lengths;
        these do (a hat that isolates one of many close tokens needs slopes of order 1/gap)."""
        arrays = []
        for block in self.blocks:
            if not block.ff.is_identity:
                arrays += [np.atleast_1d(to_float(a)).ravel() for a in (block.ff.eta, block.ff.W, block.ff.U, block.ff.b)]
            if not block.sa.is_identity:
                V, A = block.sa.matrices(self.d)
                arrays += [np.atleast_1d(to_float(a)).ravel() for a in (block.sa.rho, V, A)]
        flat = np.concatenate(arrays) if arrays else np.zeros(1)
        return {"max_abs": float(np.abs(flat).max()), "l2": float(np.linalg.norm(flat))}

    def rounding_scale(self) -> float:
        """``√(Σ_l κ_l²)`` over the feed-forward layers, ``κ = max_i Σ_k |W_ik|·|b_k|``: the size of the terms
        that a dense evaluation of ``W σ(U x + b)`` sums and that cancel (for a hat, Tool A of Theorem 1.6,
        ``κ ≈ 8|δ|·|t_p|/ε``: narrow windows have large weights). Each layer rounds by about ``ε_mach·κ``, with
        signs that vary from layer to layer, so the dense paths stray from the structured one by a few
        ``ε_mach·rounding_scale()`` (in the data's units); the structured path moves only the points in a
        window and does not round so."""
        total = 0.0
        for block in self.blocks:
            if not block.ff.is_identity and block.ff.width:
                W, b = to_float(block.ff.W), to_float(block.ff.b)
                total += float((np.abs(W) @ np.abs(b)).max()) ** 2
        return math.sqrt(total)

    def rescaled(self, factor: Any) -> "Transformer":
        """The model ``X ↦ factor·T(X / factor)`` for a power of two ``factor``.

        Every layer is positively homogeneous after rescaling its parameters (feed-forward biases and hat
        windows by ``factor``, attention matrices A by ``factor⁻²``, so the scores do not change): in float64
        the new model computes exactly ``factor`` times the old one's values, rounding included.
        """
        return replace(self, blocks=[block.rescaled(factor) for block in self.blocks], unit=self.unit * float(factor))

    def __repr__(self) -> str:
        """One line: the size, the blocks per stage and the parameter count (never the weights)."""
        parts = [f"{name} {len(r)}" for name, r in self.stages.items() if len(r)]
        identity = sum(b.is_identity for b in self.blocks)
        parts += [f"{identity} identity"] if identity else []
        return (f"{type(self).__name__}(d={self.d}, {self.num_blocks} blocks" + (f" ({', '.join(parts)})" if parts else "")
                + f", {self.num_parameters()} parameters" + (", exact" if self.exact else "") + self._repr_extra() + ")")

    def _repr_extra(self) -> str:
        """More of :meth:`__repr__` for subclasses (``", temperature=0.1"``)."""
        return ""

    def _stack(self, sequences: Sequence[np.ndarray]) -> tuple[np.ndarray, Segments]:
        arrays = [as_tokens(x, f"sequence {j}", self.exact) for j, x in enumerate(sequences)]
        for j, x in enumerate(arrays):
            if x.shape[1] != self.d:
                raise ValueError(f"sequence {j}: expected a non-empty array (n, {self.d}), got shape {x.shape}")
        return self.backend.column_major(np.concatenate(arrays)), Segments.of(arrays)

    def apply(self, sequences: Sequence[np.ndarray], structured: bool = True) -> list[np.ndarray]:
        """The outputs of many sequences at once (all tokens stacked; attention within each sequence).

        ``structured=True`` touches only what each layer changes (:class:`~.evaluation.Evaluation`: hats move
        the positions in their windows, found by sorted projections), bit for bit the same as applying every
        block to all tokens in turn (:meth:`Block.apply`); ``structured=False`` evaluates every layer densely
        (the reference, slower). Identity blocks are skipped on both paths (their dense formula returns its
        input exactly).
        """
        X, segments = self._stack(sequences)
        if structured:
            return segments.split(Evaluation(X, segments, self.blocks).run(self.blocks))
        for block in self.blocks:
            if not block.is_identity:
                X = block.apply(X, segments, structured=False)
        return segments.split(X)

    def __call__(self, X: np.ndarray) -> np.ndarray:
        """The output ``T(X)`` (n, d) of one sequence: float64, or Fractions for an exact model."""
        return self.apply([X])[0]

    def trace(self, X: np.ndarray | Sequence[np.ndarray]) -> np.ndarray | list[np.ndarray]:
        """Token positions before the first block and after every block: (L + 1, n, d) for one sequence,
        or one such array per sequence for a list of sequences (for figures)."""
        single = isinstance(X, np.ndarray) and X.ndim == 2
        Z, segments = self._stack([X] if single else X)
        states = [Z]
        for block in self.blocks:
            states.append(states[-1] if block.is_identity else block.apply(states[-1], segments))
        stacked = np.stack(states)
        paths = [stacked[:, segments.rows(j)] for j in range(len(segments.lengths))]
        return paths[0] if single else paths

    def stage_states(self, sequences: Sequence[np.ndarray]) -> dict[str, list[np.ndarray]]:
        """Token positions of every sequence at the input (``"input"``) and after each stage with at least
        one block (the construction's stage names, in order; Fig. 5)."""
        paths = self.trace(list(sequences))
        states = {"input": [p[0] for p in paths]}
        for name, blocks in self.stages.items():
            if len(blocks):
                states[name] = [p[blocks.stop] for p in paths]
        return states
