"""The parameters of chapters 00 to 06, whose notebooks compute everything themselves (constructions, measurements,
the Tikhonov fits, the InfoFlow calculator; no experiment of the run store): one frozen dataclass per chapter, the
single source of the names, defaults, types and one-line descriptions of its notebook's ``parameters`` cell, checked on
construction (``ValueError`` naming the parameter), so a bad value fails before a kernel starts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from transformer_theory.checks import positive_int, positive_real, seed_value
from transformer_theory.chapters.experiment import non_empty_list
from transformer_theory.chapters.parameters import int_lists, param, positive_ints, store

__all__ = ["ComplexityParameters", "HardmaxParameters", "InfoFlowFrameworkParameters", "LayersParameters",
           "OverviewParameters", "SoftmaxParameters", "TikhonovParameters"]


def positive_reals(p: Any, *names: str) -> None:
    """Each of ``names`` is a positive finite number."""
    for name in names:
        positive_real(name, getattr(p, name))


def real_lists(p: Any, *names: str) -> None:
    """Each of ``names`` is a non-empty list of positive finite numbers, stored as a tuple."""
    for name in names:
        values = non_empty_list(name, getattr(p, name), "positive numbers")
        store(p, name, tuple(positive_real(f"{name}[{i}]", v) for i, v in enumerate(values)))


def at_least(name: str, value: int, low: int, why: str) -> None:
    """``value`` (a checked integer) is at least ``low``; ``why`` says why, for the message."""
    if value < low:
        raise ValueError(f"{name} must be at least {low} ({why}), got {value}")


@dataclass(frozen=True)
class OverviewParameters:
    """Chapter 00: one hardmax self-attention layer (A = I, ρ = 1 − c, V = cI) applied repeatedly to a point cloud."""

    seed: int = param(0, "seed of the point cloud")
    n_points: int = param(200, "points of the cloud")
    n_layers: int = param(15, "times the layer is applied")
    c: float = param(0.5, "the layer's V = cI and rho = 1 - c")

    def __post_init__(self) -> None:
        seed_value(self.seed)
        positive_ints(self, "n_points", "n_layers")
        positive_reals(self, "c")


@dataclass(frozen=True)
class LayersParameters:
    """Chapter 01: the layers of Paper A, hardmax as the limit of softmax, and Lemma 4.1's point sets."""

    seed: int = param(0, "seed of the random point sets")
    n_points: int = param(11, "points of each of Lemma 4.1's point sets (at least 2)")
    temperatures: Sequence[float] = param((1.0, 0.3, 0.1, 0.03, 0.01, 0.003),
                                          "softmax temperatures of the hardmax limit, decreasing")

    def __post_init__(self) -> None:
        seed_value(self.seed)
        at_least("n_points", positive_int("n_points", self.n_points), 2, "a box of points and its far corner")
        real_lists(self, "temperatures")


@dataclass(frozen=True)
class HardmaxParameters:
    """Chapter 02: the hardmax interpolator of Paper A (Theorem 3.1) on random datasets."""

    seed: int = param(0, "seed of the datasets and the constructions")
    N: int = param(20, "sequences of each random dataset")
    d: int = param(3, "token dimension")
    n_max: int = param(8, "most tokens of a sequence")
    n_datasets: int = param(5, "random datasets (every other one draws its inputs from a shared pool)")

    def __post_init__(self) -> None:
        seed_value(self.seed)
        positive_ints(self, "N", "d", "n_max", "n_datasets")


@dataclass(frozen=True)
class SoftmaxParameters:
    """Chapter 03: the softmax interpolator of Paper A, its temperature threshold and the robustness table."""

    seed: int = param(0, "seed of the datasets and the constructions")
    tau_ratios: Sequence[float] = param((0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 0.5, 0.75, 1.0, 1.25, 1.5, 1.75, 2.0,
                                         4.0, 8.0), "temperatures of the sweep, as multiples of the threshold")
    dims: Sequence[int] = param((2, 3, 16), "token dimensions d of the robustness table")
    scales: Sequence[float] = param((0.001, 1.0, 1000.0), "scales of the tokens in the robustness table")
    N: int = param(12, "sequences of each dataset of the robustness table (at least 2)")

    def __post_init__(self) -> None:
        seed_value(self.seed)
        real_lists(self, "tau_ratios", "scales")
        int_lists(self, "dims")
        at_least("N", positive_int("N", self.N), 2, "the near-duplicates family pairs N/2 sequences")


