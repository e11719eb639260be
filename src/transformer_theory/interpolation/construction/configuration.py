"""The token configuration during a construction: distinct positions and which tokens sit where.

All sequences' tokens are tracked together because a feed-forward layer acts on every token of every
sequence: a layer is planned against the set of *all* distinct current positions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from transformer_theory.interpolation.arithmetic import distinct, to_float, unique_rows
from transformer_theory.interpolation.attention import SelfAttention
from transformer_theory.interpolation.segments import Segments


@dataclass
class Configuration:
    """``points`` (P, d): current positions; token t (stacked over sequences) sits at ``points[token_point[t]]``."""

    points: np.ndarray
    token_point: np.ndarray
    segments: Segments

    @classmethod
    def of(cls, sequences: Sequence[np.ndarray]) -> "Configuration":
        points, token_point = unique_rows(np.concatenate(sequences))
        return cls(points, token_point, Segments.of(sequences))

    def tokens(self) -> np.ndarray:
        return self.points[self.token_point]

    def points_of(self, j: int) -> np.ndarray:
        """Indices of the distinct positions held by sequence ``j``."""
        return np.unique(self.token_point[self.segments.rows(j)])

    def points_by_sequence(self) -> list[np.ndarray]:
        """:meth:`points_of` for every sequence at once."""
        P = len(self.points)
        seq, point = np.divmod(distinct(self.segments.sequence_of * P + self.token_point), P)
        return np.split(point, np.searchsorted(seq, np.arange(1, len(self.segments.lengths))))

    def holders(self) -> np.ndarray:
        """For every position, the number of sequences holding a token there."""
        P = len(self.points)
        pairs = distinct(self.segments.sequence_of * P + self.token_point)
        return np.bincount(pairs % P, minlength=P)

    def near_classes(self, relative: float) -> np.ndarray:
        """For every position, a class label 0, 1, ...: positions closer than ``relative`` times the cloud's
        width are in one class (single linkage; float64 distances, also for an exact configuration)."""
        X = to_float(self.points)
        P, d = X.shape
        threshold = relative * float(np.ptp(X, axis=0).max()) if P > 1 else 0.0
        w = np.cos(np.arange(1, d + 1))  # a fixed generic direction: near pairs have near projections
        s = X @ (w / np.linalg.norm(w))
        order = np.argsort(s, kind="stable")
        parent = np.arange(P)

        def root(i: int) -> int:
            while parent[i] != i:
                parent[i] = parent[parent[i]]
                i = parent[i]
            return i

        for offset in range(1, P):
            close = np.flatnonzero(s[order[offset:]] - s[order[:-offset]] <= threshold)
            if not close.size:
                break
            a, b = order[close], order[close + offset]
            near = np.sum((X[a] - X[b]) ** 2, axis=1) <= threshold**2
            for i, k in zip(a[near], b[near]):
                parent[root(int(i))] = root(int(k))
        return np.unique([root(i) for i in range(P)], return_inverse=True)[1].reshape(-1)

    def coarse(self, classes: np.ndarray) -> "Configuration":
        """The configuration with the positions of each class (labels 0, 1, ... from :meth:`near_classes`)
        merged into one position."""
        representative = np.unique(classes, return_index=True)[1]
        return Configuration(self.points[representative], classes[self.token_point], self.segments)

    def after_ff(self, ff) -> "Configuration":
        """The configuration after a feed-forward layer applied to every position (equal images merged)."""
        if ff.is_identity:
            return self
        points, inverse = unique_rows(ff.apply(self.points))
        return Configuration(points, inverse[self.token_point], self.segments)

    def move_point(self, index: int, ff) -> None:
        """In place: apply a feed-forward layer that changes only position ``index`` (a hat move)."""
        ff.move_rows(self.points, np.array([index]))

    def after_sa(self, sa: SelfAttention) -> "Configuration":
        """The configuration after a self-attention layer (tokens of one position may split)."""
        if sa.is_identity:
            return self
        points, token_point = unique_rows(sa.apply(self.tokens(), self.segments))
        return Configuration(points, token_point, self.segments)


def shared_positions(sequences: Sequence[np.ndarray]) -> int:
    """The number of token positions held by two or more of ``sequences`` (what separation must remove)."""
    return int(np.count_nonzero(Configuration.of(sequences).holders() > 1))
