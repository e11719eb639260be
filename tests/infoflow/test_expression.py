"""Targets from text (named targets and expressions), distinct parameter names, compact reprs."""

from __future__ import annotations

import re

import numpy as np
import pytest

from transformer_theory.infoflow import (Architecture, Linear, Reduction, Tree, heldout, min_pairwise_dot, pairwise_max,
                                         predict, targets, triangle_center)
from transformer_theory.infoflow.expression import SYNTAX, ExpressionError, named_targets, parse_target
from transformer_theory.infoflow.trees import Bilinear, NormOfSum, Sum

X = np.random.default_rng(0).normal(size=(64, 7, 4))


def test_every_named_target_is_known_and_parses_with_its_arguments() -> None:
    names = named_targets()
    assert set(targets.__all__) | {"masked_kth_largest"} | set(heldout.TREES) == set(names)
    assert parse_target("pairwise_max(D=2)").name == "pairwise_max(D=2)"
    assert parse_target(" k_hop(3) ").name == "k_hop(k=3)"
    assert parse_target("max_retrieval(3, d=2)").input_dim == 2
    assert parse_target("specific_positions(P=(1, 2), d=3)").params["P"] == (1, 2)
    assert parse_target("triangle_center(squared=True)").params["squared"] is True
    assert parse_target("mixed_orders").name == parse_target("mixed_orders()").name == "mixed_orders"
    # the same function of the data as the library's own call
    np.testing.assert_array_equal(parse_target("pairwise_max(D=2, seed=3)")(X), pairwise_max(2, seed=3)(X))


def test_expressions_build_the_trees_the_library_writes_by_hand() -> None:
    tree = parse_target("max_t a^T x(t) + max_s b^T x(s)")
    a, b = tree.params["a"], tree.params["b"]
    assert a.shape == b.shape == (4,) and not np.allclose(a, b)
    np.testing.assert_allclose(tree(X), (X @ a).max(axis=1) + (X @ b).max(axis=1))
    # the same name is the same parameter; names and seed fix it
    same = parse_target("max_t a^T x(t) + min_s a^T x(s)", seed=0)
    np.testing.assert_array_equal(same.params["a"], a)
    assert not np.allclose(parse_target("max_t a^T x(t)", seed=1).params["a"], a)

    np.testing.assert_allclose(parse_target("min_t min_{s != t} x(s)^T x(t)")(X), min_pairwise_dot()(X))
    tri = parse_target("min_{t1,t2,t3} ||x(t1) + x(t2) + x(t3)||", d=2)
    Y = triangle_center().sample_inputs(16, 6, 0)
    np.testing.assert_allclose(tri(Y), triangle_center()(Y))

    nested = parse_target("max_t max_s x(s)^T A x(t)")
    (outer,) = nested.terms
    assert isinstance(outer.score, Reduction) and isinstance(outer.score.score, Bilinear)
    A = nested.params["A"]
    np.testing.assert_allclose(nested(X), np.einsum("bsd,de,bte->bst", X, A, X).max(axis=(1, 2)))

    shifted = parse_target("max_t [2 a^T x(t) - min_s b^T x(s) + 1]")
    assert isinstance(shifted.terms[0].score, Sum)
    a, b = shifted.params["a"], shifted.params["b"]
    np.testing.assert_allclose(shifted(X), 2 * (X @ a).max(axis=1) - (X @ b).min(axis=1) + 1)

    kth = parse_target("max[k=2]_t a^T x(t)")
    np.testing.assert_allclose(kth(X), np.sort(X @ kth.params["a"], axis=1)[:, -2])
    assert isinstance(parse_target("min_{s,t} ||x(s) + x(t)||^2").terms[0].score.score, NormOfSum)


def test_expressions_get_the_predictions_of_the_same_trees() -> None:
    arch = Architecture((1, 1), 32, 4)
    assert predict("max_t max_s x(s)^T A x(t)", arch, 16).efficient
    assert not predict("max_t max_s x(s)^T A x(t) + max_t max_s x(s)^T B x(t)", arch, 16).efficient
    assert predict("max_t max_s x(s)^T A x(t) + max_t max_s x(s)^T B x(t)", Architecture((2, 2), 32, 4), 16).efficient
    assert not predict("max_t a^T x(t) + max_s b^T x(s)", Architecture((1,), 32, 4), 16).efficient
    assert predict("pairwise_max(D=2)", Architecture((2, 2), 32, 4), 16).efficient


