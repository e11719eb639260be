"""The Tikhonov model of Paper A §6 is a configuration of the family: the same initialisation, forward
map, gradients and training curve, bit for bit, as a frozen copy of the project's former module."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

from transformer_theory.chapters.tikhonov_runs import train_tikhonov
from transformer_theory.models.tikhonov import (TikhonovTransformer, exact_interpolant, generate_synthetic_data,
                                                hausdorff_to_singleton_loss)
from transformer_theory.models import Block

pytestmark = pytest.mark.usefixtures("one_torch_thread")


class FrozenOfficialTF(nn.Module):
    """Frozen copy of the module this project used before the family (the official ``TF`` block)."""

    def __init__(self, d: int, h: int = 1, tau: float = 1.0, ff_width: int = 4) -> None:
        super().__init__()
        self.tau = float(tau)
        self.rho = nn.Parameter(torch.zeros(1))
        self.eta = nn.Parameter(torch.zeros(1))
        self.to_q = nn.Linear(d, h, bias=False)
        self.to_k = nn.Linear(d, h, bias=False)
        self.to_v = nn.Linear(d, d, bias=False)
        self.ff = nn.Sequential(nn.Linear(d, ff_width), nn.ReLU(), nn.Linear(ff_width, d, bias=False))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        scores = (self.to_q(x) / self.tau) @ self.to_k(x).transpose(-2, -1)
        x = self.rho * x + torch.softmax(scores, dim=-1) @ self.to_v(x)
        return self.eta * x + self.ff(x)


def pair(seed: int = 0, **kwargs) -> tuple[nn.Module, nn.Module]:
    generate_synthetic_data(seed=seed)  # the official RNG order: data, then model
    frozen = FrozenOfficialTF(16, **kwargs)
    generate_synthetic_data(seed=seed)
    return frozen, TikhonovTransformer(16, **kwargs)


def test_is_a_family_block_with_the_official_names_and_init() -> None:
    frozen, ours = pair()
    assert isinstance(ours, Block)
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in frozen.named_parameters()]
    assert sum(p.numel() for p in ours.parameters()) == 422
    for (name, a), b in zip(ours.state_dict().items(), frozen.state_dict().values()):
        assert torch.equal(a, b), name


@pytest.mark.parametrize("tau", [1.0, 0.3])
def test_forward_and_gradients_are_bitwise_the_frozen_ones(tau) -> None:
    frozen, ours = pair(tau=tau)
    data = generate_synthetic_data(seed=1)
    with torch.no_grad():
        for m in (frozen, ours):
            m.rho.fill_(0.4)
            m.eta.fill_(0.9)
    outputs = [m(data.inputs) for m in (frozen, ours)]
    assert torch.equal(outputs[0], outputs[1])
    for m, out in zip((frozen, ours), outputs):
        hausdorff_to_singleton_loss(out, data.targets).backward()
    for (name, a), b in zip(ours.named_parameters(), frozen.parameters()):
        assert torch.equal(a.grad, b.grad), name


def test_training_curve_and_exact_interpolant_are_unchanged() -> None:
    data = generate_synthetic_data(N=4, d=16, n=12, seed=2)
    frozen, ours = pair(seed=2)
    curves = [train_tikhonov(m, data.inputs, data.targets, eps=1e-3, epochs=60, lr=1e-2, progress=False)
              for m in (frozen, ours)]
    np.testing.assert_array_equal(curves[0], curves[1])
    ours.load_state_dict(exact_interpolant(data))  # θ* in the official parameter names still loads
    frozen.load_state_dict(exact_interpolant(data))
    assert torch.equal(ours(data.inputs), frozen(data.inputs))
