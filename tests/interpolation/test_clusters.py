"""Cluster counting (chapter 00): connected components of the tolerance graph, against a union-find count."""

from __future__ import annotations

import numpy as np
import pytest

from transformer_theory.interpolation.clusters import count_clusters


def _union_find_count(points: np.ndarray, tol: float) -> int:
    parent = list(range(len(points)))

    def root(i: int) -> int:
        while parent[i] != i:
            i = parent[i]
        return i

    for i in range(len(points)):
        for j in range(i):
            if np.linalg.norm(points[i] - points[j]) < tol:
                parent[root(i)] = root(j)
    return len({root(i) for i in range(len(points))})


@pytest.mark.parametrize("seed", range(8))
def test_count_clusters_matches_union_find(seed: int) -> None:
    rng = np.random.default_rng(seed)
    points = rng.uniform(0, 1, size=(40, 2))
    for tol in (0.02, 0.08, 0.2):
        assert count_clusters(points, tol) == _union_find_count(points, tol)


def test_chains_are_one_cluster() -> None:
    chain = np.stack([np.arange(10) * 0.5, np.zeros(10)], axis=1)  # consecutive gaps 0.5, ends 4.5 apart
    assert count_clusters(chain, 0.6) == 1 and count_clusters(chain, 0.4) == 10


@pytest.mark.parametrize("points,tol,match", [(np.zeros((0, 2)), 1.0, "non-empty"), (np.zeros(3), 1.0, "non-empty"),
                                              (np.zeros((3, 2)), 0.0, "tol must be a positive")])
def test_bad_input(points, tol, match) -> None:
    with pytest.raises(ValueError, match=match):
        count_clusters(points, tol)
