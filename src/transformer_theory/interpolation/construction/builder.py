"""A stage-by-stage transformer builder that tracks the token configuration.

Every emitted block is applied at once to the tracked configuration with the same code that evaluates
the finished model, so every later choice (hat windows, leaders, checks) sees exactly the positions
the model produces: in float64 bitwise, in rational arithmetic exactly.

The construction runs on the data divided by the dataset's ``unit`` (a power of two, so exactly) and the
finished model is scaled back (:meth:`~transformer_theory.interpolation.transformer.Transformer.rescaled`):
the model is scale-equivariant, its relative error the same at every data scale.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

import numpy as np

from transformer_theory.interpolation.arithmetic import EXACT, FLOAT
from transformer_theory.interpolation.attention import SelfAttention
from transformer_theory.interpolation.construction.configuration import Configuration
from transformer_theory.interpolation.construction.geometry import box_affine
from transformer_theory.interpolation.construction.hat import hat_along, hat_move
from transformer_theory.interpolation.dataset import SequenceDataset
from transformer_theory.interpolation.feed_forward import FeedForward, FeedForwardLayer, HatFeedForward
from transformer_theory.interpolation.hausdorff import TOLERANCE, hausdorff
from transformer_theory.interpolation.transformer import Block, Transformer


class Construction:
    """Blocks emitted so far, the configuration they produce, and the stage each block belongs to."""

    def __init__(self, dataset: SequenceDataset, exact: bool, rng: np.random.Generator) -> None:
        self.dataset = dataset
        self.backend = EXACT if exact else FLOAT
        self.rng = rng
        self.d = dataset.d
        self.unit = self.backend.scalar(dataset.unit)
        self.targets = [self.backend.asarray(y) / self.unit for y in dataset.targets]
        self.m = np.array(dataset.output_lengths)
        self.config = Configuration.of([self.backend.asarray(x) / self.unit for x in dataset.inputs])
        self.blocks: list[Block] = []
        self.stages: dict[str, range] = {}
        self._identity_sa = SelfAttention.identity(exact)  # immutable: one object serves every identity layer

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        """Record the blocks emitted inside the ``with`` statement as stage ``name``."""
        start = len(self.blocks)
        yield
        self.stages[name] = range(start, len(self.blocks))

    def identity_ff(self) -> FeedForward:
        return FeedForward.identity(self.d, self.backend.exact)

    def identity_sa(self) -> SelfAttention:
        return self._identity_sa

    def emit(self, ff: FeedForwardLayer, sa: SelfAttention, after: Configuration | None = None) -> None:
        """Append the block ``SA ∘ FF`` and move the configuration through it (or adopt ``after``)."""
        self.config = after if after is not None else self.config.after_ff(ff).after_sa(sa)
        self.blocks.append(Block(ff, sa))

    def embed(self, stage: str = "embedding") -> None:
        """Stage ``stage``: one block ``[FF: x ↦ η x + τ₀ into the box [1, 2]^d] → [identity SA]``.

        A layer of its own (width 1) rather than riding on a hat as in the paper's Figs. 6 and 7: a hat with
        the translation's extra neuron is a triangle, whose moved point shifts by ``|δ|·(rounding of u·x)/ε``
        in a dense evaluation; the flat-top hats used everywhere else absorb such rounding."""
        with self.stage(stage):
            self.emit(FeedForward.affine(*box_affine(self.config.points, self.backend)), self.identity_sa())

    def move(self, point: int, destination: np.ndarray, direction: tuple | None = None) -> HatFeedForward:
        """Emit a block whose FF is a hat moving position ``point`` to ``destination`` and whose SA is the
        identity; ``direction = (u, gap)`` fixes the hat's direction (else :func:`~.hat.hat_move` picks it)."""
        if direction is None:
            ff = hat_move(self.config.points, point, destination, self.rng)
        else:
            ff = hat_along(self.config.points, point, destination, *direction)
        self.config.move_point(point, ff)
        self.blocks.append(Block(ff, self.identity_sa()))
        return ff

    def check_interpolation(self) -> None:
        """Raise if the tracked outputs are not on the targets (exactly, or within a hundredth of the float
        tolerance; the tracked positions are the structured evaluation's, in units of ``unit``)."""
        tol = 0 if self.backend.exact else TOLERANCE * 1e-2
        for j, (y, held) in enumerate(zip(self.targets, self.config.points_by_sequence())):
            error = hausdorff(self.config.points[held], y)
            if error > tol:
                raise RuntimeError(f"construction failed on sequence {j}: Hausdorff error {float(error):.3g}")

    def transformer(self, depth: int | None = None) -> Transformer:
        """The model in the data's units; with ``depth``, identity blocks are appended up to that depth
        (stage ``padding``)."""
        if depth is not None:
            with self.stage("padding"):
                while len(self.blocks) < depth:
                    self.blocks.append(Block(self.identity_ff(), self.identity_sa()))
        model = Transformer(list(self.blocks), self.d, exact=self.backend.exact, stages=dict(self.stages))
        return model.rescaled(self.unit)
