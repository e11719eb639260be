"""Multi-head self-attention: the project's one implementation (softmax or hardmax weights).

Head i of a layer has query, key and value maps ``W_Q,i``, ``W_K,i`` (n×E) and ``W_V,i`` (n_v×E), stored
stacked as three linear maps ``to_q``, ``to_k``, ``to_v`` (E → h·n); the heads' outputs are concatenated
(InfoFlow's predecessor, eq. 4; Paper A §2 with one head and ``W_V = V``). Weights are
``softmax(q·k / divisor)`` or hardmax, the uniform average over the keys whose score is within
``tie_tol·(1 + |max|)`` of the row maximum (Paper A, Fig. 2; ``divisor`` does not apply).

With ``last_only`` only the last token (the CLS token) queries. Then the keys and values are never
projected: ``q·(W_K x_t + b_K) = (W_Kᵀ q)·x_t + q·b_K`` and ``Σ_t w_t (W_V x_t + b_V) = W_V Σ_t w_t x_t + b_V``
(the weights sum to one), which costs O(T·E) per head instead of O(T·E·n). The result is the same map.

Tokens are (..., S, E) for one model, or (K, B, S, E) for K models whose maps carry a leading model
axis (:class:`~transformer_theory.models.linear.Linear` with ``models=K``). With ``return_weights`` the
attention weights come back too, (..., h, S_q, S) with S_q = S (or 1 with ``last_only``): what the
probes and attention maps of the InfoFlow chapters read (InfoFlow §4.3, §4.4).
"""

from __future__ import annotations

import torch
from transformer_theory.models.linear import Linear


def attention_weights(scores: torch.Tensor, kind: str, tie_tol: float = 0.0) -> torch.Tensor:
    """Softmax over the last axis, or hardmax: uniform over the (tolerance-)maximisers of each row."""
    if kind == "softmax":
        return torch.softmax(scores, dim=-1)
    top = scores.max(dim=-1, keepdim=True).values
    tied = (scores >= top - tie_tol * (1 + top.abs())).to(scores.dtype)
    return tied / tied.sum(dim=-1, keepdim=True)


def multi_head_attention(
    x: torch.Tensor,
    to_q: Linear,
    to_k: Linear,
    to_v: Linear,
    heads: int,
    *,
    kind: str = "softmax",
    divisor: float = 1.0,
    tie_tol: float = 0.0,
    head_mask: torch.Tensor | None = None,
    last_only: bool = False,
    return_weights: bool = False,
) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
    """The concatenated head outputs for tokens ``x``: (..., S, h·n_v), or (..., 1, h·n_v) with ``last_only``.
    ``head_mask`` (h,), or (K, h) with a model axis, multiplies each head's output (0 switches a head off).
    With ``return_weights``: ``(outputs, weights)``, the weights (..., h, S_q, S) of every head (masked ones too)."""
    n = to_q.out_features // heads
    n_v = to_v.out_features // heads
    stacked = to_q.models is not None

    def per_model(t: torch.Tensor) -> torch.Tensor:
        """A per-head tensor (K?, h, ...) shaped to broadcast against the head outputs (K?, B..., h, ...)."""
        return t.view(t.shape[0], *([1] * (x.dim() - 3)), *t.shape[1:]) if stacked else t

    if last_only:
        q = to_q(x[..., -1, :]).unflatten(-1, (heads, n))  # (..., h, n)
        if kind == "softmax" and divisor != 1:
            q = q / divisor
        contract = "kbhn,khne->kbhe" if stacked else "...hn,hne->...he"
        u = torch.einsum(contract, q, to_k.weight.unflatten(-2, (heads, n)))
        scores = u @ x.transpose(-1, -2)  # (..., h, S)
        if to_k.bias is not None:
            scores = scores + (q * per_model(to_k.bias.unflatten(-1, (heads, n)))).sum(-1, keepdim=True)
        weights = attention_weights(scores, kind, tie_tol)  # (..., h, S)
        mixed = weights @ x  # (..., h, E)
        expand = "kbhe,khne->kbhn" if stacked else "...he,hne->...hn"
        out = torch.einsum(expand, mixed, to_v.weight.unflatten(-2, (heads, n_v)))
        if to_v.bias is not None:
            out = out + per_model(to_v.bias.unflatten(-1, (heads, n_v)))
        if head_mask is not None:
            out = out * per_model(head_mask[..., None])
        out = out.flatten(-2).unsqueeze(-2)
        return (out, weights.unsqueeze(-2)) if return_weights else out
    q = to_q(x).unflatten(-1, (heads, n)).transpose(-3, -2)  # (..., h, S, n)
    if kind == "softmax" and divisor != 1:
        q = q / divisor
    k = to_k(x).unflatten(-1, (heads, n)).transpose(-3, -2)
    v = to_v(x).unflatten(-1, (heads, n_v)).transpose(-3, -2)
    weights = attention_weights(q @ k.transpose(-1, -2), kind, tie_tol)  # (..., h, S, S)
    out = weights @ v  # (..., h, S, n_v)
    if head_mask is not None:
        out = out * per_model(head_mask[..., None, None])
    out = out.transpose(-3, -2).flatten(-2)
    return (out, weights) if return_weights else out
