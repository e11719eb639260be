"""Tikhonov-regularised training of a one-block transformer (Paper A, §6, Figs. 1a/1b).

Library version of the official experiment (``tikhonov/`` of the official code,
github.com/DCN-FAU-AvH/exactInterpTF): synthetic data produced by one transformer block, a model
class that contains that block (hence an exact interpolant θ*), the Hausdorff-to-singleton loss,
and Adam training with coupled weight decay ε.

Why the experiment works (Paper A §6, statement reconstructed): with L the data term and
J_ε(θ) = L(θ) + ε‖θ‖², any global minimiser θ_ε satisfies L(θ_ε) ≤ J_ε(θ_ε) ≤ J_ε(θ*) = ε‖θ*‖²,
so the optimal training loss scales (at most) linearly in ε. A fitted slope of log(min loss) vs
log ε far from 1 flags training that did not reach a global minimiser, or a model class without an
exact interpolant (e.g. η frozen at 0 through ``frozen`` in :func:`train_tikhonov`; its loss floor
is :func:`frozen_eta_loss_bound`).

Conventions of the official code, kept here: the block is SA *then* FF (the paper's construction
uses FF then SA); ``torch.optim.Adam(weight_decay=ε)`` adds ε·θ to the gradient, i.e. it
minimises L + (ε/2)‖θ‖², whereas the plotted threshold is ε‖θ*‖² (the inequality still holds,
with room to spare).

The chapter's trainings run as stored, resumable runs on the engine's Dask executor:
:mod:`~transformer_theory.training.tikhonov_runs`.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn
from tqdm import tqdm

from transformer_theory.checks import positive_int, seed_value
from transformer_theory.models import Block, TransformerConfig

__all__ = [
    "SyntheticData",
    "TikhonovTransformer",
    "generate_synthetic_data",
    "setup_experiment",
    "exact_interpolant",
    "squared_norm",
    "hausdorff_to_singleton_loss",
    "train_tikhonov",
    "StageResult",
    "tikhonov_bound",
    "epsilon_sweep",
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


def train_tikhonov(
    model: nn.Module,
    inputs: torch.Tensor,
    targets: torch.Tensor,
    eps: float,
    epochs: int,
    lr: float = 1e-3,
    frozen: Mapping[str, float] | None = None,
    progress: bool = True,
) -> np.ndarray:
    """Train ``model`` in place as the official ``train_model``; return the per-epoch data-term loss.

    Adam(lr, weight_decay = ε) with CosineAnnealingLR(T_max = epochs), one full-batch step per
    epoch (the official DataLoader has batch size N with shuffling, which only permutes the terms
    of the mean). The loss recorded at epoch k is the data term L(θ_k) before the k-th step.
    ``frozen`` maps parameter names (as in ``model.named_parameters()``) to a constant they are set
    to and kept at, e.g. ``{"eta": 0.0}``: a non-residual FF layer, a model class without an exact
    interpolant whose minimal loss stalls at a floor instead of scaling linearly in ε (the
    diagnostic of Paper A §6, see :func:`frozen_eta_loss_bound`).

    Args:
        model: The model, trained in place.
        inputs: (N, n, d).
        targets: (N, 1, d) or (N, d).
        eps: The weight decay ε, positive.
        epochs: The number of full-batch steps (and the cosine schedule's length).
        lr: Adam's learning rate.
        frozen: Parameter name -> the constant it is set to and kept at.
        progress: Show a tqdm bar.

    Returns:
        (epochs,): the data term before each step.
    """
    if isinstance(eps, bool) or not isinstance(eps, (int, float, np.floating)) or not (eps > 0 and math.isfinite(eps)):
        raise ValueError(f"regularisation eps must be a positive finite number, got {eps!r}")
    eps = float(eps)
    positive_int("epochs", epochs)
    if not lr > 0:
        raise ValueError(f"learning rate lr must be positive, got {lr!r}")
    frozen = dict(frozen or {})
    names = dict(model.named_parameters())
    unknown = sorted(set(frozen) - set(names))
    if unknown:
        raise ValueError(f"frozen: unknown parameter names {unknown}; the model has {sorted(names)}")
    with torch.no_grad():
        for name, value in frozen.items():
            names[name].fill_(float(value))
    trainable = [p for name, p in names.items() if name not in frozen]
    # fused=True: the same Adam update in one kernel (about 3x cheaper on CPU for these tiny tensors).
    optimizer = torch.optim.Adam(trainable, lr=lr, weight_decay=eps, fused=True)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=epochs)
    losses = np.empty(epochs)
    model.train()
    for epoch in tqdm(range(epochs), desc=f"eps={eps:g}", disable=not progress, mininterval=2.0):
        optimizer.zero_grad()
        loss = hausdorff_to_singleton_loss(model(inputs), targets)
        loss.backward()
        optimizer.step()
        scheduler.step()
        losses[epoch] = loss.item()
    return losses


@dataclass(frozen=True)
class StageResult:
    """One ε of a sweep: the per-epoch data-term losses, and the data term and ‖θ‖² of the parameters the
    stage ended with (after its last step)."""

    eps: float
    losses: np.ndarray
    final_loss: float
    final_sq_norm: float

    @property
    def min_loss(self) -> float:
        """The smallest per-epoch data term of the stage."""
        return float(self.losses.min())

    @property
    def objective(self) -> float:
        """``J(θ) = L(θ) + (ε/2)‖θ‖²`` at the final parameters: the objective ``Adam(weight_decay=ε)`` minimises."""
        return self.final_loss + self.eps / 2 * self.final_sq_norm

    def certifies_not_global(self, theta_star_sq_norm: float) -> bool:
        """``J(θ) > (ε/2)‖θ*‖² = J(θ*)``: then θ is provably not a global minimiser of J (see
        :func:`tikhonov_bound`)."""
        return self.objective > tikhonov_bound(self.eps, theta_star_sq_norm)


def tikhonov_bound(eps: float, theta_star_sq_norm: float) -> float:
    """``(ε/2)‖θ*‖²``: an upper bound on ``L(θ_ε) ≤ J(θ_ε) ≤ J(θ*)`` for every global minimiser θ_ε of
    ``J = L + (ε/2)‖θ‖²`` when ``L(θ*) = 0`` (Paper A §6, statement reconstructed). The official figure's
    threshold line ε‖θ*‖² is twice this bound."""
    return eps / 2 * theta_star_sq_norm


def epsilon_sweep(
    model: nn.Module,
    inputs: torch.Tensor,
    targets: torch.Tensor,
    eps_list: Sequence[float],
    epochs_list: Sequence[int],
    lr: float = 1e-3,
    frozen: Mapping[str, float] | None = None,
    progress: bool = True,
) -> list[StageResult]:
    """Fig. 1b protocol (``tikhonovEpsilon.py``): train the *same* model successively (warm start).

    For each ε (with its number of epochs) run :func:`train_tikhonov`; each stage records its loss curve and
    the data term and squared norm of the parameters it ends with.

    Args:
        eps_list: The ε of the successive stages.
        epochs_list: The epochs of each stage (same length as ``eps_list``).
        lr, frozen, progress: As in :func:`train_tikhonov` (``model``, ``inputs``, ``targets`` too).

    Returns:
        One :class:`StageResult` per stage.
    """
    if len(eps_list) != len(epochs_list) or len(eps_list) == 0:
        raise ValueError(
            f"eps_list and epochs_list must be non-empty and of equal length, got {len(eps_list)} and {len(epochs_list)}"
        )
    stages = []
    for eps, epochs in zip(eps_list, epochs_list):
        losses = train_tikhonov(model, inputs, targets, eps, epochs, lr=lr, frozen=frozen, progress=progress)
        with torch.no_grad():
            final = hausdorff_to_singleton_loss(model(inputs), targets).item()
        stages.append(StageResult(float(eps), losses, final, squared_norm(model)))
    return stages


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
