"""Depth and parameter counts of the interpolation constructions (Theorems 1.6 and 1.8: O(M) blocks and
O(dM) parameters, independent of the input lengths n_j), measured on built models, beside the token-blind
hat ResNet of :mod:`.resnet` (that ResNet and its count are this project's). Rows only: the figures are in
:mod:`transformer_theory.plotting.complexity`.
"""

from __future__ import annotations

from transformer_theory.interpolation.attention import ATTENTIONS
from transformer_theory.interpolation.construction import (build_interpolator, construction_parameter_bound,
                                                           paper_num_blocks)
from transformer_theory.interpolation.dataset import SequenceDataset
from transformer_theory.interpolation.hausdorff import hausdorff, verify
from transformer_theory.interpolation.resnet import build_hat_resnet


def measure(dataset: SequenceDataset, seed: int = 0, resnet: bool = True) -> dict:
    """Counts of both constructions on ``dataset`` (blocks, the paper's depth, structured and dense parameters,
    the most structured parameters in one block, this project's bound L·(11d + 7), the largest weight, τ* for
    softmax, max error), and of the hat ResNet (dense and structured parameters, max error) if ``resnet``."""
    row: dict = {"N": dataset.N, "M": dataset.total_output_length, "n_max": max(dataset.input_lengths), "d": dataset.d}
    for attention in ATTENTIONS:
        model = build_interpolator(dataset, attention=attention, seed=seed)
        row[f"{attention}_blocks"] = model.num_blocks
        row[f"{attention}_paper_blocks"] = paper_num_blocks(dataset, attention)
        row[f"{attention}_params"] = model.num_parameters()
        row[f"{attention}_dense_params"] = model.num_parameters(structured=False)
        row[f"{attention}_max_block_params"] = max(
            b.ff.num_parameters() + b.sa.num_parameters(dataset.d) for b in model.blocks)
        row[f"{attention}_max_abs_weight"] = model.parameter_norms()["max_abs"]
        row[f"{attention}_bound"] = construction_parameter_bound(dataset.output_lengths, dataset.d, attention)
        row[f"{attention}_error"] = float(verify(model, dataset).max())
        if attention == "softmax":
            row["tau_star"] = model.temperature_threshold
    if resnet:
        pairs = list(zip(dataset.inputs, dataset.targets))
        net = build_hat_resnet(pairs, seed=seed)
        row["resnet_params"] = net.num_parameters()
        row["resnet_structured_params"] = net.num_parameters(structured=True)
        row["resnet_error"] = max(float(hausdorff(net(x), y)) for x, y in pairs)
    return row
