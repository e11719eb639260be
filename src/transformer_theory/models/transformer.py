"""The project's torch transformer: optional encoder, positional encoding, CLS token and readout.

``X⁰ = [Pφ(x(1)) + p(1), …, Pφ(x(T)) + p(T), ĉ₀]`` (Pφ a two-layer ReLU MLP, p a learned absolute
positional encoding, ĉ₀ a trainable CLS token), then the blocks, then a linear readout of the CLS token:
the multi-layer model of InfoFlow (Yu et al. 2026, §4) built on its predecessor's eq. 4. With
``joint_positions`` the encoder reads each token with its position, as the token map of InfoFlow's
predecessor (Yu et al., ICLR 2026) does: ``Pφ(x(t), t) = W₂ relu(W₁ x(t) + b₁ + P[t]) + b₂`` with a learned
table P (max_len, encoder_width), and no p(t) is added. Without encoder, CLS and readout the model maps the
token sequence to the token sequence, as Paper A's transformers do (Alcalde, Fantuzzi, Zuazua 2025, §2).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from transformer_theory.models.block import Block
from transformer_theory.models.config import TransformerConfig
from transformer_theory.models.linear import Linear

#: Standard deviation of the initial CLS token and positional encodings (nanoGPT's embedding init).
EMBEDDING_INIT_STD = 0.02


@dataclass(frozen=True)
class Trace:
    """The internals of one forward pass (InfoFlow §4.3's probe and §4.4's attention map read them).

    ``tokens``: X⁰, the encoded tokens (with positional encoding) and the CLS token, (..., S, E).
    Per block ``l`` (0-based): ``attention[l]`` the weights (..., h, S_q, S) of every head (S_q = 1 in a
    CLS-only last block, whose query is the CLS token), ``post_attention[l]`` the residual stream right after
    the SA layer and ``states[l]`` the block's output (both (..., S_q, E)). ``output``: the readout (or the
    last states without one)."""

    tokens: torch.Tensor
    attention: tuple[torch.Tensor, ...]
    post_attention: tuple[torch.Tensor, ...]
    states: tuple[torch.Tensor, ...]
    output: torch.Tensor


class Transformer(nn.Module):
    """``config`` as a module: tokens (..., T, d) → outputs (..., readout_dim), or tokens (..., T, E).

    ``models=K`` holds K models of this config with a leading model axis on every parameter (left
    uninitialised, to be loaded): inputs (K, B, T, d), outputs (K, B, readout_dim).
    """

    def __init__(self, config: TransformerConfig, models: int | None = None) -> None:
        super().__init__()
        self.config = c = config
        self.models = models
        dtype = getattr(torch, c.dtype)
        factory = {"dtype": dtype, "models": models}
        E = c.width
        self.encoder = None
        if c.encoder_width is not None:
            self.encoder = nn.Sequential(Linear(c.d, c.encoder_width, **factory), nn.ReLU(),
                                         Linear(c.encoder_width, E, **factory))

        def embedding(*shape: int) -> nn.Parameter:
            if models is not None:
                return nn.Parameter(torch.empty(models, *shape, dtype=dtype))
            return nn.Parameter(torch.randn(*shape, dtype=dtype) * EMBEDDING_INIT_STD)

        # joint_positions: the table enters the encoder's hidden layer (width encoder_width), not the stream
        self.pos = embedding(c.max_len, E) if c.max_len and not c.joint_positions else None
        self.encoder_pos = embedding(c.max_len, c.encoder_width) if c.joint_positions else None
        self.cls = embedding(E) if c.cls_token else None
        self.blocks = nn.ModuleList(Block(c, layer, models) for layer in range(c.n_layers))
        self.readout = Linear(E, c.readout_dim, **factory) if c.readout_dim is not None else None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.trace(x).output

    def trace(self, x: torch.Tensor) -> Trace:
        """The forward pass of ``x`` with its internals (:class:`Trace`); its ``output`` is ``self(x)``."""
        tokens = h = self.embed(x)
        attention, post_attention, states = [], [], []
        last = len(self.blocks) - 1
        for i, block in enumerate(self.blocks):
            h, post, weights = block.trace(h, last_only=self.config.cls_only_last and i == last)
            attention.append(weights)
            post_attention.append(post)
            states.append(h)
        output = self.readout(h[..., -1, :]) if self.readout is not None else h
        return Trace(tokens, tuple(attention), tuple(post_attention), tuple(states), output)

    def positions(self, table: torch.Tensor, T: int) -> torch.Tensor:
        """The first T rows of a positional ``table`` (max_len, w), or (K, max_len, w) with a model axis, shaped
        to add to (..., T, w), or to (K, B, T, w)."""
        max_len = table.shape[-2]
        if T > max_len:
            raise ValueError(f"sequence length {T} exceeds the positional encoding's max_len {max_len}")
        return table[:T] if self.models is None else table[:, None, :T]

    def encode(self, x: torch.Tensor) -> torch.Tensor:
        """The encoder on the tokens (..., T, d): Pφ(x(t)), or Pφ(x(t), t) with ``joint_positions``."""
        if self.encoder_pos is None:
            return self.encoder(x)
        first, relu, second = self.encoder
        return second(relu(first(x) + self.positions(self.encoder_pos, x.shape[-2])))

    def embed(self, x: torch.Tensor) -> torch.Tensor:
        """X⁰: the encoder (if any), the positional encoding (if any) and the CLS token (if any) appended."""
        h = self.encode(x) if self.encoder is not None else x
        if self.pos is not None:
            h = h + self.positions(self.pos, h.shape[-2])
        if self.cls is not None:
            cls = self.cls if self.models is None else self.cls[:, None, :]  # (K, 1, E) against (K, B, T, E)
            h = torch.cat([h, cls.unsqueeze(-2).expand(*h.shape[:-2], 1, h.shape[-1])], dim=-2)
        return h

    def num_parameters(self) -> int:
        return sum(p.numel() for p in self.parameters())
