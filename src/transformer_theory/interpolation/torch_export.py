"""Export of a :class:`~transformer_theory.interpolation.transformer.Transformer` to PyTorch (float64).

Each layer becomes standard modules: ``FF(x) = η x + Linear(w→d, no bias)(ReLU(Linear(d→w)(x)))``
and attention with ``to_q``, ``to_k`` (d→h, no bias; scores ``⟨to_q x_i, to_k x_l⟩ = ⟨A x_i, x_l⟩``,
so ``to_qᵀ to_k = Aᵀ``), ``to_v`` (d→d, the matrix V) and ``SA(X) = ρ X + π(X) to_v(X)``. Hardmax uses
the same tie tolerance as NumPy; softmax is ``torch.softmax(scores / τ)``. Identity layers become
``nn.Identity``. The dense float64 evaluation rounds differently from the structured NumPy one, so
outputs agree to rounding, not bitwise: within the float tolerance (``1e-8`` of the data's unit), which
``build_interpolator`` checks on the torch path; the construction picks its hats so that the difference stays
far below that (1e-15 to 1e-12 of the unit on the test families, circle rotations and tokens 1e-12 apart
included; about 1e-10 at N = 1000 in ``benchmarks/interpolation.py``).
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from transformer_theory.interpolation.arithmetic import HARDMAX_TIE_TOL, to_float
from transformer_theory.interpolation.attention import SelfAttention
from transformer_theory.interpolation.linear_maps import RankOne
from transformer_theory.interpolation.feed_forward import FeedForwardLayer
from transformer_theory.interpolation.transformer import Block, Transformer


def _linear(weight: np.ndarray, bias: np.ndarray | None = None) -> nn.Linear:
    weight = to_float(weight)
    layer = nn.Linear(weight.shape[1], weight.shape[0], bias=bias is not None, dtype=torch.float64)
    with torch.no_grad():
        layer.weight.copy_(torch.from_numpy(weight))
        if bias is not None:
            layer.bias.copy_(torch.from_numpy(to_float(bias)))
    return layer


class TorchFeedForward(nn.Module):
    """``η x + W σ(U x + b)``."""

    def __init__(self, ff: FeedForwardLayer) -> None:
        super().__init__()
        self.eta = nn.Parameter(torch.tensor(float(ff.eta), dtype=torch.float64))
        self.up = _linear(ff.U, ff.b)
        self.down = _linear(ff.W)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.eta * x + self.down(torch.relu(self.up(x)))


class TorchSelfAttention(nn.Module):
    """``ρ X + π(X) V X`` with hardmax (uniform over tolerance-ties) or softmax weights."""

    def __init__(self, sa: SelfAttention, d: int) -> None:
        super().__init__()
        V, A = sa.matrices(d)
        if isinstance(sa.A, RankOne):  # A = a bᵀ: scores (b·x_i)(a·x_l)
            q, k = sa.A.b[None, :], sa.A.a[None, :]
        else:
            q, k = np.eye(d), np.asarray(A).T
        self.rho = nn.Parameter(torch.tensor(float(sa.rho), dtype=torch.float64))
        self.to_q, self.to_k, self.to_v = _linear(q), _linear(k), _linear(V)
        self.attention = sa.attention
        self.temperature = sa.temperature

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        scores = self.to_q(x) @ self.to_k(x).transpose(-1, -2)
        if self.attention == "softmax":
            weights = torch.softmax(scores / self.temperature, dim=-1)
        else:
            top = scores.max(dim=-1, keepdim=True).values
            tied = (scores >= top - HARDMAX_TIE_TOL * (1 + top.abs())).to(x.dtype)
            weights = tied / tied.sum(dim=-1, keepdim=True)
        return self.rho * x + weights @ self.to_v(x)


class TorchBlock(nn.Module):
    def __init__(self, block: Block, d: int) -> None:
        super().__init__()
        self.ff = nn.Identity() if block.ff.is_identity else TorchFeedForward(block.ff)
        self.sa = nn.Identity() if block.sa.is_identity else TorchSelfAttention(block.sa, d)
        self.order = block.order

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.sa(self.ff(x)) if self.order == "ff_sa" else self.ff(self.sa(x))


class TorchTransformer(nn.Module):
    """Input ``(n, d)`` or a batch ``(B, n, d)`` of equally long sequences, float64."""

    def __init__(self, model: Transformer) -> None:
        super().__init__()
        self.blocks = nn.ModuleList(TorchBlock(b, model.d) for b in model.blocks)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for block in self.blocks:
            x = block(x)
        return x


def to_torch(model: Transformer) -> TorchTransformer:
    """The model as a float64 ``torch.nn.Module`` (exact models are rounded to float64)."""
    return TorchTransformer(model)
