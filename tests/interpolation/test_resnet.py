"""This project's token-blind hat ResNet for Paper A's comparison: it interpolates, it reads no target length,
and its counts (dense and structured) are those of the networks it actually builds."""

from __future__ import annotations

import numpy as np
import pytest

from transformer_theory.interpolation import build_interpolator, hausdorff
from transformer_theory.interpolation.construction import construction_parameter_bound
from transformer_theory.interpolation.examples import uniform_dataset
from transformer_theory.interpolation.resnet import build_hat_resnet, resnet_parameter_count


def _dataset(n_lengths, m_lengths, d, seed=0):
    rng = np.random.default_rng(seed)
    return [(rng.normal(size=(n, d)), rng.normal(size=(m, d))) for n, m in zip(n_lengths, m_lengths)]


@pytest.mark.parametrize("d, seed", [(2, 0), (3, 1), (16, 2)])
def test_hat_resnet_interpolates_without_reading_target_lengths(d, seed):
    pairs = _dataset([5, 4, 3, 6, 2], [1, 2, 1, 3, 2], d, seed)
    pairs.append((np.random.default_rng(seed + 10).normal(size=(3, d)), pairs[0][1].copy()))  # shared target
    net = build_hat_resnet(pairs, seed=seed)
    for X, Y in pairs:
        out = net(X)  # m_max = 3 tokens for every sequence
        assert out.shape == (3, d) and hausdorff(out, Y) <= 1e-10


@pytest.mark.parametrize("structured", [False, True])
def test_counts_are_the_built_networks_parameters_at_every_length(structured):
    d, m = 3, [1, 2, 1, 3]
    counts = []
    for n in (4, 8, 16, 32):
        pairs = _dataset([n, n - 1, n - 2, n], m, d, seed=n)
        net = build_hat_resnet(pairs)
        # counted layer by layer, independently of the closed formula
        by_layer = sum(1 + b.u.size + b.width + b.displacement.size + 4 if structured
                       else 1 + b.U.size + b.b.size + b.W.size for b in net.blocks)
        assert net.num_parameters(structured) == by_layer == resnet_parameter_count(pairs, structured=structured)
        assert resnet_parameter_count([n, n - 1, n - 2, n], d=d, structured=structured) == by_layer
        counts.append(by_layer)
    assert all(a < b for a, b in zip(counts, counts[1:]))  # grows with the input length


def test_resnet_grows_with_input_length_the_construction_does_not():
    m, d = 2, 4
    resnet, built = [], []
    for n in (4, 16, 64):
        ds = uniform_dataset(3, n, m, d, seed=n)
        resnet.append(build_hat_resnet(list(zip(ds.inputs, ds.targets))).num_parameters(structured=True))
        built.append(build_interpolator(ds, seed=0).num_parameters(structured=True))
    assert resnet[-1] > 10 * resnet[0]
    assert len(set(built)) == 1 and built[0] <= construction_parameter_bound([m] * 3, d)


def test_bad_input_raises():
    with pytest.raises(ValueError, match="exceeds input length"):
        build_hat_resnet(_dataset([2], [3], d=2))
    X = np.ones((2, 2))
    with pytest.raises(ValueError, match="same point"):
        build_hat_resnet([(X, X[:1]), (X.copy(), X[:1] + 1)])
    with pytest.raises(ValueError, match="empty"):
        resnet_parameter_count([])
    with pytest.raises(ValueError, match="pass d"):
        resnet_parameter_count([3, 4])


def test_repr_is_one_short_line() -> None:
    net = build_hat_resnet(_dataset([3, 4, 2], [1, 2, 2], d=3))
    assert repr(net) == f"HatResNet(d=3, n_max=4, m_max=2, 3 blocks, {net.num_parameters()} parameters)"
