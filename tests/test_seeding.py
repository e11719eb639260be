"""One seed fixes Python's, NumPy's and torch's random streams."""

from __future__ import annotations

import random

import numpy as np
import pytest
import torch

from transformer_theory.seeding import seed_everything


def draws(seed: int) -> tuple:
    rng = seed_everything(seed)
    return random.random(), np.random.rand(), torch.rand(1).item(), rng.random()


def test_same_seed_same_draws_other_seed_other_draws() -> None:
    assert draws(3) == draws(3)
    assert all(a != b for a, b in zip(draws(3), draws(4)))


@pytest.mark.parametrize("bad", [-1, 1.5, True, "0"])
def test_bad_seed_is_rejected(bad) -> None:
    with pytest.raises(ValueError, match="seed must be a non-negative integer"):
        seed_everything(bad)
