"""The shared argument checks: one notion of integer and of real, messages that name the argument."""

from __future__ import annotations

import numpy as np
import pytest

from transformer_theory.checks import (boolean, finite_real, is_integer, non_negative_int, non_negative_real, one_of,
                                       positive_int, positive_real, seed_value, unknown_name)


@pytest.mark.parametrize("value", [1, 7, np.int64(3), np.uint8(2)])
def test_positive_int_accepts_python_and_numpy_integers(value) -> None:
    assert positive_int("N", value) == int(value) and type(positive_int("N", value)) is int


@pytest.mark.parametrize("value", [0, -1, True, False, 3.0, "3", None, np.float64(2.0), [1]])
def test_positive_int_refuses_with_the_name(value) -> None:
    with pytest.raises(ValueError, match=r"^N must be a positive integer"):
        positive_int("N", value)


def test_non_negative_int_and_seed() -> None:
    assert non_negative_int("k", 0) == 0 and seed_value(np.int32(5)) == 5
    with pytest.raises(ValueError, match="seed must be a non-negative integer"):
        seed_value(-1)
    with pytest.raises(ValueError, match="my_seed"):
        seed_value(1.5, name="my_seed")


@pytest.mark.parametrize("value", [0.5, 2, np.float32(0.25), np.int64(3)])
def test_positive_real_accepts_numbers(value) -> None:
    assert positive_real("tau", value) == pytest.approx(float(value))


@pytest.mark.parametrize("value", [0, -0.1, float("nan"), float("inf"), True, "1.0", 1j, None])
def test_positive_real_refuses(value) -> None:
    with pytest.raises(ValueError, match=r"^tau must be a positive finite number"):
        positive_real("tau", value)


def test_finite_and_non_negative_real() -> None:
    assert finite_real("x", -2) == -2.0 and non_negative_real("x", 0) == 0.0
    with pytest.raises(ValueError, match="x must be a finite real"):
        finite_real("x", float("-inf"))
    with pytest.raises(ValueError, match="x must be a non-negative"):
        non_negative_real("x", -1e-300)


def test_is_integer_has_one_meaning() -> None:
    assert [is_integer(v) for v in (1, np.int8(1), True, 1.0, "1")] == [True, True, False, False, False]


@pytest.mark.parametrize("value", [["hardmax"], "Hardmax", True, None])
def test_one_of_lists_the_choices(value) -> None:
    with pytest.raises(ValueError, match=r"attention must be one of 'hardmax', 'softmax', got"):
        one_of("attention", value, ("hardmax", "softmax"))
    assert one_of("attention", "softmax", ("hardmax", "softmax")) == "softmax"


@pytest.mark.parametrize("value", [True, False, np.bool_(True)])
def test_boolean_accepts_python_and_numpy_bools(value) -> None:
    assert boolean("exact", value) is bool(value)


@pytest.mark.parametrize("value", [1, 0, "yes", None, 1.0])
def test_boolean_refuses_with_the_name(value) -> None:
    with pytest.raises(ValueError, match=r"^exact must be True or False"):
        boolean("exact", value)


def test_an_unknown_name_is_offered_the_closest_and_the_valid_names_sorted() -> None:
    error = unknown_name("arm", "wide FNN", ["wide heads", "baseline", "wide FFN"], "arms: ")
    assert str(error) == "arms: unknown arm 'wide FNN'. Did you mean 'wide FFN'? Valid arms: baseline, wide FFN, wide heads"
    assert str(unknown_name("profile", "x", [])) == "unknown profile 'x'. Valid profiles: (none)"
