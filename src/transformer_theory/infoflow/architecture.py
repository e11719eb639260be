"""The architecture an InfoFlow prediction is made for: heads per layer, embedding and input dimension.

Notation of the head-count paper (P1, Yu et al. 2026, verified) reused by InfoFlow: ``h_l`` heads in
layer ``l``, total embedding dimension ``E = n * h`` (``n`` = per-head dimension), token dimension ``d``,
``L`` layers. ``positional`` says whether the model has positional encoding (needed by
specific-position aggregation, InfoFlow §2.3 mode 3).
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Sequence


def _is_int(x: object) -> bool:
    return isinstance(x, numbers.Integral) and not isinstance(x, bool)


@dataclass(frozen=True, init=False)
class Architecture:
    """A multi-layer Transformer as InfoFlow sees it.

    Parameters
    ----------
    heads
        ``(h_1, ..., h_L)``: number of attention heads of each layer; ``L = len(heads)``.
    embed_dim
        total embedding dimension ``E`` (per-head dimension ``n_l = E / h_l``).
    input_dim
        token dimension ``d``.
    positional
        whether the model has positional encoding (learned absolute PE in the paper's §4.4).
    """

    heads: tuple[int, ...]
    embed_dim: int
    input_dim: int
    positional: bool

    def __init__(self, heads: Sequence[int], embed_dim: int, input_dim: int, positional: bool = False):
        if isinstance(heads, (int, bool)) or not isinstance(heads, Sequence) or isinstance(heads, str):
            raise ValueError(f"heads must be a sequence (h_1, ..., h_L) of head counts, got {heads!r}")
        if len(heads) == 0:
            raise ValueError("heads = (): the architecture needs at least one layer")
        for i, h in enumerate(heads):
            if not _is_int(h):
                raise ValueError(f"heads[{i}] = {h!r}: head counts must be integers")
            if h <= 0:
                raise ValueError(f"heads[{i}] = {h}: every layer needs at least one head")
        if not _is_int(embed_dim) or embed_dim < 1:
            raise ValueError(f"embed_dim = {embed_dim!r}: the embedding dimension E must be an integer >= 1")
        if not _is_int(input_dim) or input_dim < 1:
            raise ValueError(f"input_dim = {input_dim!r}: the token dimension d must be an integer >= 1")
        object.__setattr__(self, "heads", tuple(int(h) for h in heads))
        object.__setattr__(self, "embed_dim", int(embed_dim))
        object.__setattr__(self, "input_dim", int(input_dim))
        object.__setattr__(self, "positional", bool(positional))

    @property
    def n_layers(self) -> int:
        """``L``, the number of layers."""
        return len(self.heads)

    def per_head_dim(self, layer: int) -> float:
        """``n_l = E / h_l`` for 1-based ``layer`` (a float: P1 rounds up, InfoFlow's formulas use the ratio)."""
        if not 1 <= layer <= self.n_layers:
            raise ValueError(f"layer = {layer}: layers are numbered 1..{self.n_layers}")
        return self.embed_dim / self.heads[layer - 1]

    def __str__(self) -> str:
        pe = ", PE" if self.positional else ""
        return f"L={self.n_layers} heads={self.heads} E={self.embed_dim} d={self.input_dim}{pe}"
