"""Depth and parameter counts of the interpolation constructions (Theorems 1.6 and 1.8: O(M) blocks and
O(dM) parameters, independent of the input lengths n_j), measured on built models, beside the token-blind
hat ResNet of :mod:`.resnet` (that ResNet and its count are this project's; the paper's ResNet comparison
could not be retrieved, spec §7).
"""

from __future__ import annotations

from typing import Sequence

import matplotlib.pyplot as plt
import numpy as np

from transformer_theory.interpolation.construction import build_interpolator, paper_num_blocks
from transformer_theory.interpolation.dataset import SequenceDataset
from transformer_theory.interpolation.hausdorff import hausdorff, verify
from transformer_theory.interpolation.resnet import build_hat_resnet, construction_parameter_bound, resnet_parameter_count
from transformer_theory.plotting import PALETTE

ATTENTIONS = ("hardmax", "softmax")


def uniform_dataset(N: int, n: int, m: int, d: int, seed: int = 0) -> SequenceDataset:
    """N sequences of n tokens uniform in [−1, 1]^d, each with m targets uniform in [−1, 1]^d."""
    if not 1 <= m <= n:
        raise ValueError(f"need 1 <= m <= n for every sequence, got m = {m}, n = {n}")
    rng = np.random.default_rng(seed)
    return SequenceDataset([rng.uniform(-1, 1, (n, d)) for _ in range(N)], [rng.uniform(-1, 1, (m, d)) for _ in range(N)])


def measure(dataset: SequenceDataset, seed: int = 0, resnet: bool = True) -> dict:
    """Counts of both constructions on ``dataset`` (blocks, the paper's depth, structured and dense parameters,
    this project's bound L·(11d + 7), max error), and of the hat ResNet (parameters, max error) if ``resnet``."""
    row: dict = {"N": dataset.N, "M": dataset.total_output_length, "n_max": max(dataset.input_lengths), "d": dataset.d}
    for attention in ATTENTIONS:
        model = build_interpolator(dataset, attention=attention, seed=seed)
        row[f"{attention}_blocks"] = model.num_blocks
        row[f"{attention}_paper_blocks"] = paper_num_blocks(dataset, attention)
        row[f"{attention}_params"] = model.num_parameters()
        row[f"{attention}_dense_params"] = model.num_parameters(structured=False)
        row[f"{attention}_bound"] = construction_parameter_bound(dataset.output_lengths, dataset.d, attention)
        row[f"{attention}_error"] = float(verify(model, dataset).max())
    if resnet:
        pairs = list(zip(dataset.inputs, dataset.targets))
        net = build_hat_resnet(pairs, seed=seed)
        row["resnet_params"] = resnet_parameter_count(pairs)
        row["resnet_error"] = max(float(hausdorff(net(x, len(y)), y)) for x, y in pairs)
    return row


def plot_length_sweep(rows: Sequence[dict]) -> plt.Figure:
    """Blocks (left) and parameters (right, log scale) against the input length n_j at fixed N and M."""
    n = [r["n_max"] for r in rows]
    fig, (ax_b, ax_p) = plt.subplots(1, 2, figsize=(10, 3.8))
    for attention, marker, colour in zip(ATTENTIONS, "os", PALETTE):
        ax_b.plot(n, [r[f"{attention}_blocks"] for r in rows], marker=marker, color=colour, label=f"{attention} (ours)")
        ax_b.plot(n, [r[f"{attention}_paper_blocks"] for r in rows], ls="--", color=colour, label=f"{attention} (paper)")
        ax_p.plot(n, [r[f"{attention}_params"] for r in rows], marker=marker, color=colour, label=f"{attention}, structured")
    ax_p.plot(n, [r["softmax_dense_params"] for r in rows], ls=":", color=PALETTE[1], label="softmax, dense d×d")
    ax_p.plot(n, [r["resnet_params"] for r in rows], marker="^", color="k", label="hat ResNet (this project's)")
    ax_b.set_ylim(0, None)
    ax_b.set_ylabel("blocks")
    ax_p.set_yscale("log")
    ax_p.set_ylabel("parameters")
    for ax in (ax_b, ax_p):
        ax.set_xscale("log")
        ax.set_xlabel("input length $n_j$")
        ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def plot_size_sweep(rows: Sequence[dict], key: str = "M") -> plt.Figure:
    """Blocks (left) and structured parameters per d (right) against ``key`` (``"M"`` or ``"N"``)."""
    x = [r[key] for r in rows]
    fig, (ax_b, ax_p) = plt.subplots(1, 2, figsize=(10, 3.8))
    for attention, marker, colour in zip(ATTENTIONS, "os", PALETTE):
        ax_b.plot(x, [r[f"{attention}_blocks"] for r in rows], marker=marker, color=colour, label=f"{attention} (ours)")
        ax_b.plot(x, [r[f"{attention}_paper_blocks"] for r in rows], ls="--", color=colour, label=f"{attention} (paper)")
        ax_p.plot(x, [r[f"{attention}_params"] / r["d"] for r in rows], marker=marker, color=colour,
                  label=f"{attention}, structured / d")
    ax_b.set_ylabel("blocks")
    ax_p.set_ylabel("parameters / d")
    for ax in (ax_b, ax_p):
        ax.set_xlabel(key)
        ax.legend(fontsize=8)
    fig.tight_layout()
    return fig
