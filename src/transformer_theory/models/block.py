"""One transformer block: residual self-attention and a residual feed-forward layer, in either order.

``SA(X) = ρ X + Attn(X)`` (``Attn`` followed by the output projection when the config has one) and
``FF(x) = η x + W₂ σ(W₁ x + b₁) (+ b₂)``: Paper A's layers (§2, Fig. 3) with ρ, η free, and InfoFlow's
residual blocks with ρ = η = 1. Parameter names: ``rho``, ``eta`` (learned residual weights only),
``to_q``, ``to_k``, ``to_v``, ``out`` (output projection), ``ff.0``, ``ff.2`` (a gated FFN: ``ff.up``, ``ff.down``);
the linear maps are created in that order with PyTorch's default initialisation. With ``models=K`` every parameter carries a leading
model axis (K models in one tensor program; see :mod:`~transformer_theory.models.linear`).
"""

from __future__ import annotations

import math

import torch
from torch import nn

from transformer_theory.models.attention import multi_head_attention
from transformer_theory.models.config import TransformerConfig
from transformer_theory.models.linear import Linear

_ACTIVATIONS = {"gelu": nn.GELU, "relu": nn.ReLU}


def head_mask(config: TransformerConfig, layer: int) -> torch.Tensor:
    """1 for the active heads of ``layer`` (the first ``active_heads[layer]``), 0 for the masked ones."""
    active = config.active_heads[layer] if config.active_heads is not None else config.heads[layer]
    return (torch.arange(config.heads[layer]) < active).to(getattr(torch, config.dtype))


class GatedFeedForward(nn.Module):
    """``W₃ ((W₁ x + b₁) ⊙ (W₂ x + b₂)) + b₃`` of hidden width w: ``up`` (E → 2w, the two factors stacked) and
    ``down`` (w → E); a bilinear map of the token, so it forms a product ``x(s)ᵀ A x(t)`` of two parts of the
    residual stream exactly (a departure from the papers' GeLU FFN; see ``TransformerConfig.ffn_kind``)."""

    def __init__(self, E: int, width: int, out_bias: bool, **factory) -> None:
        super().__init__()
        self.up = Linear(E, 2 * width, **factory)
        self.down = Linear(width, E, bias=out_bias, **factory)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        a, b = self.up(x).chunk(2, dim=-1)
        return self.down(a * b)


class Block(nn.Module):
    """Block ``layer`` of ``config`` acting on tokens (..., S, E), or (K, B, S, E) with ``models=K``."""

    def __init__(self, config: TransformerConfig, layer: int = 0, models: int | None = None) -> None:
        super().__init__()
        c = config
        E, h = c.width, c.heads[layer]
        factory = {"dtype": getattr(torch, c.dtype), "models": models}
        lead = () if models is None else (models,)
        self.heads, self.kind, self.order = h, c.attention, c.order
        self.tie_tol = c.hardmax_tie_tol
        self.divisor = c.temperature * (math.sqrt(c.head_dim) if c.scale_scores else 1.0)
        if c.residual == "learned":
            self.rho = nn.Parameter(torch.full((*lead, 1), c.rho, dtype=factory["dtype"]))
            self.eta = nn.Parameter(torch.full((*lead, 1), c.eta, dtype=factory["dtype"]))
        else:
            self.rho, self.eta = c.rho, c.eta
        self.to_q = Linear(E, h * c.head_dim, bias=c.attention_bias, **factory)
        self.to_k = Linear(E, h * c.head_dim, bias=c.attention_bias, **factory)
        self.to_v = Linear(E, h * c.v_dim, bias=c.attention_bias, **factory)
        self.out = Linear(h * c.v_dim, E, bias=c.attention_bias, **factory) if c.out_proj else None
        if not c.out_proj and h * c.v_dim != E:
            raise ValueError(f"without an output projection heads·value_dim = {h * c.v_dim} must equal the width "
                             f"E = {E}")
        self.ff = None
        if c.ffn_width and c.ffn_kind == "gated":
            self.ff = GatedFeedForward(E, c.ffn_width, c.ffn_out_bias, **factory)
        elif c.ffn_width:
            self.ff = nn.Sequential(
                Linear(E, c.ffn_width, **factory),
                _ACTIVATIONS[c.activation](),
                Linear(c.ffn_width, E, bias=c.ffn_out_bias, **factory),
            )
        if c.active_heads is not None:
            self.register_buffer("head_mask", head_mask(c, layer).expand(*lead, h).clone(), persistent=False)
        else:
            self.head_mask = None

    @staticmethod
    def _residual(weight: torch.Tensor | float, x: torch.Tensor) -> torch.Tensor:
        if isinstance(weight, float):
            return x if weight == 1.0 else weight * x
        if weight.dim() == 2:  # (K, 1): one scalar per model
            weight = weight.view(-1, *([1] * (x.dim() - 1)))
        return weight * x

    def attend(self, x: torch.Tensor, last_only: bool = False,
               return_weights: bool = False) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
        """``SA(X)``; with ``last_only`` only for the last token (shape (..., 1, E)); with ``return_weights``
        also the attention weights (..., h, S_q, S)."""
        a, weights = multi_head_attention(x, self.to_q, self.to_k, self.to_v, self.heads, kind=self.kind,
                                          divisor=self.divisor, tie_tol=self.tie_tol, head_mask=self.head_mask,
                                          last_only=last_only, return_weights=True)
        if self.out is not None:
            a = self.out(a)
        out = self._residual(self.rho, x[..., -1:, :] if last_only else x) + a
        return (out, weights) if return_weights else out

    def feed_forward(self, x: torch.Tensor) -> torch.Tensor:
        """``FF(x)`` on every token."""
        if self.ff is None:
            return self._residual(self.eta, x)
        return self._residual(self.eta, x) + self.ff(x)

    def forward(self, x: torch.Tensor, last_only: bool = False) -> torch.Tensor:
        return self.trace(x, last_only)[0]

    def trace(self, x: torch.Tensor, last_only: bool = False) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """``(output, post_attention, weights)``: the block's output, the residual stream right after its SA
        layer, and the attention weights (..., h, S_q, S)."""
        if self.order == "ff_sa":
            out, weights = self.attend(self.feed_forward(x), last_only, return_weights=True)
            return out, out, weights
        post, weights = self.attend(x, last_only, return_weights=True)
        return self.feed_forward(post), post, weights
