"""The paper's depths and this project's parameter bounds (``construction/bounds.py``), checked on built models."""

from __future__ import annotations

import pytest
from hypothesis import given, settings

from strategies.interpolation import datasets
from transformer_theory.interpolation import build_interpolator, paper_num_blocks
from transformer_theory.interpolation.construction import block_parameter_bound, construction_parameter_bound
from transformer_theory.interpolation.feed_forward import HatFeedForward


def test_paper_depths_are_the_stated_formulas() -> None:
    # Theorem 1.6: 2M + 2N + 1; Theorem 1.8: 2M + 3N (N = 3 sequences, M = 4 targets)
    m = [1, 2, 1]
    assert construction_parameter_bound(m, 5) == 15 * block_parameter_bound(5)
    assert construction_parameter_bound(m, 5, "softmax") == 17 * block_parameter_bound(5)


@settings(max_examples=25)
@given(datasets(max_N=5))
def test_every_block_is_within_the_per_block_bound(ds) -> None:
    for attention in ("hardmax", "softmax"):
        model = build_interpolator(ds, attention=attention, seed=0)
        per_block = [b.ff.num_parameters() + b.sa.num_parameters(ds.d) for b in model.blocks]
        assert max(per_block) <= block_parameter_bound(ds.d)
        assert sum(per_block) == model.num_parameters()
        assert model.num_blocks <= paper_num_blocks(ds, attention)
        assert model.num_parameters() <= construction_parameter_bound(ds.output_lengths, ds.d, attention)


def test_the_layer_counts_of_the_docstring() -> None:
    """bounds.py's per-layer counts: a hat 2d + 9, the affine embedding 2d + 2, all at most 8d + 5."""
    from transformer_theory.interpolation.examples import random_dataset

    d = 3
    model = build_interpolator(random_dataset(5, d, seed=1), seed=1)
    hats = [b.ff for b in model.blocks if isinstance(b.ff, HatFeedForward)]
    others = [b.ff for b in model.blocks if not isinstance(b.ff, HatFeedForward) and not b.ff.is_identity]
    assert hats and {h.num_parameters() for h in hats} == {2 * d + 9}
    assert others and all(f.num_parameters() <= 8 * d + 5 for f in others)


@pytest.mark.parametrize("args,match", [(([], 2), "non-empty"), (([1, 0], 2), r"m_lengths\[1\]"),
                                        (([1], 0), "d must be a positive integer"),
                                        (([1], 2, "linear"), "attention must be one of")])
def test_bad_input(args, match) -> None:
    with pytest.raises(ValueError, match=match):
        construction_parameter_bound(*args)
