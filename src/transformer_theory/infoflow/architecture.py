"""The architecture an InfoFlow prediction is made for: heads per layer, embedding and input dimension.

Notation of the head-count paper (P1, Yu et al. 2026, verified) reused by InfoFlow: ``h_l`` heads in
layer ``l``, total embedding dimension ``E = n * h`` (``n`` = per-head dimension), token dimension ``d``,
``L`` layers. ``positional`` says whether the model has positional encoding (needed by
specific-position aggregation, InfoFlow §2.3 mode 3).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from transformer_theory.checks import is_integer, positive_int


@dataclass(frozen=True, init=False)
class Architecture:
    """A multi-layer Transformer as InfoFlow sees it.

    Parameters
    ----------
    heads
        ``(h_1, ..., h_L)``: number of attention heads of each layer; ``L = len(heads)``. Any sequence
        of integers, or a 1-D integer NumPy array.
    embed_dim
        total embedding dimension ``E`` (per-head dimension ``n_l = E / h_l``; ``E >= h_l``).
    input_dim
        token dimension ``d``.
    positional
        whether the model has positional encoding (learned absolute PE in the paper's §4.4).
    """

    heads: tuple[int, ...]
    embed_dim: int
    input_dim: int
    positional: bool

    def __init__(self, heads: Sequence[int] | np.ndarray, embed_dim: int, input_dim: int, positional: bool = False):
        if isinstance(heads, np.ndarray):
            if heads.ndim != 1:
                raise ValueError(f"heads must be a 1-D sequence (h_1, ..., h_L) of head counts, got an array of "
                                 f"shape {heads.shape}")
            heads = heads.tolist()
        if isinstance(heads, (str, bytes)) or not isinstance(heads, Sequence):
            raise ValueError(f"heads must be a sequence (h_1, ..., h_L) of head counts, got {heads!r}")
        if len(heads) == 0:
            raise ValueError("heads = (): the architecture needs at least one layer")
        for i, h in enumerate(heads):
            if not is_integer(h):
                raise ValueError(f"heads[{i}] = {h!r}: head counts must be integers")
            if h <= 0:
                raise ValueError(f"heads[{i}] = {h}: every layer needs at least one head")
        E = positive_int("embed_dim (the embedding dimension E)", embed_dim)
        d = positive_int("input_dim (the token dimension d)", input_dim)
        if not isinstance(positional, (bool, np.bool_)):
            raise ValueError(f"positional must be True or False, got {positional!r}")
        if E < max(heads):
            raise ValueError(f"embed_dim E = {E} < {max(heads)} heads in one layer: each head needs at least one "
                             f"of the E dimensions (per-head dimension n = E / h >= 1)")
        object.__setattr__(self, "heads", tuple(int(h) for h in heads))
        object.__setattr__(self, "embed_dim", E)
        object.__setattr__(self, "input_dim", d)
        object.__setattr__(self, "positional", bool(positional))

    @property
    def n_layers(self) -> int:
        """``L``, the number of layers."""
        return len(self.heads)

    def per_head_dim(self, layer: int) -> float:
        """``n_l = E / h_l`` for 1-based ``layer`` (a float: P1 rounds up, InfoFlow's formulas use the ratio)."""
        if not is_integer(layer) or not 1 <= layer <= self.n_layers:
            raise ValueError(f"layer = {layer!r}: layers are numbered 1..{self.n_layers}")
        return self.embed_dim / self.heads[layer - 1]

    def __str__(self) -> str:
        pe = ", PE" if self.positional else ""
        return f"L={self.n_layers} heads={self.heads} E={self.embed_dim} d={self.input_dim}{pe}"
