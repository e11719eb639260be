"""Paper A's constructed transformers as members of the torch family (float64), one way only.

Every block of an :class:`~transformer_theory.interpolation.transformer.Transformer` becomes a
:class:`~transformer_theory.models.Block` in FF→SA order (Alcalde, Fantuzzi, Zuazua 2025, Fig. 3):
``FF(x) = η x + W relu(U x + b)`` with ``ff.0 = (U, b)``, ``ff.2 = W`` (zero-padded to the widest layer),
and ``SA(X) = ρ X + π(X) V X`` with one head, ``to_v = V``, no output projection, and query/key maps
with ``to_qᵀ to_k = Aᵀ`` (scores ``⟨A x_i, x_l⟩``): ``to_q = bᵀ``, ``to_k = aᵀ`` for a rank-one ``A = a bᵀ``,
``to_q = I``, ``to_k = Aᵀ`` otherwise (zero-padded to a common head dimension). A softmax layer's
temperature τ is folded into its query map (``to_q / τ``), so layers with different τ share one
config; hardmax layers use the construction's tie tolerance. Identity layers get zero weights
(``V = 0``, ``W = 0``). The dense float64 evaluation rounds differently from the structured NumPy one, so
the outputs agree to rounding, not bitwise: within the dense paths' tolerance derived from the model's rounding
(:func:`~transformer_theory.interpolation.hausdorff.path_tolerance`, at least ``1e-8`` of the data's unit), which
``build_interpolator`` checks on the torch path; the construction picks its hats so that the difference stays
far below that (1e-15 to 1e-12 of the unit on the test families, circle rotations and tokens 1e-12 apart
included; up to 3e-8 on the dense NumPy path for the softmax construction at N = 2000 sequences of up to 50
tokens in R^16, where the hats' windows are narrow).
:func:`torch_outputs`, the torch check path, streams the blocks through one layer of the family instead.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from transformer_theory.interpolation.arithmetic import HARDMAX_TIE_TOL, to_float
from transformer_theory.interpolation.linear_maps import RankOne
from transformer_theory.interpolation.transformer import Transformer as ConstructedTransformer
from transformer_theory.models.block import Block
from transformer_theory.models.config import TransformerConfig
from transformer_theory.models.transformer import Transformer


def _query_key(sa, d: int) -> tuple[np.ndarray, np.ndarray]:
    """Rows of the query and key maps (``q kᵀ`` read as ``⟨A x_i, x_l⟩``)."""
    if isinstance(sa.A, RankOne):
        return to_float(sa.A.b)[None, :], to_float(sa.A.a)[None, :]
    return np.eye(d), to_float(sa.matrices(d)[1]).T


def _padded(rows: np.ndarray, n: int) -> torch.Tensor:
    out = np.zeros((n, rows.shape[1]))
    out[: rows.shape[0]] = rows
    return torch.from_numpy(out)


def _config(model: ConstructedTransformer, n_layers: int) -> TransformerConfig:
    """The family's config for ``n_layers`` blocks of ``model`` (one attention kind, one block order)."""
    blocks = model.blocks
    kinds = {b.sa.attention for b in blocks if not b.sa.is_identity}
    if len(kinds) > 1:
        raise ValueError(f"model: mixes attention kinds {sorted(kinds)}; the family uses one per model")
    orders = {b.order for b in blocks}
    if len(orders) > 1:
        raise ValueError(f"model: mixes block orders {sorted(orders)}; the family uses one per model")
    head_dim = 1 if all(b.sa.is_identity or isinstance(b.sa.A, RankOne) for b in blocks) else model.d
    return TransformerConfig(
        d=model.d, heads=(1,) * n_layers, head_dim=head_dim, value_dim=model.d, out_proj=False,
        ffn_width=model.max_width, activation="relu", ffn_out_bias=False, attention=kinds.pop() if kinds else "hardmax",
        scale_scores=False, hardmax_tie_tol=HARDMAX_TIE_TOL, residual="learned",
        order=orders.pop() if orders else "ff_sa", dtype="float64",
    )


