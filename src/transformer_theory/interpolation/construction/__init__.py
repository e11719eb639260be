"""Constructions of interpolating transformers, one builder per attention kind.

``build_interpolator`` dispatches on ``attention``: hardmax (Theorem 1.6, :mod:`.hardmax`) or softmax
(Theorem 1.8, :mod:`.softmax`). The paper's depths and this project's parameter bounds: :mod:`.bounds`.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from transformer_theory.checks import boolean, one_of, positive_int, seed_value
from transformer_theory.interpolation.attention import ATTENTIONS
from transformer_theory.interpolation.construction.bounds import (PAPER_NUM_BLOCKS, block_parameter_bound,
                                                                  construction_parameter_bound)
from transformer_theory.interpolation.construction.hardmax import build_hardmax
from transformer_theory.interpolation.construction.softmax import build_softmax
from transformer_theory.interpolation.dataset import SequenceDataset
from transformer_theory.interpolation.hausdorff import PATHS, check_paths
from transformer_theory.interpolation.transformer import Transformer

__all__ = ["BUILDERS", "CHECK_SEQUENCES", "PAPER_NUM_BLOCKS", "block_parameter_bound", "build_interpolator",
           "construction_parameter_bound", "paper_num_blocks"]

#: attention kind -> builder(dataset, *, seed, match_paper_depth, exact, **options) -> Transformer
BUILDERS: dict[str, Callable[..., Transformer]] = {"hardmax": build_hardmax, "softmax": build_softmax}


def paper_num_blocks(dataset: SequenceDataset, attention: str = "hardmax") -> int:
    """The depth stated in the paper for this dataset (hardmax ``2M + 2N + 1``, softmax ``2M + 3N``)."""
    return PAPER_NUM_BLOCKS[one_of("attention", attention, ATTENTIONS)](dataset.N, dataset.total_output_length)


#: Above this many sequences ``build_interpolator`` checks the dense and torch paths on a seeded sample of this
#: many: a dense evaluation costs about (depth × checked tokens) layer evaluations, the torch one a layer call
#: per block (:func:`~transformer_theory.models.export.torch_outputs`), so checking every sequence would cost
#: O(N²) time, the depth growing with N.
CHECK_SEQUENCES = 8


def build_interpolator(
    dataset: SequenceDataset,
    attention: str = "hardmax",
    seed: int = 0,
    match_paper_depth: bool = False,
    exact: bool = False,
    check: Sequence[str] = ("dense", "torch"),
    check_sequences: int | None = CHECK_SEQUENCES,
    **options: Any,
) -> Transformer:
    """A transformer ``T`` with ``d_H(T(X^j), Y^j) = 0`` for every sequence of ``dataset``.

    ``seed`` fixes every random choice (same seed, same model); ``match_paper_depth`` pads with identity
    blocks to the paper's depth; ``exact=True`` builds and evaluates in rational arithmetic (hardmax only).
    Before returning, the model is verified on every sequence on the structured path (the construction tracks
    it, at no extra cost) and on the evaluation paths in ``check``
    (:data:`~transformer_theory.interpolation.hausdorff.PATHS`) on ``check_sequences`` sequences drawn with
    ``seed`` (all of them when there are no more; ``None``: all). Each costs a pass through every block for the
    checked tokens, linear in the depth for a fixed sample: with the default, hardmax N = 4000 sequences of up to
    50 tokens in R^16 (15 750 blocks) takes 7.8 s of CPU instead of 3.0 s for build and verify, at 0.36 GB peak
    RSS (``benchmarks/interpolation.py``); ``check_sequences=None`` there would pass every block over all 100 000
    tokens twice. ``check=()`` skips them.
    A miss beyond :func:`~transformer_theory.interpolation.hausdorff.path_tolerance` raises ``RuntimeError``
    naming the path and the sequence. ``model.checked`` says how many sequences each path was checked on.
    Softmax options (``temperature``, ``allow_above_threshold``, ``slot_offset``, ``sphere_radius``):
    :func:`~transformer_theory.interpolation.construction.softmax.build_softmax`.
    """
    if not isinstance(dataset, SequenceDataset):
        raise ValueError(f"dataset must be a SequenceDataset, got {type(dataset).__name__}")
    one_of("attention", attention, ATTENTIONS)
    seed_value(seed)
    boolean("match_paper_depth", match_paper_depth)
    boolean("exact", exact)
    if isinstance(check, str):
        raise ValueError(f"check must be a sequence of path names, got the string {check!r}")
    for path in check:
        one_of("check", path, PATHS)
    if check_sequences is not None:
        positive_int("check_sequences", check_sequences)
    model = BUILDERS[attention](dataset, seed=seed, match_paper_depth=match_paper_depth, exact=exact, **options)
    if model.guaranteed:
        model.checked = {"structured": dataset.N, **check_paths(
            model, dataset, [path for path in check if path != "structured"], check_sequences, seed)}
    return model
