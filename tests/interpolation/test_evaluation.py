"""The structured evaluation (:mod:`transformer_theory.interpolation.evaluation`: hats move only the positions in
their windows, found in sorted projections; identity layers skipped) against the straightforward one, every
block applied to the whole stacked token array in turn (:meth:`Block.apply`), on the test families, on inputs
the model was not built for, in both backends, for both constructions."""

from __future__ import annotations

import numpy as np
import pytest

from transformer_theory.interpolation import build_interpolator
from transformer_theory.interpolation.arithmetic import project
from transformer_theory.interpolation.evaluation import SMALL, ProjectionIndex
from transformer_theory.interpolation.examples import FAMILIES, family_dataset, random_dataset, toy_dataset
from transformer_theory.interpolation.segments import Segments
from transformer_theory.interpolation.transformer import Transformer

#: The agreement asked of the structured evaluation, relative to the largest output coordinate.
RELATIVE = 1e-15


def reference(model: Transformer, inputs: list[np.ndarray]) -> list[np.ndarray]:
    """Every block on all stacked tokens in turn."""
    segments = Segments.of(inputs)
    X = np.concatenate(inputs)
    for block in model.blocks:
        X = block.apply(X, segments)
    return segments.split(X)


def assert_agrees(model: Transformer, inputs: list[np.ndarray]) -> None:
    expected, got = reference(model, inputs), model.apply(inputs)
    scale = max(float(np.abs(y.astype(float)).max()) for y in expected)
    worst = max(float(np.abs((a - b).astype(float)).max()) for a, b in zip(got, expected))
    assert worst <= RELATIVE * scale, (worst, scale)


def perturbed(inputs: list[np.ndarray], seed: int) -> list[np.ndarray]:
    """Inputs the model was not built for: every token moved by about 1e-3 of the data's size, one sequence
    replaced by fresh tokens."""
    rng = np.random.default_rng(seed)
    size = max(float(np.abs(x).max()) for x in inputs)
    moved = [x + 1e-3 * size * rng.standard_normal(x.shape) for x in inputs]
    moved[0] = rng.uniform(-size, size, moved[0].shape)
    return moved


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("d", [2, 3, 16])
def test_structured_evaluation_agrees_with_the_reference_on_every_family(family: str, d: int) -> None:
    for seed in (0, 1):
        ds = family_dataset(family, N=8, d=d, seed=seed)
        model = build_interpolator(ds, seed=seed, check=())
        assert_agrees(model, ds.inputs)
        assert_agrees(model, perturbed(ds.inputs, seed))


@pytest.mark.parametrize("ds", [random_dataset(40, 16, seed=3, n_max=50, m_max=3),
                                random_dataset(200, 2, seed=0, n_max=8, shared_pool=8)],
                         ids=["1000 tokens, d=16", "200 seqs over 8 tokens, d=2"])
def test_structured_evaluation_agrees_where_the_windows_come_from_sorted_projections(ds) -> None:
    model = build_interpolator(ds, check=())
    assert sum(ds.input_lengths) >= SMALL  # enough positions for the index to be used
    assert_agrees(model, ds.inputs)
    assert_agrees(model, perturbed(ds.inputs, 5))


def test_softmax_model_agrees_with_the_reference() -> None:
    ds = random_dataset(12, 3, seed=2, n_max=6)
    model = build_interpolator(ds, attention="softmax", check=())
    assert_agrees(model, ds.inputs)
    assert_agrees(model, perturbed(ds.inputs, 2))


def test_exact_model_equals_the_reference_exactly() -> None:
    ds = toy_dataset(exact=True)
    model = build_interpolator(ds, exact=True, check=())
    for got, expected in zip(model.apply(ds.inputs), reference(model, ds.inputs)):
        assert got.dtype == object and np.array_equal(got, expected)


def test_projection_index_finds_every_row_in_a_window_after_moves() -> None:
    rng = np.random.default_rng(4)
    points = np.asfortranarray(rng.uniform(-1, 1, (2000, 5)))
    u = rng.standard_normal(5)
    index = ProjectionIndex(points, u)
    for step in range(300):  # past the buffer's limit, so the index is re-sorted on the way
        rows = rng.choice(len(points), size=1 + step % 3, replace=False)
        points[rows] = rng.uniform(-1, 1, (len(rows), 5))
        index.moved(points, rows)
        center, eps = rng.uniform(-1, 1), 10 ** rng.uniform(-4, -1)
        for sign in (1.0, -1.0):
            truth = np.flatnonzero(np.abs(project(points, sign * u) - center) < eps)
            found, projections = index.window(sign, center, eps)
            assert set(truth) <= set(found.tolist())
            assert np.array_equal(projections, project(points[found], sign * u))
        v = u + 1e-3 * rng.standard_normal(5)
        near = index.rows_near(v, center, eps)
        truth = np.flatnonzero(np.abs(project(points, v) - center) < eps)
        assert near is not None and set(truth) <= set(near.tolist())
