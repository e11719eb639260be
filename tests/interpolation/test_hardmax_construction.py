"""Theorem 1.6 (hardmax) construction: exact interpolation on adversarial datasets, depth and width
bounds, parameter counts, exact rational certificate, determinism, PyTorch export."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from transformer_theory.models.export import to_torch
from transformer_theory.interpolation import (
    SequenceDataset,
    build_interpolator,
    hausdorff,
    paper_num_blocks,
    tolerance,
    verify,
)
from transformer_theory.interpolation.construction.hardmax import private_counts
from transformer_theory.interpolation.construction.configuration import Configuration
from transformer_theory.interpolation.examples import random_dataset, toy_dataset

from strategies.interpolation import datasets, rational_datasets
from transformer_theory.interpolation.examples import FAMILIES

SETTINGS = settings(max_examples=60)


def check_model(ds: SequenceDataset, seed: int = 0, **kwargs):
    model = build_interpolator(ds, seed=seed, **kwargs)
    errors = verify(model, ds)
    assert errors.max() <= tolerance(ds), (errors.max(), ds)
    N, M = ds.N, ds.total_output_length
    assert model.num_blocks <= paper_num_blocks(ds) == 2 * M + 2 * N + 1
    assert len(model.stages["separation"]) <= N - 1
    padding = len(model.stages.get("padding", ()))
    assert model.num_blocks - padding == len(model.stages["separation"]) + 2 * M + 1
    assert model.max_width <= 4
    return model, errors


@SETTINGS
@given(datasets())
def test_exact_interpolation_on_adversarial_datasets(ds: SequenceDataset) -> None:
    check_model(ds)


@pytest.mark.parametrize("family", FAMILIES)
@settings(max_examples=10)
@given(data=st.data())
def test_each_family(family: str, data: st.DataObject) -> None:
    check_model(data.draw(datasets(max_N=10, dims=(2, 16), families=(family,))))


@settings(max_examples=8)
@given(datasets(max_N=5))
def test_match_paper_depth_pads_with_identity_blocks(ds: SequenceDataset) -> None:
    model, errors = check_model(ds, match_paper_depth=True)
    assert model.num_blocks == paper_num_blocks(ds)
    assert all(model.blocks[i].is_identity for i in model.stages["padding"])


@settings(max_examples=15)
@given(rational_datasets())
def test_exact_mode_certificate(ds: SequenceDataset) -> None:
    model = build_interpolator(ds, exact=True)
    errors = verify(model, ds)
    assert all(type(e) is Fraction and e == 0 for e in errors)
    assert model.num_blocks <= paper_num_blocks(ds)
    out = model(ds.inputs[0])
    assert all(type(v) is Fraction for v in out.flat)


def test_exact_mode_on_integer_data_and_dense_evaluation() -> None:
    ds = SequenceDataset([[[0, 0], [1, 0], [0, 1]], [[0, 0], [1, 0]], [[5, 5]]], [[[3, 3], [-1, 2]], [[0, 0]], [[0, 0]]])
    model = build_interpolator(ds, exact=True)
    assert list(verify(model, ds)) == [0, 0, 0]
    dense = model.apply(ds.inputs, structured=False)
    assert all(hausdorff(o, model.backend.asarray(y)) == 0 for o, y in zip(dense, ds.targets))


def test_toy_dataset_of_fig5() -> None:
    ds = toy_dataset()
    model, errors = check_model(ds)
    assert (ds.N, ds.total_output_length, paper_num_blocks(ds)) == (3, 4, 15)
    assert errors.max() <= 1e-14
    stages = list(model.stages)
    assert stages == ["separation", "leader_selection", "collapse", "interpolation"]


def test_separation_leaves_enough_private_tokens() -> None:
    ds = random_dataset(7, 3, seed=5, shared_pool=5)
    model = build_interpolator(ds)
    end = model.stages["separation"].stop
    states = model.trace(ds.inputs)
    after = Configuration.of([s[end] for s in states])
    assert np.all(private_counts(after) >= np.array(ds.output_lengths))
    assert len(model.stages["separation"]) >= 1


def test_nested_and_hand_case_of_the_spec() -> None:
    a, b, c, e = [0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [2.0, 2.0]
    inputs = [[a], [a, b], [b], [a, b, c], [c], [c, a], [b, c, e, a]]
    targets = [[[1.0, 1.0]], [[1.0, 1.0], b], [[3.0, 0.0]], [[1.0, 1.0]], [[0.5, 0.5]], [a], [[1.0, 1.0], e, c]]
    check_model(SequenceDataset(inputs, targets))


def test_same_seed_same_model_and_different_seed_different_model() -> None:
    ds = random_dataset(5, 3, seed=1, shared_pool=6)
    m1, m2, m3 = (build_interpolator(ds, seed=s) for s in (4, 4, 5))
    assert all(np.array_equal(b1.ff.W, b2.ff.W) for b1, b2 in zip(m1.blocks, m2.blocks))
    assert any(not np.array_equal(b1.ff.W, b3.ff.W) for b1, b3 in zip(m1.blocks, m3.blocks))


def test_structured_parameter_count_is_O_dM_and_independent_of_input_lengths() -> None:
    rng = np.random.default_rng(0)
    counts = set()
    for n in (3, 30, 300):
        xs = [rng.normal(size=(n, 8)) for _ in range(4)]
        ys = [rng.normal(size=(2, 8)) for _ in range(4)]
        model = build_interpolator(SequenceDataset(xs, ys))
        counts.add(model.num_parameters())
    assert len(counts) == 1
    for d, N in ((4, 5), (16, 5), (16, 40)):
        ds = random_dataset(N, d, seed=2, n_max=8)
        model = build_interpolator(ds)
        # at most 4d + 11 free parameters per block and at most 2M + 2N + 1 <= 4M + 1 blocks
        assert model.num_parameters() <= (4 * d + 11) * (4 * ds.total_output_length + 1)
        assert model.num_parameters(structured=False) > model.num_parameters()


def test_to_torch_equals_numpy() -> None:
    """The family's float64 model agrees with the structured NumPy evaluation to 1e-11 relative."""
    for ds in (toy_dataset(), random_dataset(6, 4, seed=3, shared_pool=7), random_dataset(5, 2, seed=4, scale=1e3),
               random_dataset(8, 16, seed=5)):
        model = build_interpolator(ds)
        net = to_torch(model)
        assert net.config.attention == "hardmax" and net.config.order == "ff_sa"
        assert all(p.dtype == torch.float64 for p in net.parameters())
        for x, y in zip(ds.inputs, ds.targets):
            out, ref = net(torch.from_numpy(x)).detach().numpy(), model(x)
            np.testing.assert_allclose(out, ref, rtol=0, atol=1e-11 * np.abs(ref).max())
            assert hausdorff(out, y) <= tolerance(ds)


