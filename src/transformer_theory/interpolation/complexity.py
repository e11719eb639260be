"""Depth and parameter counts of the interpolation constructions (Theorems 1.6 and 1.8: O(M) blocks and
O(dM) parameters, independent of the input lengths n_j), measured on built models, beside the token-blind
hat ResNet of :mod:`.resnet` (that ResNet and its count are this project's), as :class:`Measurement` records; the
figures are in :mod:`transformer_theory.plotting.complexity`.
"""

from __future__ import annotations

from dataclasses import dataclass

from transformer_theory.interpolation.attention import ATTENTIONS
from transformer_theory.interpolation.construction import (build_interpolator, construction_parameter_bound,
                                                           paper_num_blocks)
from transformer_theory.interpolation.dataset import SequenceDataset
from transformer_theory.interpolation.hausdorff import hausdorff, verify
from transformer_theory.interpolation.resnet import build_hat_resnet


@dataclass(frozen=True)
class Counts:
    """One construction on one dataset: its blocks beside the paper's depth, its structured and dense parameters,
    the most structured parameters in one block, this project's bound L·(11d + 7), the largest weight and the
    largest Hausdorff error."""

    blocks: int
    paper_blocks: int
    params: int
    dense_params: int
    max_block_params: int
    bound: int
    max_abs_weight: float
    error: float


@dataclass(frozen=True)
class ResNetCounts:
    """The token-blind hat ResNet on one dataset: dense and structured parameters, and its largest error."""

    params: int
    structured_params: int
    error: float


@dataclass(frozen=True)
class Measurement:
    """Both constructions (and the hat ResNet, when measured) on a dataset of ``N`` sequences, ``M`` targets in
    all, inputs of at most ``n_max`` tokens in ``R^d``; ``tau_star`` is the softmax construction's threshold."""

    N: int
    M: int
    n_max: int
    d: int
    hardmax: Counts
    softmax: Counts
    tau_star: float
    resnet: ResNetCounts | None = None

    def counts(self, attention: str) -> Counts:
        """The counts of the construction with ``attention`` (``"hardmax"`` or ``"softmax"``)."""
        return self.hardmax if attention == "hardmax" else self.softmax


def measure(dataset: SequenceDataset, seed: int = 0, resnet: bool = True) -> Measurement:
    """Both constructions on ``dataset`` built with ``seed``, and the hat ResNet if ``resnet``."""
    counts, tau_star = {}, float("nan")
    for attention in ATTENTIONS:
        model = build_interpolator(dataset, attention=attention, seed=seed)
        counts[attention] = Counts(
            model.num_blocks, paper_num_blocks(dataset, attention), model.num_parameters(),
            model.num_parameters(structured=False),
            max(b.ff.num_parameters() + b.sa.num_parameters(dataset.d) for b in model.blocks),
            construction_parameter_bound(dataset.output_lengths, dataset.d, attention),
            model.parameter_norms()["max_abs"], float(verify(model, dataset).max()))
        if attention == "softmax":
            tau_star = model.temperature_threshold
    net = None
    if resnet:
        pairs = list(zip(dataset.inputs, dataset.targets))
        hat = build_hat_resnet(pairs, seed=seed)
        net = ResNetCounts(hat.num_parameters(), hat.num_parameters(structured=True),
                           max(float(hausdorff(hat(x), y)) for x, y in pairs))
    return Measurement(dataset.N, dataset.total_output_length, max(dataset.input_lengths), dataset.d,
                       counts["hardmax"], counts["softmax"], tau_star, net)
