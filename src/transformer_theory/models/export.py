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
the outputs agree to rounding, not bitwise: within the float tolerance (``1e-8`` of the data's unit), which
``build_interpolator`` checks on the torch path; the construction picks its hats so that the difference stays
far below that (1e-15 to 1e-12 of the unit on the test families, circle rotations and tokens 1e-12 apart
included; about 1e-10 at N = 1000 in ``benchmarks/interpolation.py``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from transformer_theory.interpolation.arithmetic import HARDMAX_TIE_TOL, to_float
from transformer_theory.interpolation.linear_maps import RankOne
from transformer_theory.interpolation.transformer import Transformer as ConstructedTransformer
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


def to_torch(model: ConstructedTransformer) -> Transformer:
    """The model as a float64 :class:`~transformer_theory.models.Transformer` (exact models are rounded)."""
    d, blocks = model.d, model.blocks
    kinds = {b.sa.attention for b in blocks if not b.sa.is_identity}
    if len(kinds) > 1:
        raise ValueError(f"model: mixes attention kinds {sorted(kinds)}; the family uses one per model")
    orders = {b.order for b in blocks}
    if len(orders) > 1:
        raise ValueError(f"model: mixes block orders {sorted(orders)}; the family uses one per model")
    kind = kinds.pop() if kinds else "hardmax"
    head_dim = 1 if all(b.sa.is_identity or isinstance(b.sa.A, RankOne) for b in blocks) else d
    config = TransformerConfig(
        d=d, heads=(1,) * len(blocks), head_dim=head_dim, value_dim=d, out_proj=False,
        ffn_width=model.max_width, activation="relu", ffn_out_bias=False, attention=kind, scale_scores=False,
        hardmax_tie_tol=HARDMAX_TIE_TOL, residual="learned", order=orders.pop() if orders else "ff_sa",
        dtype="float64",
    )
    net = Transformer(config)
    with torch.no_grad():
        for block, layer in zip(blocks, net.blocks):
            for p in layer.parameters():
                p.zero_()
            ff, sa = block.ff, block.sa
            layer.eta.fill_(float(ff.eta))
            if ff.width and not ff.is_identity:
                layer.ff[0].weight[: ff.width] = torch.from_numpy(to_float(ff.U))
                layer.ff[0].bias[: ff.width] = torch.from_numpy(to_float(ff.b))
                layer.ff[2].weight[:, : ff.width] = torch.from_numpy(to_float(ff.W))
            layer.rho.fill_(float(sa.rho))
            if not sa.is_identity:
                q, k = _query_key(sa, d)
                if kind == "softmax":
                    q = q / sa.temperature
                layer.to_q.weight.copy_(_padded(q, head_dim))
                layer.to_k.weight.copy_(_padded(k, head_dim))
                layer.to_v.weight.copy_(torch.from_numpy(to_float(sa.matrices(d)[0])))
    return net


def torch_outputs(model: ConstructedTransformer, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """``to_torch(model)`` on every sequence in float64, sequences of one length batched as ``(B, n, d)``:
    the "torch" evaluation path of :func:`transformer_theory.interpolation.hausdorff.verify`."""
    net = to_torch(model)
    arrays = [to_float(x) for x in inputs]
    outputs: list[np.ndarray] = [np.empty(0)] * len(arrays)
    by_length: dict[int, list[int]] = {}
    for j, x in enumerate(arrays):
        by_length.setdefault(len(x), []).append(j)
    with torch.no_grad():
        for index in by_length.values():
            batch = net(torch.from_numpy(np.stack([arrays[j] for j in index]))).numpy()
            for j, out in zip(index, batch):
                outputs[j] = out
    return outputs