@pytest.mark.parametrize("text,column,expected", [
    ("max_t a^T x(t", 14, "expected ')' after the position variable, got the end of the expression"),
    ("max_t a^T x(s)", 13, "variable 's' is not bound by an enclosing max_ or min_ (bound here: t)"),
    ("max_t", 6, "expected the score of max_t"),
    ("max_t a x(t)", 9, "expected '^T' after the vector 'a'"),
    ("max_t a^T x(t) - max_s a^T x(s)", 16, "the root sums reductions"),
    ("max_t a^T x(t) b", 16, "expected '+' and another reduction"),
    ("max_t max_t a^T x(t)", 11, "variable 't' is already bound"),
    ("max_t a^T x(t) + max_s x(s)^T a x(s)", 31, "'a' is a vector elsewhere in the expression, here a matrix"),
    ("max_{s,t} x(s)^T A x(t) $", 25, "unexpected character '$'"),
    ("max_t 2", 8, "a constant alone is no score"),
    ("max_t [1 + 2]", 7, "not only numbers"),
    ("max[k=0]_t a^T x(t)", 7, "expected a positive integer rank k"),
    ("mx_t a^T x(t)", 1, "expected a reduction: max_VAR or min_VAR"),
    ("min_t min_{s != u} x(s)^T x(t)", 17, "variable 'u' is not bound"),
    ("max_s a^T x(t)", 13, "variable 't' is not bound"),
    ("k_hop(k=)", 9, "expected a value"),
    ("k_hop(3, k=2)", 1, "k_hop(k, seed=0): multiple values for argument 'k'"),
    ("", 1, "the target is empty"),
])
def test_malformed_text_names_the_column_and_what_was_expected(text: str, column: int, expected: str) -> None:
    with pytest.raises(ExpressionError) as info:
        parse_target(text)
    assert info.value.column == column
    message = str(info.value)
    assert expected in message and f"(at column {column})" in message
    assert message.splitlines()[-1] == "  " + " " * (column - 1) + "^"  # the caret under the column


def test_unknown_target_names_get_did_you_mean() -> None:
    with pytest.raises(ExpressionError, match=r"unknown target 'pairwse_max' \(did you mean 'pairwise_max'\?\)"):
        parse_target("pairwse_max(D=2)")
    with pytest.raises(ExpressionError, match="if you meant a named target: did you mean 'max_retrieval'"):
        parse_target("max_retrival(D=2)")
    with pytest.raises(ValueError, match="D must be a positive integer, got 0"):  # the target's own check
        parse_target("pairwise_max(D=0)")


def test_trees_print_distinct_names_for_distinct_parameters() -> None:
    a, b = np.array([1.0, 0.0]), np.array([0.0, 1.0])
    two = Tree([Reduction("max", "t", Linear("t", a)), Reduction("max", "s", Linear("s", b))], input_dim=2)
    assert repr(two) == "Tree(target: max_t a^T x(t) + max_s b^T x(s))"
    shared = Tree([Reduction("max", "t", Linear("t", a)), Reduction("max", "s", Linear("s", a.copy()))], input_dim=2)
    assert repr(shared) == "Tree(target: max_t a^T x(t) + max_s a^T x(s))"
    assert " + ".join(map(repr, pairwise_max(3).terms)).count("x(s)^T") == 3
    assert [repr(t) for t in pairwise_max(2).terms] == ["max_t max_s x(s)^T A x(t)", "max_t max_s x(s)^T B x(t)"]
    given = Tree([Reduction("max", "t", Linear("t", a, name="q")), Reduction("max", "s", Linear("s", b))], input_dim=2)
    assert repr(given) == "Tree(target: max_t q^T x(t) + max_s a^T x(s))"
    with pytest.raises(ValueError, match="two different parameters are both named 'q'"):
        Tree([Reduction("max", "t", Linear("t", a, name="q")), Reduction("max", "s", Linear("s", b, name="q"))],
             input_dim=2)
    with pytest.raises(ValueError, match="a parameter's name is an identifier"):
        Linear("t", a, name="a b")


def test_parsed_expressions_print_back_as_written() -> None:
    for text in ("max_t a^T x(t) + max_s b^T x(s)", "max_t max_s x(s)^T A x(t)", "min_t min_{s != t} x(s)^T x(t)",
                 "max[k=2]_t a^T x(t)"):
        tree = parse_target(text)
        assert " + ".join(map(repr, tree.terms)) == text
        assert " + ".join(map(repr, parse_target(" + ".join(map(repr, tree.terms))).terms)) == text


def test_prediction_repr_is_one_short_line() -> None:
    p = predict(pairwise_max(2), Architecture((1, 2), 32, 4), 16)
    text = repr(p)
    assert "\n" not in text and len(text) < 300, text
    assert text.startswith("Prediction(inefficient, M ~ eps^-2 (aggregation), T=16, pairwise_max(D=2)")
    assert p.reason in text


def test_syntax_help_lists_every_kind_of_score_with_examples_that_parse() -> None:
    for needle in ("max_t", "min_{s != t}", "max[k=2]_t", "a^T x(t)", "x(s)^T A x(t)", "||x(t1) + x(t2) + x(t3)||"):
        assert needle in SYNTAX
    examples = re.findall(r"^  '(.*?)'", SYNTAX, re.MULTILINE)
    assert len(examples) >= 5
    for text in examples:
        parse_target(text, d=2 if "||" in text else 4)
