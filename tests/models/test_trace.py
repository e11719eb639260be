"""``Transformer.trace``: the forward pass's internals (attention weights, post-attention states) agree with
an independent step-by-step computation, and its output is the model's output (InfoFlow §4.3's probe and
§4.4's attention map read them)."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest
import torch

from transformer_theory.models import Transformer, TransformerConfig
from transformer_theory.training.ensemble import Ensemble
from transformer_theory.training import RunConfig


def config(**changes) -> TransformerConfig:
    base = dict(d=3, heads=(2, 1), embed_dim=8, head_dim=4, ffn_width=6, encoder_width=5, cls_token=True,
                readout_dim=2, max_len=7, dtype="float64")
    return TransformerConfig(**{**base, **changes})


def by_hand(model: Transformer, x: torch.Tensor, layer: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Attention weights and post-attention state of block ``layer`` from the layers' weights (all queries)."""
    h = model.encoder(x) + model.pos[: x.shape[-2]]
    h = torch.cat([h, model.cls.expand(x.shape[0], 1, -1)], dim=-2)
    for i, block in enumerate(model.blocks):
        heads, n = block.heads, model.config.head_dim
        q = (h @ block.to_q.weight.T).unflatten(-1, (heads, n)).transpose(1, 2)
        k = (h @ block.to_k.weight.T).unflatten(-1, (heads, n)).transpose(1, 2)
        v = (h @ block.to_v.weight.T).unflatten(-1, (heads, n)).transpose(1, 2)
        w = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(n), dim=-1)
        post = h + (w @ v).transpose(1, 2).flatten(-2) @ block.out.weight.T
        if i == layer:
            return w, post
        h = post + block.ff(post)
    raise AssertionError("no such layer")


@pytest.mark.parametrize("cls_only_last", [False, True])
def test_trace_matches_a_step_by_step_computation(cls_only_last: bool) -> None:
    torch.manual_seed(0)
    model = Transformer(config(cls_only_last=cls_only_last))
    x = torch.randn(5, 6, 3, dtype=torch.float64)
    trace = model.trace(x)
    torch.testing.assert_close(trace.output, model(x), rtol=0, atol=0)
    assert trace.tokens.shape == (5, 7, 8) and len(trace.attention) == 2
    w0, post0 = by_hand(model, x, 0)
    torch.testing.assert_close(trace.attention[0], w0, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(trace.post_attention[0], post0, rtol=1e-12, atol=1e-12)
    w1, post1 = by_hand(model, x, 1)
    if cls_only_last:  # only the CLS token queries in the last block
        assert trace.attention[1].shape == (5, 1, 1, 7)
        w1, post1 = w1[..., -1:, :], post1[..., -1:, :]
    torch.testing.assert_close(trace.attention[1], w1, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(trace.post_attention[1], post1, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(trace.attention[0].sum(-1), torch.ones(5, 2, 7, dtype=torch.float64))


def test_ff_sa_order_records_the_state_after_attention() -> None:
    torch.manual_seed(1)
    model = Transformer(config(order="ff_sa"))
    x = torch.randn(2, 4, 3, dtype=torch.float64)
    trace = model.trace(x)
    for post, state in zip(trace.post_attention, trace.states):
        torch.testing.assert_close(post, state, rtol=0, atol=0)  # the SA layer is the block's last layer


def test_positional_encoding_with_a_model_axis() -> None:
    """K models with positional encoding run as one program (the length check reads max_len, not K)."""
    model = replace(config(readout_dim=1, dtype="float32"), d=4, heads=(1,))
    runs = [RunConfig(model=model, target="max_retrieval", target_args={"D": 1}, seq_len=7, steps=1, seed=s)
            for s in (0, 1)]
    ensemble = Ensemble(runs)
    x = torch.randn(2, 3, 7, 4)
    out = ensemble(x)
    for i in range(2):
        torch.testing.assert_close(out[i], ensemble.model(i)(x[i]), rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="max_len 7"):
        ensemble(torch.randn(2, 3, 8, 4))
