"""Constructions of interpolating transformers, one builder per attention kind.

``build_interpolator`` dispatches on ``attention``: hardmax (Theorem 1.6, :mod:`.hardmax`) or softmax
(Theorem 1.8, :mod:`.softmax`). The paper's depths and this project's parameter bounds: :mod:`.bounds`.
"""

from __future__ import annotations

from typing import Any, Callable

from transformer_theory.checks import one_of
from transformer_theory.interpolation.attention import ATTENTIONS
from transformer_theory.interpolation.construction.bounds import (PAPER_NUM_BLOCKS, block_parameter_bound,
                                                                  construction_parameter_bound)
from transformer_theory.interpolation.construction.hardmax import build_hardmax
from transformer_theory.interpolation.construction.softmax import build_softmax
from transformer_theory.interpolation.dataset import SequenceDataset
from transformer_theory.interpolation.transformer import Transformer

__all__ = ["BUILDERS", "PAPER_NUM_BLOCKS", "block_parameter_bound", "build_interpolator",
           "construction_parameter_bound", "paper_num_blocks"]

#: attention kind -> builder(dataset, *, seed, match_paper_depth, exact, **options) -> Transformer
BUILDERS: dict[str, Callable[..., Transformer]] = {"hardmax": build_hardmax, "softmax": build_softmax}


def paper_num_blocks(dataset: SequenceDataset, attention: str = "hardmax") -> int:
    """The depth stated in the paper for this dataset (hardmax ``2M + 2N + 1``, softmax ``2M + 3N``)."""
    return PAPER_NUM_BLOCKS[one_of("attention", attention, ATTENTIONS)](dataset.N, dataset.total_output_length)


def build_interpolator(
    dataset: SequenceDataset,
    attention: str = "hardmax",
    seed: int = 0,
    match_paper_depth: bool = False,
    exact: bool = False,
    **options: Any,
) -> Transformer:
    """A transformer ``T`` with ``d_H(T(X^j), Y^j) = 0`` for every sequence of ``dataset``.

    ``seed`` fixes every random choice (same seed, same model); ``match_paper_depth`` pads with identity
    blocks to the paper's depth; ``exact=True`` builds and evaluates in rational arithmetic (hardmax only).
    Softmax options (``temperature``, ``allow_above_threshold``, ``slot_offset``, ``sphere_radius``):
    :func:`~transformer_theory.interpolation.construction.softmax.build_softmax`.
    """
    if not isinstance(dataset, SequenceDataset):
        raise ValueError(f"dataset must be a SequenceDataset, got {type(dataset).__name__}")
    one_of("attention", attention, ATTENTIONS)
    return BUILDERS[attention](dataset, seed=seed, match_paper_depth=match_paper_depth, exact=exact, **options)
