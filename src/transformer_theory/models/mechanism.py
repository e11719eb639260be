"""Layer 1 of InfoFlow's two-layer mechanism for ``Σ_i max_{s,t} x(s)ᵀ A_i x(t)``, set by hand: the control that
separates "the family cannot represent the mechanism" from "training does not find it" (InfoFlow §4.1; the
construction is this book's reconstruction of the mechanism the paper describes).

Head i of the first block retrieves, at every token t, the token ``x(s*)`` with ``s* = argmax_s x(s)ᵀ A_i x(t)``
(sharp softmax attention) and writes it into a free part of the residual stream; the encoder passes ``x(t)``
through. The rest of the model (both FFNs, the second block, the readout, the CLS token) keeps its random
initialisation: the first FFN still has to form the products and the second block to take the maxima.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from transformer_theory.models.config import TransformerConfig
from transformer_theory.models.transformer import Transformer


def retrieval_layer_problems(config: TransformerConfig, d: int, terms: int) -> list[str]:
    """Why :func:`set_retrieval_layer` cannot set ``config``'s first block for ``terms`` matrices of size d×d
    (empty: it can)."""
    c, problems = config, []
    heads = min(c.heads[0], terms)
    if c.encoder_width is None or c.encoder_width < 2 * d:
        problems.append(f"an encoder of width at least 2d = {2 * d} (it passes x through as relu([x; -x])), "
                        f"got {c.encoder_width}")
    if c.max_len is not None or c.joint_positions:
        problems.append("no positional encoding (it would mix into the tokens the heads compare)")
    if c.width < d * (1 + heads):
        problems.append(f"a residual width E >= d·(1 + heads) = {d * (1 + heads)} (x(t) and one retrieved token "
                        f"per head), got {c.width}")
    if c.head_dim < d or c.v_dim < d:
        problems.append(f"head and value dimensions >= d = {d}, got {c.head_dim} and {c.v_dim}")
    if not c.out_proj:
        problems.append("an output projection (it writes the retrieved token into a free part of the stream)")
    if c.attention != "softmax" or c.order != "sa_ff":
        problems.append("softmax attention before the FFN in each block")
    return problems


@torch.no_grad()
def set_retrieval_layer(model: Transformer, matrices: np.ndarray, sharpness: float) -> None:
    """Set ``model``'s encoder and first attention layer to the retrieval mechanism, in place.

    Args:
        model: A model without a model axis (``models=None``); its config must pass
            :func:`retrieval_layer_problems`.
        matrices: The target's matrices ``A_i``, (D, d, d); head i < min(heads, D) gets ``A_i`` (a model with fewer
            heads than matrices retrieves only the first terms; extra heads keep their random maps).
        sharpness: The score of head i is ``sharpness · x(s)ᵀ A_i x(t)`` (the query map carries
            ``sharpness·√n``, so that attention is sharp).

    Raises:
        ValueError: the model cannot hold the mechanism (naming what it lacks).
    """
    A = np.asarray(matrices, dtype=float)
    if A.ndim != 3 or A.shape[1] != A.shape[2]:
        raise ValueError(f"matrices must be (D, d, d), got shape {A.shape}")
    c, d = model.config, A.shape[1]
    if model.models is not None:
        raise ValueError("set_retrieval_layer needs a single model (models=None)")
    if c.d != d:
        raise ValueError(f"the model's token dimension d = {c.d} differs from the matrices' {d}")
    problems = retrieval_layer_problems(c, d, len(A))
    if problems:
        raise ValueError("the model cannot hold the retrieval mechanism: it needs " + "; ".join(problems))
    dtype = getattr(torch, c.dtype)
    eye = torch.eye(d, dtype=dtype)
    first, _, second = model.encoder
    for layer in (first, second):
        layer.weight.zero_()
        layer.bias.zero_()
    first.weight[:d], first.weight[d:2 * d] = eye, -eye
    second.weight[:d, :d], second.weight[:d, d:2 * d] = eye, -eye
    block = model.blocks[0]
    n, n_v = c.head_dim, c.v_dim
    for layer in (block.to_q, block.to_k, block.to_v, block.out):
        if layer.bias is not None:
            layer.bias.zero_()
    scale = sharpness * math.sqrt(n)
    for i in range(min(c.heads[0], len(A))):
        for layer, rows in ((block.to_q, n), (block.to_k, n), (block.to_v, n_v)):
            layer.weight[i * rows:(i + 1) * rows].zero_()
        block.to_q.weight[i * n:i * n + d, :d] = scale * torch.as_tensor(A[i], dtype=dtype)
        block.to_k.weight[i * n:i * n + d, :d] = eye
        block.to_v.weight[i * n_v:i * n_v + d, :d] = eye
        block.out.weight[:, i * n_v:(i + 1) * n_v].zero_()
        block.out.weight[d * (1 + i):d * (2 + i), i * n_v:i * n_v + d] = eye