@dataclass(frozen=True)
class ComplexityParameters:
    """Chapter 04: the depth and parameter counts of the constructions against the sizes of the dataset."""

    seed: int = param(0, "seed of the datasets and the constructions")
    d: int = param(8, "token dimension")
    N: int = param(4, "sequences in the length sweep")
    m: int = param(2, "targets per sequence in the length sweep (at most every length)")
    lengths: Sequence[int] = param((10, 30, 100, 300, 1000), "tokens per sequence n_j of the length sweep")
    m_values: Sequence[int] = param((1, 2, 3, 4, 5), "targets per sequence at n_fixed tokens (M is N times m)")
    N_values: Sequence[int] = param((2, 4, 8, 16, 32), "numbers of sequences, with m targets and n_fixed tokens each")
    n_fixed: int = param(20, "tokens per sequence of the target and sequence sweeps")

    def __post_init__(self) -> None:
        seed_value(self.seed)
        positive_ints(self, "d", "N", "m", "n_fixed")
        int_lists(self, "lengths", "m_values", "N_values")
        if self.m > min(self.lengths):
            raise ValueError(f"m = {self.m} targets need every length >= m, got lengths {list(self.lengths)}")
        if max(self.m_values) > self.n_fixed:
            raise ValueError(f"m_values must be at most n_fixed = {self.n_fixed}, got {list(self.m_values)}")


@dataclass(frozen=True)
class TikhonovParameters:
    """Chapter 05: the Tikhonov-regularised training of Paper A's Fig. 1 and its certificate."""

    seed: int = param(0, "seed of the data and the model")
    N: int = param(10, "sequences")
    d: int = param(16, "token dimension")
    n: int = param(100, "tokens per sequence")
    eps_fig1a: float = param(1e-4, "regularisation eps of Fig. 1a")
    epochs_fig1a: int = param(50000, "training epochs of Fig. 1a")
    eps_list: Sequence[float] = param((0.1, 0.01, 0.001), "regularisations eps of Fig. 1b's stages")
    epochs_list: Sequence[int] = param((5000, 10000, 50000), "epochs of each stage of Fig. 1b (one per eps)")
    failed_epochs: Sequence[int] = param((300, 300, 300), "epochs of an under-trained sweep of the same eps (the "
                                                          "certificate must expose it)")
    diagnostic_eps: Sequence[float] = param((0.1, 0.01, 0.001, 0.0001), "regularisations of the frozen-eta run")
    diagnostic_epochs: Sequence[int] = param((3000, 3000, 3000, 3000), "epochs of each frozen-eta stage (one per eps)")
    bound_factor: float = param(1.0, "each Fig. 1b stage must end with J below bound_factor times the bound")
    threshold_factor: float = param(1.0, "the final Fig. 1a loss must be below threshold_factor times the threshold")
    paper_rel_tol: float = param(0.05, "our headline numbers must match the published ones to this relative "
                                       "difference")
    diagnostic_slope_max: float = param(0.6, "the slope of the frozen-eta run stays below this")

    def __post_init__(self) -> None:
        seed_value(self.seed)
        positive_ints(self, "N", "d", "n", "epochs_fig1a")
        positive_reals(self, "eps_fig1a", "bound_factor", "threshold_factor", "paper_rel_tol", "diagnostic_slope_max")
        real_lists(self, "eps_list", "diagnostic_eps")
        int_lists(self, "epochs_list", "failed_epochs", "diagnostic_epochs")
        for epochs, eps in (("epochs_list", "eps_list"), ("failed_epochs", "eps_list"),
                            ("diagnostic_epochs", "diagnostic_eps")):
            if len(getattr(self, epochs)) != len(getattr(self, eps)):
                raise ValueError(f"{epochs} must give one epoch count per value of {eps} "
                                 f"({len(getattr(self, eps))}), got {list(getattr(self, epochs))}")


@dataclass(frozen=True)
class InfoFlowFrameworkParameters:
    """Chapter 06: InfoFlow's comparison trees, information sets and efficiency predictions (the calculator)."""

    seq_len: int = param(8, "sequence length T of the statistics and predictions")
    eps: float = param(1e-3, "target accuracy eps of the prediction table")
    seed: int = param(0, "seed of the sampled inputs")
    embed_dim: int = param(32, "width E of the architectures")
    gamma: float = param(1.0, "the FFN's approximation exponent: eps^-gamma parameters for the smooth parts")

    def __post_init__(self) -> None:
        seed_value(self.seed)
        positive_ints(self, "seq_len", "embed_dim")
        positive_reals(self, "eps", "gamma")
