"""This project's ResNet comparison for Paper A (spec §7): a token-blind hat ResNet that works."""

from __future__ import annotations

import numpy as np
import pytest

from transformer_theory.interpolation.construction import construction_parameter_bound
from transformer_theory.interpolation.resnet import build_hat_resnet, resnet_parameter_count


def _dataset(n_lengths, m_lengths, d, seed=0):
    rng = np.random.default_rng(seed)
    return [(rng.normal(size=(n, d)), rng.normal(size=(m, d))) for n, m in zip(n_lengths, m_lengths)]


@pytest.mark.parametrize("d, seed", [(2, 0), (3, 1), (16, 2)])
def test_hat_resnet_interpolates(d, seed):
    pairs = _dataset([5, 4, 3, 6, 2], [1, 2, 1, 3, 2], d, seed)
    pairs.append((np.random.default_rng(seed + 10).normal(size=(3, d)), pairs[0][1].copy()))  # shared target
    net = build_hat_resnet(pairs, seed=seed)
    for X, Y in pairs:
        np.testing.assert_allclose(net(X, len(Y)), Y, atol=1e-10)


def test_count_is_the_built_networks_parameters():
    pairs = _dataset([5, 4, 3, 6], [1, 2, 1, 3], d=3)
    net = build_hat_resnet(pairs)
    assert resnet_parameter_count(pairs) == net.n_parameters == 4 * (8 * 3 * 6 + 5)
    assert resnet_parameter_count([5, 4, 3, 6], d=3) == net.n_parameters


def test_resnet_grows_with_input_length_construction_does_not():
    m, d = [1, 2, 1], 4
    resnet = [resnet_parameter_count([n] * 3, d=d) for n in (4, 8, 16, 32)]
    construction = [construction_parameter_bound(m, d) for _ in (4, 8, 16, 32)]
    assert all(a < b for a, b in zip(resnet, resnet[1:]))
    assert len(set(construction)) == 1


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
