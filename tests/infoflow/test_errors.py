"""Bad input gets a ValueError naming the parameter or variable."""

import numpy as np
import pytest

from transformer_theory.infoflow import (Architecture, Bilinear, Custom, Linear, NormOfSum, Positions, Reduction, Tree,
                                         pairwise_max, predict, propagate, specific_positions)


@pytest.mark.parametrize("kw,msg", [
    (dict(heads=(2, 0), embed_dim=8, input_dim=4), r"heads\[1\] = 0: every layer needs at least one head"),
    (dict(heads=(-1,), embed_dim=8, input_dim=4), r"heads\[0\] = -1"),
    (dict(heads=(), embed_dim=8, input_dim=4), "at least one layer"),
    (dict(heads=(1.5,), embed_dim=8, input_dim=4), "integers"),
    (dict(heads=(1,), embed_dim=0, input_dim=4), r"embed_dim \(the embedding dimension E\) must be a positive integer, got 0"),
    (dict(heads=(1,), embed_dim=8, input_dim=0), r"input_dim \(the token dimension d\) must be a positive integer, got 0"),
    (dict(heads=3, embed_dim=8, input_dim=4), "heads must be a sequence"),
])
def test_architecture_errors(kw, msg):
    with pytest.raises(ValueError, match=msg):
        Architecture(**kw)


def test_architecture_basics():
    arch = Architecture([2, 4], embed_dim=32, input_dim=4)
    assert arch.heads == (2, 4) and arch.n_layers == 2 and arch.per_head_dim(2) == 8.0


def test_undefined_variable():
    with pytest.raises(ValueError, match="reduction 'max over s' uses variable 't' that no enclosing reduction binds"):
        Tree([Reduction("max", "s", Bilinear("s", "t"))], input_dim=4)


def test_rebinding_and_unused_variable():
    with pytest.raises(ValueError, match="rebinds variable 't'"):
        inner = Reduction("max", "t", Linear("t", np.ones(4)))
        Tree([Reduction("max", "t", Custom(lambda x, m: x[..., 0] + m, ("t", inner)))], input_dim=4)
    with pytest.raises(ValueError, match="does not read 's'"):
        Reduction("max", "s", Linear("t", np.ones(4)))
    with pytest.raises(ValueError, match="op must be"):
        Reduction("mean", "s", Linear("s", np.ones(4)))
    with pytest.raises(ValueError, match="rank"):
        Reduction("max", "s", Linear("s", np.ones(4)), rank=0)
    with pytest.raises(ValueError, match="NormOfSum"):
        NormOfSum(("a", "a"))


def test_positional_encoding_required():
    with pytest.raises(ValueError, match="specific_positions needs positional=True"):
        propagate(specific_positions(), Architecture((1,), 8, 2), 10)
    with pytest.raises(ValueError, match="exceeds seq_len"):
        predict(specific_positions((1, 5)), Architecture((1,), 8, 2, positional=True), 4)
    with pytest.raises(ValueError, match="1-based"):
        Positions((0, 1))


def test_dimension_mismatch_and_bad_data():
    with pytest.raises(ValueError, match="arch.input_dim = 2"):
        predict(pairwise_max(2), Architecture((2, 2), 8, 2), 8)
    with pytest.raises(ValueError, match="seq_len"):
        predict(pairwise_max(2), Architecture((2, 2), 8, 4), 0)
    with pytest.raises(ValueError, match="token dimension 3"):
        pairwise_max(2)(np.zeros((2, 5, 3)))
    with pytest.raises(ValueError, match="shape"):
        pairwise_max(2)(np.zeros((5, 4)))
    with pytest.raises(ValueError, match="D must be a positive integer, got 0"):
        pairwise_max(0)
