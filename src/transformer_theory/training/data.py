"""Training and validation data of a run, drawn from its target's own sampler and evaluator.

Every draw comes from generators seeded by the run's seed (one stream for training batches, one for
the held-out validation set), so a run's data do not depend on the runs it is batched with. The target
is standardised for training with the mean and standard deviation of a reference sample (the fixed
training set, or ``val_size`` fresh draws from the training stream); NMSE is computed in the target's
own units (InfoFlow §4; the predecessor's Appendix B.1.1).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from transformer_theory.training.config import RunConfig


def _streams(seed: int) -> tuple[np.random.Generator, np.random.Generator]:
    train, val = np.random.SeedSequence([seed, 0xDA7A]).spawn(2)
    return np.random.default_rng(train), np.random.default_rng(val)


def _as_2d(y: np.ndarray) -> np.ndarray:
    return y.reshape(len(y), -1)


@dataclass
class ValidationSet:
    """Held-out inputs (N, T, d) and targets (N, m) in float64, and Var(y) per output (m,)."""

    X: np.ndarray
    y: np.ndarray

    @property
    def variance(self) -> np.ndarray:
        """Var(y) of each output over the validation set (m,)."""
        return self.y.var(axis=0)

    def nmse(self, prediction: np.ndarray) -> float:
        """``mean((ŷ − y)²) / Var(y)``, averaged over outputs (1 = no better than the mean)."""
        return float(np.mean(((_as_2d(prediction) - self.y) ** 2).mean(axis=0) / self.variance))


class RunData:
    """The data of one run: standardised training batches and the validation set.

    The training stream's state (generator, fixed set's permutation and cursor) is saved and restored
    through :meth:`state` / :meth:`load_state`, so a resumed run sees the same batches.
    """

    def __init__(self, run: RunConfig) -> None:
        self.run = run
        self.tree = run.tree()
        if self.tree.input_dim != run.model.d:
            raise ValueError(f"model.d = {run.model.d} but target {self.tree.name} has token dimension "
                             f"{self.tree.input_dim}")
        self.rng, val_rng = _streams(run.seed)
        X = self.tree.sample_inputs(run.val_size, run.seq_len, val_rng)
        self.validation = ValidationSet(X, _as_2d(self.tree(X)))
        if self.validation.y.shape[1] != run.model.readout_dim:
            raise ValueError(f"model.readout_dim = {run.model.readout_dim} but target {self.tree.name} has "
                             f"{self.validation.y.shape[1]} outputs")
        self.fixed: tuple[np.ndarray, np.ndarray] | None = None
        if run.train_size is not None:
            X = self.tree.sample_inputs(run.train_size, run.seq_len, self.rng)
            self.fixed = (X.astype(run.model.dtype), _as_2d(self.tree(X)))  # the model reads its own precision
            self.order, self.cursor = self.rng.permutation(run.train_size), 0
        else:
            X = self.tree.sample_inputs(run.val_size, run.seq_len, self.rng)
        # the curriculum's stages (run.term_stages): the leading terms, then the full target (the last stage)
        self.stages = [self.tree.leading_terms(k) for k in range(1, len(run.term_stages) + 1)] + [self.tree]
        self.scales = []
        for stage in self.stages:
            reference = self.fixed[1] if stage is self.tree and self.fixed is not None else _as_2d(stage(X))
            mean, std = reference.mean(axis=0), reference.std(axis=0)
            if not np.all(std > 0):
                raise ValueError(f"target {stage.name} is constant on its reference sample: cannot standardise")
            self.scales.append((mean, std))
        self.mean, self.std = self.scales[-1]

    def batch(self, step: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The next training batch: inputs (B, T, d) and standardised targets (B, m) of the stage that update
        ``step`` trains on (``None``: the full target)."""
        stage = len(self.stages) - 1 if step is None else sum(step >= s for s in self.run.term_stages)
        tree, (mean, std) = self.stages[stage], self.scales[stage]
        B = self.run.batch_size
        if self.fixed is None:
            X = self.tree.sample_inputs(B, self.run.seq_len, self.rng)
            y = _as_2d(tree(X))
        else:
            if self.cursor + B > len(self.order):
                self.order, self.cursor = self.rng.permutation(len(self.order)), 0
            index = self.order[self.cursor:self.cursor + B]
            self.cursor += B
            X = self.fixed[0][index]
            y = self.fixed[1][index] if tree is self.tree else _as_2d(tree(X.astype(float)))
        return X, (y - mean) / std

    def unstandardise(self, prediction: np.ndarray) -> np.ndarray:
        """A prediction of the standardised target (B, m), in the target's own units."""
        return _as_2d(prediction) * self.std + self.mean

    def state(self) -> dict[str, Any]:
        """The training stream's state, for a checkpoint (:meth:`load_state` restores it)."""
        state: dict[str, Any] = {"rng": self.rng.bit_generator.state}
        if self.fixed is not None:
            state.update(order=self.order.tolist(), cursor=self.cursor)
        return state

    def load_state(self, state: dict[str, Any]) -> None:
        """Continue the training stream from a :meth:`state`."""
        self.rng.bit_generator.state = state["rng"]
        if self.fixed is not None:
            self.order, self.cursor = np.asarray(state["order"]), int(state["cursor"])
