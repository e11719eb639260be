"""A stage-by-stage transformer builder that tracks the token configuration (spec §4.10).

Every emitted block is applied at once to the tracked configuration with the same code that evaluates
the finished model, so every later choice (hat windows, leaders, checks) sees exactly the positions
the model produces: in float64 bitwise, in rational arithmetic exactly.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Iterator

import numpy as np

from transformer_theory.interpolation.arithmetic import EXACT, FLOAT
from transformer_theory.interpolation.attention import SelfAttention
from transformer_theory.interpolation.construction.configuration import Configuration
from transformer_theory.interpolation.construction.hat import hat_move
from transformer_theory.interpolation.dataset import SequenceDataset
from transformer_theory.interpolation.feed_forward import FeedForward, FeedForwardLayer, HatFeedForward
from transformer_theory.interpolation.hausdorff import hausdorff, tolerance
from transformer_theory.interpolation.transformer import Block, Transformer


class Construction:
    """Blocks emitted so far, the configuration they produce, and the stage each block belongs to."""

    def __init__(self, dataset: SequenceDataset, exact: bool, rng: np.random.Generator) -> None:
        self.dataset = dataset
        self.backend = EXACT if exact else FLOAT
        self.rng = rng
        self.d = dataset.d
        self.targets = [self.backend.asarray(y) for y in dataset.targets]
        self.m = np.array(dataset.output_lengths)
        self.config = Configuration.of([self.backend.asarray(x) for x in dataset.inputs])
        self.blocks: list[Block] = []
        self.stages: dict[str, range] = {}

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        """Record the blocks emitted inside the ``with`` statement as stage ``name``."""
        start = len(self.blocks)
        yield
        self.stages[name] = range(start, len(self.blocks))

    def identity_ff(self) -> FeedForward:
        return FeedForward.identity(self.d, self.backend.exact)

    def identity_sa(self) -> SelfAttention:
        return SelfAttention.identity(self.backend.exact)

    def emit(self, ff: FeedForwardLayer, sa: SelfAttention, after: Configuration | None = None) -> None:
        """Append the block ``SA ∘ FF`` and move the configuration through it (or adopt ``after``)."""
        self.config = after if after is not None else self.config.after_ff(ff).after_sa(sa)
        self.blocks.append(Block(ff, sa))

    def move(self, point: int, destination: np.ndarray, affine: tuple[Any, np.ndarray] | None = None) -> HatFeedForward:
        """Emit a block whose FF is a hat moving position ``point`` to ``destination`` and whose SA is
        the identity. With ``affine = (η, τ₀)`` every other position goes to ``η x + τ₀``."""
        eta, shift = affine if affine is not None else (1, None)
        ff = hat_move(self.config.points, point, destination, self.rng, eta, shift)
        if affine is None:
            self.config.move_point(point, ff)
            self.blocks.append(Block(ff, self.identity_sa()))
        else:
            self.emit(ff, self.identity_sa())
        return ff

    def check_interpolation(self) -> None:
        """Raise if the tracked outputs are not on the targets (exactly, or within the float tolerance)."""
        tol = 0 if self.backend.exact else tolerance(self.dataset) * 1e-2
        for j, y in enumerate(self.targets):
            error = hausdorff(self.config.points[self.config.points_of(j)], y)
            if error > tol:
                raise RuntimeError(f"construction failed on sequence {j}: Hausdorff error {float(error):.3g}")

    def transformer(self, depth: int | None = None) -> Transformer:
        """The model; with ``depth``, identity blocks are appended up to that depth (stage ``padding``)."""
        if depth is not None:
            with self.stage("padding"):
                while len(self.blocks) < depth:
                    self.blocks.append(Block(self.identity_ff(), self.identity_sa()))
        return Transformer(list(self.blocks), self.d, exact=self.backend.exact, stages=dict(self.stages))