@torch.no_grad()
def _load(layer: Block, block, config: TransformerConfig) -> None:
    """Write the weights of one constructed ``block`` into the family's ``layer``: η and ρ, and the maps of its
    non-identity layers (the FF's padding columns 0); an identity layer's maps are left as they are."""
    ff, sa = block.ff, block.sa
    layer.eta.fill_(float(ff.eta))
    if not ff.is_identity:
        for p in (layer.ff[0].weight, layer.ff[0].bias, layer.ff[2].weight):
            p.zero_()
        layer.ff[0].weight[: ff.width] = torch.from_numpy(to_float(ff.U))
        layer.ff[0].bias[: ff.width] = torch.from_numpy(to_float(ff.b))
        layer.ff[2].weight[:, : ff.width] = torch.from_numpy(to_float(ff.W))
    layer.rho.fill_(float(sa.rho))
    if not sa.is_identity:
        q, k = _query_key(sa, config.d)
        if config.attention == "softmax":
            q = q / sa.temperature
        layer.to_q.weight.copy_(_padded(q, config.head_dim))
        layer.to_k.weight.copy_(_padded(k, config.head_dim))
        layer.to_v.weight.copy_(torch.from_numpy(to_float(sa.matrices(config.d)[0])))


def to_torch(model: ConstructedTransformer) -> Transformer:
    """The model as a float64 :class:`~transformer_theory.models.Transformer` (exact models are rounded)."""
    config = _config(model, len(model.blocks))
    net = Transformer(config)
    with torch.no_grad():
        for p in net.parameters():
            p.zero_()  # identity layers: zero maps
    for block, layer in zip(model.blocks, net.blocks):
        _load(layer, block, config)
    return net


def _apply(layer: Block, block, tokens: torch.Tensor, groups: list[torch.Tensor]) -> torch.Tensor:
    """The family's ``layer`` (loaded with ``block``) on the stacked ``tokens`` (T, d): the FF on all of them at
    once (it acts token by token), the SA on each group of equal-length sequences (``groups``: (B, n) token
    indices); identity layers are skipped: their formulas (``1·x + 0``, ``1·X + π(X)·0``) return the input
    exactly, as on the NumPy paths."""
    def ff(x: torch.Tensor) -> torch.Tensor:
        return x if block.ff.is_identity else layer.feed_forward(x)

    def sa(x: torch.Tensor) -> torch.Tensor:
        if block.sa.is_identity:
            return x
        out = torch.empty_like(x)
        for index in groups:
            out[index] = layer.attend(x[index])
        return out

    return sa(ff(tokens)) if block.order == "ff_sa" else ff(sa(tokens))


def torch_outputs(model: ConstructedTransformer, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """The "torch" evaluation path of :func:`transformer_theory.interpolation.hausdorff.verify`: every sequence
    through the model's blocks as layers of the family in float64, streamed.

    One layer of the family is loaded with each block in turn (:func:`to_torch`'s weights, never the whole
    model at once) and applied to the stacked tokens (:func:`_apply`: attention within each sequence, the
    sequences of one length batched as (B, n, d)). Memory: the tokens plus one group's attention weights,
    whatever the depth; time: a layer call per block (and per length for the few attention layers that are not
    the identity), on one thread."""
    arrays = [to_float(x) for x in inputs]
    lengths = np.array([len(x) for x in arrays], dtype=np.intp)
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.intp)
    groups = [torch.from_numpy(starts[lengths == n][:, None] + np.arange(n)[None, :]) for n in np.unique(lengths)]
    tokens = torch.from_numpy(np.concatenate(arrays)) if arrays else torch.zeros(0, model.d, dtype=torch.float64)
    if model.blocks:
        config = _config(model, 1)
        layer = Block(config)
        threads = torch.get_num_threads()
        torch.set_num_threads(1)  # the layer calls are tiny: more threads only synchronise (10x slower under load)
        try:
            with torch.no_grad():
                for block in model.blocks:
                    if not block.is_identity:
                        _load(layer, block, config)
                        tokens = _apply(layer, block, tokens, groups)
        finally:
            torch.set_num_threads(threads)
    out = tokens.numpy()
    return [out[a: a + n] for a, n in zip(starts, lengths)]
