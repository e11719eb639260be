"""Paper A's constructed transformers exported into the family: batches, exact models, the layout of the
exported weights and the models the family cannot hold. (Agreement with the NumPy evaluation on toy and
random datasets, hardmax and softmax, is tested with the constructions in ``tests/interpolation``.)"""

from __future__ import annotations

import numpy as np
import pytest
import torch

from transformer_theory.interpolation import SelfAttention, SequenceDataset, build_interpolator
from transformer_theory.interpolation.examples import random_dataset, toy_dataset
from transformer_theory.interpolation.feed_forward import FeedForward
from transformer_theory.interpolation.linear_maps import DenseMatrix, RankOne
from transformer_theory.interpolation.transformer import Block as ConstructedBlock
from transformer_theory.interpolation.transformer import Transformer as ConstructedTransformer
from transformer_theory.models import Transformer
from transformer_theory.models.export import to_torch, torch_outputs


def test_batch_of_equal_length_sequences() -> None:
    rng = np.random.default_rng(0)
    ds = SequenceDataset([rng.normal(size=(5, 3)) for _ in range(4)], [rng.normal(size=(2, 3)) for _ in range(4)])
    model = build_interpolator(ds, attention="softmax")
    net = to_torch(model)
    out = net(torch.from_numpy(np.stack(ds.inputs))).detach().numpy()
    for y, x in zip(out, ds.inputs):
        ref = model(x)
        np.testing.assert_allclose(y, ref, rtol=0, atol=1e-11 * np.abs(ref).max())


def test_exact_model_is_rounded_to_float64() -> None:
    ds = toy_dataset()
    exact = build_interpolator(ds, exact=True)
    net = to_torch(exact)
    for x in ds.inputs:
        ref = np.asarray(exact(x), dtype=float)
        out = net(torch.from_numpy(x)).detach().numpy()
        np.testing.assert_allclose(out, ref, rtol=0, atol=1e-11 * np.abs(ref).max())


def test_exported_layout() -> None:
    model = build_interpolator(random_dataset(4, 3, seed=1))
    net = to_torch(model)
    assert isinstance(net, Transformer) and net.config.n_layers == model.num_blocks
    assert net.config.ffn_width == model.max_width and net.config.value_dim == 3 and not net.config.out_proj
    for block, layer in zip(model.blocks, net.blocks):
        V, A = block.sa.matrices(3)
        np.testing.assert_array_equal(layer.to_v.weight.detach().numpy(), V)
        # scores ⟨A x_i, x_l⟩ = x_l^T A x_i: the query/key maps realise A
        qk = layer.to_k.weight.detach().numpy().T @ layer.to_q.weight.detach().numpy()
        np.testing.assert_allclose(qk, A, rtol=0, atol=1e-15 * (1 + np.abs(A).max()))
        assert layer.eta.item() == float(block.ff.eta) and layer.rho.item() == float(block.sa.rho)


def test_models_outside_the_family_are_rejected() -> None:
    d = 2
    ff = FeedForward.identity(d)
    rank_one = RankOne(np.array([1.0, 0.0]), np.array([0.0, 1.0]))
    blocks = [ConstructedBlock(ff, SelfAttention(0.5, DenseMatrix(np.eye(d)), rank_one, "hardmax")),
              ConstructedBlock(ff, SelfAttention(0.5, DenseMatrix(np.eye(d)), rank_one, "softmax", 1.0))]
    with pytest.raises(ValueError, match="mixes attention kinds"):
        to_torch(ConstructedTransformer(blocks, d))
    blocks[1] = ConstructedBlock(ff, SelfAttention(0.5, DenseMatrix(np.eye(d)), rank_one, "hardmax"), order="sa_ff")
    with pytest.raises(ValueError, match="mixes block orders"):
        to_torch(ConstructedTransformer(blocks, d))


@pytest.mark.parametrize("attention", ["hardmax", "softmax"])
def test_streamed_torch_outputs_equal_the_exported_net_on_each_sequence(attention: str) -> None:
    """The torch check path (``torch_outputs``: one layer loaded per block, the tokens of all sequences stacked
    for the FF and grouped by length for the SA, identity layers skipped) computes what the whole exported net
    computes on each sequence alone."""
    ds = random_dataset(12, 3, seed=2, n_max=7)
    assert len(set(ds.input_lengths)) > 2
    model = build_interpolator(ds, attention=attention, check=())
    net = to_torch(model)
    for out, x in zip(torch_outputs(model, ds.inputs), ds.inputs):
        ref = net(torch.from_numpy(x)).detach().numpy()
        np.testing.assert_allclose(out, ref, rtol=0, atol=1e-13 * ds.unit)
        assert out.shape == x.shape

