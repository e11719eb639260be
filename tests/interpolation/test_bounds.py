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


def test_a_shifted_hat_reaches_its_documented_count() -> None:
    """The docstring's 3d + 9 for a hat with a shift: η, u, 4 biases, δ (d), 4 bump coefficients, τ₀ (d)."""
    from transformer_theory.interpolation.examples import random_dataset

    ds = random_dataset(5, 3, seed=1)
    model = build_interpolator(ds, seed=1)
    hats = [b.ff for b in model.blocks if isinstance(b.ff, HatFeedForward)]
    assert max(h.num_parameters() for h in hats) <= 3 * 3 + 9
    assert any(h.shift is not None for h in hats)  # leader selection's first move rescales the cloud


@pytest.mark.parametrize("args,match", [(([], 2), "non-empty"), (([1, 0], 2), r"m_lengths\[1\]"),
                                        (([1], 0), "d must be a positive integer"),
                                        (([1], 2, "linear"), "attention must be one of")])
def test_bad_input(args, match) -> None:
    with pytest.raises(ValueError, match=match):
        construction_parameter_bound(*args)
