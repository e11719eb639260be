"""Many sequences stacked into one token array, with the bookkeeping to attend within each sequence."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import numpy as np


@dataclass(frozen=True)
class Segments:
    """Sequence ``j`` occupies rows ``starts[j] : starts[j] + lengths[j]`` of a stacked (T, d) token array."""

    lengths: np.ndarray
    starts: np.ndarray = field(init=False)
    sequence_of: np.ndarray = field(init=False)
    groups: dict[int, np.ndarray] = field(init=False)

    def __post_init__(self) -> None:
        lengths = np.asarray(self.lengths, dtype=np.intp)
        starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.intp)
        object.__setattr__(self, "lengths", lengths)
        object.__setattr__(self, "starts", starts)
        object.__setattr__(self, "sequence_of", np.repeat(np.arange(len(lengths)), lengths))
        groups = {}
        for n in np.unique(lengths):
            seqs = np.flatnonzero(lengths == n)
            groups[int(n)] = starts[seqs][:, None] + np.arange(n)[None, :]
        object.__setattr__(self, "groups", groups)

    @classmethod
    def of(cls, sequences: Sequence[np.ndarray]) -> "Segments":
        return cls(np.array([len(x) for x in sequences], dtype=np.intp))

    def rows(self, j: int) -> slice:
        return slice(int(self.starts[j]), int(self.starts[j] + self.lengths[j]))

    def split(self, X: np.ndarray) -> list[np.ndarray]:
        """The stacked array cut back into one array per sequence."""
        return [X[self.rows(j)] for j in range(len(self.lengths))]
