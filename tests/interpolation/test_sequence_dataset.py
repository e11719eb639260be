"""SequenceDataset: the assumptions of Theorem 1.6, one test per violated assumption."""

from __future__ import annotations

import warnings
from fractions import Fraction

import numpy as np
import pytest

from transformer_theory.interpolation import SequenceDataset

X0 = [[0.0, 0.0], [1.0, 0.0]]
Y0 = [[5.0, 5.0]]


def test_attributes() -> None:
    ds = SequenceDataset([X0, [[2.0, 2.0]]], [Y0, [[1.0, 1.0]]])
    assert (ds.N, ds.d, ds.total_output_length) == (2, 2, 2)
    assert ds.input_lengths == [2, 1] and ds.output_lengths == [1, 1]
    assert ds.scale == 5.0 and ds.unit == 8.0 and not ds.is_rational
    assert SequenceDataset([[[0.0, 0.0]]], [[[0.0, 0.0]]]).unit == 1.0  # all-zero data
    assert SequenceDataset([[[0.5, 0.0]]], [[[0.25, 0.0]]]).unit == 0.5  # a power of two is its own unit


def test_fractions_are_kept_exact() -> None:
    ds = SequenceDataset([[[Fraction(1, 3), 0], [0, 1]]], [[[Fraction(2, 7), 1]]])
    assert ds.is_rational and ds.inputs[0][0, 0] == Fraction(1, 3)


@pytest.mark.parametrize(
    ("inputs", "targets", "message"),
    [
        ([[[0.0], [1.0]]], [[[0.0]]], r"input sequence 0 has token dimension d = 1; the construction needs d >= 2"),
        ([X0, [[0.0, 1.0, 2.0]]], [Y0, [[1.0, 1.0, 1.0]]], r"input sequence 1 has token dimension 3, expected 2"),
        ([X0, []], [Y0, [[1.0, 1.0]]], r"input sequence 1 is empty"),
        ([X0, [[3.0, 3.0]]], [Y0, []], r"target sequence 1 is empty"),
        ([X0, [[np.nan, 0.0]]], [Y0, [[1.0, 1.0]]], r"input sequence 1 has non-finite values"),
        ([X0], [[[np.inf, 0.0]]], r"target sequence 0 has non-finite values"),
        ([[[0.0, 0.0], [1.0, 0.0], [0.0, 0.0]]], [Y0], r"input sequence 0 repeats a token \(tokens 0 and 2"),
        ([X0], [[[1.0, 1.0], [1.0, 1.0]]], r"target sequence 0 repeats a token \(tokens 0 and 1"),
        ([[[0.0, 0.0]]], [[[1.0, 1.0], [2.0, 2.0]]], r"target sequence 0 has m_j = 2 tokens but input sequence 0 has only n_j = 1"),
        ([X0, X0[::-1]], [Y0, [[9.0, 9.0]]], r"input sequences 0 and 1 are equal as sets but have different target sets"),
        ([X0], [Y0, Y0], r"1 input sequences but 2 target sequences"),
        ([], [], r"the dataset is empty"),
        ([[[0.0, 0.0], [1.0]]], [Y0], r"input sequence 0: not an array of numbers"),
        ([[0.0, 0.0]], [Y0], r"input sequence 0: expected an array of shape \(n, d\)"),
        ([np.array([[1 + 2j, 0.0]])], [Y0], r"input sequence 0: not an array of real numbers \(\(1\+2j\) is a complex"),
        ([X0], [np.array([[1.0 + 0j, 0.0]])], r"target sequence 0: not an array of real numbers .*complex"),
        ([[[True, 0.0], [1.0, 0.0]]], [Y0], r"input sequence 0: not an array of real numbers \(True is a bool"),
        ([np.array([[True, False]])], [Y0], r"input sequence 0: not an array of real numbers \(True is a bool"),
        ([[["1", "0"], ["0", "1"]]], [Y0], r"input sequence 0: not an array of real numbers \('1' is a str"),
        ([X0, [[Fraction(1, 3), np.float16(0.5)]]], [Y0, Y0],
         r"input sequence 1 mixes Fractions with float16 values; an exact dataset takes Fractions"),
        ([[[Fraction(1, 3), float("nan")]]], [Y0], r"input sequence 0 has non-finite values"),
        ([X0], None, r"targets must be a list of sequences \(arrays of tokens\), got NoneType None"),
        (3, [Y0], r"inputs must be a list of sequences \(arrays of tokens\), got int 3"),
    ],
    ids=[
        "d<2", "mixed-dims", "empty-input", "empty-target", "nan", "inf-target", "repeated-input-token",
        "repeated-target-token", "m>n", "equal-sets-different-targets", "count-mismatch", "no-sequences",
        "ragged", "not-2d", "complex", "complex-zero-imaginary", "bool-in-list", "bool-array", "numeric-strings",
        "fraction-and-float16", "fraction-and-nan", "no-targets", "inputs-not-a-list",
    ],
)
def test_bad_input_names_sequence_and_assumption(inputs, targets, message) -> None:
    with pytest.raises(ValueError, match=message):
        SequenceDataset(inputs, targets)


def test_equal_inputs_with_equal_targets_are_merged_with_a_warning() -> None:
    with pytest.warns(UserWarning, match="input sequences 0 and 2 are equal as sets with equal targets"):
        ds = SequenceDataset([X0, [[3.0, 3.0]], X0[::-1]], [Y0, Y0, Y0])
    assert ds.N == 2


def test_complex_input_is_refused_without_a_complex_warning() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a ComplexWarning (silent truncation) would fail here
        with pytest.raises(ValueError, match="complex"):
            SequenceDataset([np.array([[1 + 1j, 2.0]])], [Y0])


def test_lower_precision_floats_are_accepted_exactly() -> None:
    ds = SequenceDataset([np.array(X0, dtype=np.float16)], [np.array(Y0, dtype=np.float32)])
    assert ds.inputs[0].dtype == np.float64 and ds.targets[0][0, 0] == 5.0
