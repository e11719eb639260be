"""Counting the clusters that repeated attention layers form (Paper A, §1: attention as clustering).

Two tokens belong to the same cluster when a chain of tokens links them with consecutive distances below
a tolerance: the connected components of the ``tol``-neighbourhood graph, found by label propagation.
"""

from __future__ import annotations

import numpy as np

from transformer_theory.checks import positive_real


def count_clusters(points: np.ndarray, tol: float) -> int:
    """The number of connected components of the graph linking points closer than ``tol`` ((n, d) array)."""
    points = np.asarray(points, dtype=np.float64)
    if points.ndim != 2 or len(points) == 0:
        raise ValueError(f"points must be a non-empty (n, d) array, got shape {points.shape}")
    tol = positive_real("tol", tol)
    close = np.linalg.norm(points[:, None] - points[None], axis=-1) < tol
    labels = np.arange(len(points))
    while True:  # every point takes the smallest label among its neighbours until nothing changes
        new = np.where(close, labels[None, :], len(points)).min(axis=1)
        if np.array_equal(new, labels):
            return len(np.unique(labels))
        labels = new
