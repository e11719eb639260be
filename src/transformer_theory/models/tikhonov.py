"""The model of Paper A's Tikhonov experiment (§6, Figs. 1a/1b), with its data, exact interpolant and loss.

Library version of the official experiment (``tikhonov/`` of the official code,
github.com/DCN-FAU-AvH/exactInterpTF): synthetic data produced by one transformer block, a model
class that contains that block (hence an exact interpolant θ*, :func:`exact_interpolant`), and the
Hausdorff-to-singleton loss. The model is a one-block member of the family (:class:`TikhonovTransformer`).

Conventions of the official code, kept here: the block is SA *then* FF (the paper's construction
uses FF then SA). A model with η frozen at 0 has no exact interpolant: its loss floor is
:func:`frozen_eta_loss_bound`.

The chapter's training (Adam with weight decay ε, the ε sweeps, their stored runs) is
:mod:`transformer_theory.chapters.tikhonov`.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn

from transformer_theory.checks import positive_int, seed_value
from transformer_theory.models.block import Block
from transformer_theory.models.config import TransformerConfig

__all__ = [
    "SyntheticData",
    "TikhonovTransformer",
    "generate_synthetic_data",
    "setup_experiment",
    "exact_interpolant",
    "squared_norm",
    "hausdorff_to_singleton_loss",
    "frozen_eta_loss_bound",
]

#: Hidden width of the FF layer in the official code.
FF_WIDTH = 4


@dataclass(frozen=True)
class SyntheticData:
    """Inputs, singleton targets and the generating block's FF weights (official notation).

    ``inputs``: (N, n, d); ``targets``: (N, 1, d); the generating block is SA with Q = K = 0,
    V = I, ρ = 0 (every token becomes its sequence's mean) followed by
    FF(x) = x + relu(x U + b) W with ``W``: (4, d), ``U``: (d, 4), ``b``: (4,).
    """

    inputs: torch.Tensor
    targets: torch.Tensor
    W: torch.Tensor
    U: torch.Tensor
    b: torch.Tensor


def generate_synthetic_data(
    N: int = 10, d: int = 16, n: int = 100, seed: int = 0, dtype: torch.dtype = torch.float32
) -> SyntheticData:
    """The data of Figs. 1a/1b, reproducing ``generateSyntheticData`` of the official code.

    Seeds ``random``, NumPy and torch with ``seed`` (the official scripts' order), then draws
    ``inputs = torch.rand(N, n, d)``, ``W = torch.rand(4, d)``, ``U = torch.rand(d, 4)``,
    ``b = torch.rand(4)`` in float32, exactly as the official code. The draws are then cast to
    ``dtype`` and the generating block is evaluated in ``dtype``: with float32 the targets are the
    official ones; with float64 the same data are pushed through the block without rounding, so
    the exact interpolant has loss 0 up to float64 round-off. The torch global RNG is left where
    the official code leaves it, so a model created right after (see :func:`setup_experiment`) gets
    the official initialisation.

    Args:
        N: The number of sequences.
        d: The token dimension.
        n: The tokens per input sequence.
        seed: Seeds ``random``, NumPy and torch.
        dtype: ``torch.float32`` or ``torch.float64``: the precision of the data and of the generating block.
    """
    for name, value in (("N", N), ("d", d), ("n", n)):
        positive_int(name, value)
    seed_value(seed)
    if dtype not in (torch.float32, torch.float64):
        raise ValueError(f"dtype must be torch.float32 or torch.float64, got {dtype}")
    random.seed(int(seed))
    np.random.seed(int(seed))
    torch.manual_seed(int(seed))
    inputs = torch.rand(N, n, d).to(dtype)
    W = torch.rand(FF_WIDTH, d).to(dtype)
    U = torch.rand(d, FF_WIDTH).to(dtype)
    b = torch.rand(FF_WIDTH).to(dtype)
    # SA with Q = K = 0 (uniform attention), V = I, rho = 0: every token becomes the mean.
    scores = torch.zeros(N, n, n, dtype=dtype)
    sa = torch.bmm(torch.softmax(scores, dim=-1), inputs)
    out = sa + torch.relu(sa @ U + b) @ W
    return SyntheticData(inputs=inputs, targets=out[:, -1:, :], W=W, U=U, b=b)


class TikhonovTransformer(Block):
    """The official ``TF(d, h=1, tau, causal=False, depth=1)`` as a one-block member of the model family.

    ``x ← ρ x + softmax(q kᵀ / τ) v`` with ``to_q``, ``to_k``: Linear(d→h, no bias) (a rank-h score
    matrix) and ``to_v``: Linear(d→d, no bias); then ``x ← η x + ff(x)`` with
    ``ff = Linear(d→ff_width) → ReLU → Linear(ff_width→d, no bias)``. ρ and η start at 0; the
    Linear layers get PyTorch's default initialisation, created in the official order (to_q, to_k,
    to_v, ff[0], ff[2]). Parameter names: ``rho, eta, to_q.weight, to_k.weight, to_v.weight,
    ff.0.weight, ff.0.bias, ff.2.weight`` (422 parameters at d = 16, h = 1, width 4).
    """

    def __init__(self, d: int, h: int = 1, tau: float = 1.0, ff_width: int = FF_WIDTH) -> None:
        for name, value in (("d", d), ("h", h), ("ff_width", ff_width)):
            positive_int(name, value)
        if not tau > 0:
            raise ValueError(f"temperature tau must be positive, got {tau!r}")
        super().__init__(TransformerConfig(
            d=d, heads=(1,), head_dim=h, value_dim=d, out_proj=False, ffn_width=ff_width,
            activation="relu", ffn_out_bias=False, attention="softmax", temperature=float(tau), scale_scores=False,
            residual="learned", rho=0.0, eta=0.0, order="sa_ff"))


def setup_experiment(
    N: int = 10,
    d: int = 16,
    n: int = 100,
    seed: int = 0,
    dtype: torch.dtype = torch.float32,
    ff_width: int = FF_WIDTH,
) -> tuple[SyntheticData, TikhonovTransformer]:
    """Data then model, in the official scripts' RNG order (same data and initialisation).

    The model is initialised in float32 (PyTorch's default init, as in the official code) and then
    cast to ``dtype``, so float32 and float64 runs start from the same values.

    Args:
        N, d, n, seed, dtype: As in :func:`generate_synthetic_data`.
        ff_width: The hidden width of the model's FF layer.

    Returns:
        The data and the model (:class:`TikhonovTransformer`).
    """
    data = generate_synthetic_data(N=N, d=d, n=n, seed=seed, dtype=dtype)
    model = TikhonovTransformer(d, ff_width=ff_width).to(dtype)
    return data, model


def exact_interpolant(data: SyntheticData, h: int = 1) -> dict[str, torch.Tensor]:
    """θ*: the generating block written in :class:`TikhonovTransformer`'s parameters (a state dict).

    Q = K = 0, V = I, ρ = 0, η = 1, ``ff.0.weight = Uᵀ``, ``ff.0.bias = b``, ``ff.2.weight = Wᵀ``.
    Load it with ``model.load_state_dict(exact_interpolant(data))``.

    Args:
        data: The synthetic data (its generating block).
        h: The rank of the model's score matrix (the rows of ``to_q`` and ``to_k``).
    """
    d = data.inputs.shape[-1]
    dt = data.inputs.dtype
    return {
        "rho": torch.zeros(1, dtype=dt),
        "eta": torch.ones(1, dtype=dt),
        "to_q.weight": torch.zeros(h, d, dtype=dt),
        "to_k.weight": torch.zeros(h, d, dtype=dt),
        "to_v.weight": torch.eye(d, dtype=dt),
        "ff.0.weight": data.U.T.clone(),
        "ff.0.bias": data.b.clone(),
        "ff.2.weight": data.W.T.clone(),
    }


def squared_norm(params: dict[str, torch.Tensor] | nn.Module) -> float:
    """‖θ‖²: the sum of squares of all parameters (of a state dict or a module).

    For θ* this is the official ``exact_L2norm`` formula ‖V‖_F² + η² + ‖W‖_F² + ‖U‖_F² + ‖b‖²
    (Q, K, ρ are zero), with V = I as the generator intends (the published script reassigns ``V``
    to ``inputs @ V`` before taking its norm; see the chapter).
    """
    tensors = params.parameters() if isinstance(params, nn.Module) else params.values()
    return float(sum(float(torch.sum(t.detach().double() ** 2)) for t in tensors))


def hausdorff_to_singleton_loss(pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """Mean over the batch of max over tokens of ‖T_i(X) − y‖² (squared Hausdorff distance to {y}).

    ``pred``: (B, n, d); ``target``: (B, d) or (B, 1, d). As ``hausdorff_to_singleton_loss`` of the
    official code.
    """
    if target.dim() == 3 and target.shape[1] == 1:
        target = target[:, 0, :]
    if pred.dim() != 3 or target.dim() != 2 or pred.shape[0] != target.shape[0] or pred.shape[2] != target.shape[1]:
        raise ValueError(
            f"expected pred (B, n, d) and target (B, d) or (B, 1, d), got {tuple(pred.shape)} and {tuple(target.shape)}"
        )
    return ((pred - target.unsqueeze(1)) ** 2).sum(dim=-1).max(dim=1).values.mean()


def frozen_eta_loss_bound(targets: torch.Tensor, ff_width: int = FF_WIDTH) -> float:
    """Lower bound on the loss of any model with η = 0: (1/N) Σ_{k > width} σ_k(Y)².

    With η = 0 every output token is W σ(…) and lies in the column space of W (dimension at most
    ``ff_width``), so each sequence's loss is at least the squared distance of its target to that
    subspace; by Eckart–Young the best subspace leaves the tail of the singular values of the
    (N, d) target matrix Y. Positive as soon as rank Y > ``ff_width``: that model class has no exact
    interpolant (the diagnostic run of the chapter).
    """
    positive_int("ff_width", ff_width)
    if targets.dim() not in (2, 3) or (targets.dim() == 3 and targets.shape[1] != 1):
        raise ValueError(f"targets must be (N, d) or (N, 1, d), got {tuple(targets.shape)}")
    Y = targets.reshape(targets.shape[0], -1).detach().double()
    sigma = torch.linalg.svdvals(Y)
    return float((sigma[ff_width:] ** 2).sum() / Y.shape[0])
