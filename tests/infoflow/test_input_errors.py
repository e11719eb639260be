"""Bad input is refused with a clear ValueError when the object is built, never silently computed."""

import numpy as np
import pytest

from transformer_theory.infoflow import (Architecture, Bilinear, Custom, GaussianInputs, Linear, NormOfSum, Positions,
                                         Reduction, Sum, Tree, min_pairwise_dot, pairwise_max, predict)


def test_a_score_that_keeps_the_feature_axis_is_refused_at_build():
    """max_t x(t) would otherwise reduce over the d features instead of the T positions."""
    with pytest.raises(ValueError, match=r"returned shape \(16, 4\).*token-feature axis"):
        Tree([Reduction("max", "t", Custom(lambda x: x, ("t",)))], input_dim=4)
    with pytest.raises(ValueError, match="token-feature axis"):
        Tree([Reduction("max", "t", Custom(lambda x: 2 * x, ("t",), name="double"))], input_dim=4)
    ok = Tree([Reduction("max", "t", Custom(lambda x: x[..., 0], ("t",)))], input_dim=4)
    X = ok.sample_inputs(3, 5, 0)
    np.testing.assert_allclose(ok(X), X[..., 0].max(axis=1))


def test_a_custom_that_fails_on_random_inputs_is_refused_at_build():
    with pytest.raises(ValueError, match="Custom 'bad' failed on 16 random inputs"):
        Tree([Reduction("max", "t", Custom(lambda x: x @ np.ones(3), ("t",), name="bad"))], input_dim=4)
    with pytest.raises(ValueError, match="NaN"):
        Tree([Reduction("max", "t", Custom(lambda x: np.log(x[..., 0]), ("t",)))], input_dim=4)


@pytest.mark.parametrize("T", [1])
def test_min_pairwise_dot_needs_two_positions(T):
    X = np.ones((2, T, 4))
    with pytest.raises(ValueError, match=r"after excluding 1 position\(s\) needs seq_len >= 2, got seq_len = 1"):
        min_pairwise_dot()(X)
    with pytest.raises(ValueError, match="needs seq_len >= 2"):
        predict(min_pairwise_dot(), Architecture((1, 1), 8, 4), T)
    assert min_pairwise_dot(distinct=False)(X).tolist() == [4.0, 4.0]  # s = t allowed: well defined


def test_parameters_of_the_wrong_dimension_are_refused_when_the_tree_is_built():
    with pytest.raises(ValueError, match=r"Linear a\^T x\(t\): a has 3 entries, but the tokens have d = 4"):
        Tree([Reduction("max", "t", Linear("t", [1.0, 2.0, 3.0]))], input_dim=4)
    with pytest.raises(ValueError, match=r"A has shape \(3, 3\), but the tokens have d = 4"):
        Tree([Reduction("max", "t", Reduction("max", "s", Bilinear("s", "t", np.eye(3))))], input_dim=4)
    with pytest.raises(ValueError, match="a has 2 entries"):  # also inside sums and values
        Tree([Reduction("max", "t", Linear("t", np.ones(4)), value=Linear("t", [1.0, 1.0]) + 1.0)], input_dim=4)
    with pytest.raises(ValueError, match="square"):
        Bilinear("s", "t", np.ones((2, 3)))


def test_a_custom_declared_symmetric_is_checked_on_random_inputs():
    asym = Custom(lambda a, b, c: a[..., 0] - b[..., 0] + c[..., 1], ("t1", "t2", "t3"), symmetric=True, name="asym")
    chain = Reduction("min", "t1", Reduction("min", "t2", Reduction("min", "t3", asym)))
    with pytest.raises(ValueError, match="Custom 'asym' is declared symmetric=True, but swapping the tokens of 't1' and 't2'"):
        Tree([chain], input_dim=2)
    sym = Custom(lambda a, b, c: np.linalg.norm(a + b + c, axis=-1), ("t1", "t2", "t3"), symmetric=True)
    tree = Tree([Reduction("min", "t1", Reduction("min", "t2", Reduction("min", "t3", sym)))], input_dim=2)
    X = tree.sample_inputs(3, 4, 1)
    ref = [min(np.linalg.norm(x[a] + x[b] + x[c]) for a in range(4) for b in range(4) for c in range(4)) for x in X]
    np.testing.assert_allclose(tree(X), ref)
    inner = Reduction("max", "s", Linear("s", np.ones(2)))
    with pytest.raises(ValueError, match="symmetric=True is declared for functions of position variables only"):
        Custom(lambda x, m: x[..., 0] + m, ("t", inner), symmetric=True)


def test_heads_as_a_numpy_array_are_accepted():
    arch = Architecture(np.array([2, 3]), 24, 4)
    assert arch.heads == (2, 3) and all(type(h) is int for h in arch.heads)
    assert predict(pairwise_max(2), arch, 8).efficient
    with pytest.raises(ValueError, match="1-D"):
        Architecture(np.array([[2, 2]]), 24, 4)
    with pytest.raises(ValueError, match="head counts must be integers"):
        Architecture(np.array([1.5, 2.0]), 24, 4)


def test_an_embedding_smaller_than_the_head_count_is_refused():
    with pytest.raises(ValueError, match=r"embed_dim E = 2 < 4 heads in one layer"):
        Architecture((1, 4), 2, 4)
    assert Architecture((4,), 4, 4).per_head_dim(1) == 1.0


@pytest.mark.parametrize("make", [
    lambda: Linear("t", [np.nan, 0, 0, 0]),
    lambda: Linear("t", [np.inf, 0, 0, 0]),
    lambda: Bilinear("s", "t", np.full((4, 4), np.nan)),
    lambda: GaussianInputs(4, variance=float("nan")),
    lambda: GaussianInputs(4, variance=0.0),
    lambda: GaussianInputs(4, norm_range=(1.0, float("nan"))),
    lambda: GaussianInputs(4, norm_range=(2.0, 1.0)),
    lambda: Sum([Linear("t", np.ones(4))], [float("nan")]),
    lambda: Linear("t", np.ones(4)) + float("nan"),
    lambda: Linear("t", np.ones(4)) * float("inf"),
])
def test_nan_and_infinite_parameters_are_refused(make):
    with pytest.raises(ValueError, match="NaN|finite|positive|norm_range"):
        make()


def test_nan_gamma_is_refused():
    with pytest.raises(ValueError, match="gamma must be a positive finite number"):
        predict(pairwise_max(2), Architecture((2, 2), 16, 4), 8, gamma=float("nan"))


def test_positions_functions_are_checked():
    with pytest.raises(ValueError, match="a node nested in a score needs a scalar fn"):
        Tree([Reduction("max", "t", Linear("t", np.ones(4)) + Positions((1, 2)))], input_dim=4)
    with pytest.raises(ValueError, match=r"fn returned shape \(16, 2, 4\)"):
        Tree([Positions((1, 2), fn=lambda toks: toks)], input_dim=4)


def test_norm_of_sum_needs_distinct_variables():
    with pytest.raises(ValueError, match="distinct"):
        NormOfSum(("a", "a"))