def test_trace_shapes() -> None:
    ds = toy_dataset()
    model = build_interpolator(ds)
    path = model.trace(ds.inputs[0])
    assert path.shape == (model.num_blocks + 1, 5, 2)
    assert np.array_equal(path[0], ds.inputs[0]) and np.array_equal(path[-1], model(ds.inputs[0]))
    assert len(model.trace(ds.inputs)) == 3


def test_unknown_attention_and_bad_arguments() -> None:
    ds = toy_dataset()
    with pytest.raises(ValueError, match="attention must be one of 'hardmax', 'softmax', got 'linear'"):
        build_interpolator(ds, attention="linear")
    with pytest.raises(ValueError, match="dataset must be a SequenceDataset"):
        build_interpolator([np.zeros((1, 2))])
    model = build_interpolator(ds)
    with pytest.raises(ValueError, match=r"sequence 0: expected a non-empty array \(n, 2\)"):
        model(np.zeros((3, 5)))


def test_hausdorff() -> None:
    A = np.array([[0.0, 0.0], [1.0, 0.0]])
    assert hausdorff(A, A[::-1]) == 0
    assert hausdorff(A, A[:1]) == 1.0  # the second half of d_H: target (1, 0) missed
    F = np.array([[Fraction(0), Fraction(0)]], dtype=object)
    assert hausdorff(F, np.array([[Fraction(3), Fraction(4)]], dtype=object)) == Fraction(5)
