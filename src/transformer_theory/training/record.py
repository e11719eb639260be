"""A finished run's record, typed: what the engine returns for a run (:func:`~transformer_theory.training.distributed.
train_runs`) and what the chapters read. The run store keeps it as JSON (:meth:`RunRecord.to_dict` gives back exactly
the stored object; :class:`~transformer_theory.training.store.RunStore` checks it against its run before anything reads
it)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["History", "RunRecord"]

#: The fields of a stored record that :class:`RunRecord` names; the rest is its provenance.
_NAMED = ("key", "config", "seed", "best_nmse", "best_step", "final_nmse", "history", "wall_time_s", "task")


@dataclass(frozen=True)
class History:
    """The validation curve of a run: at each evaluated ``step``, the validation NMSE ``val_nmse`` and the training
    loss ``train_loss`` (``None`` where the run had diverged)."""

    step: tuple[int, ...]
    val_nmse: tuple[float | None, ...]
    train_loss: tuple[float | None, ...]

    def to_dict(self) -> dict[str, list]:
        return {"step": list(self.step), "val_nmse": list(self.val_nmse), "train_loss": list(self.train_loss)}


@dataclass(frozen=True)
class RunRecord:
    """One finished run: its ``key`` and ``config`` (:meth:`~transformer_theory.training.config.RunConfig.to_dict`),
    ``seed``, the best validation NMSE ``best_nmse`` and its ``best_step`` (``None``: the run diverged), the last one
    ``final_nmse``, its ``history``, the wall time ``wall_time_s`` of the ``task`` it was trained in (``key``,
    ``runs``, ``models``, ``resumed_at_steps``) and its ``provenance`` (engine version, package versions, git commit,
    machine, platform, device and threads, when it finished)."""

    key: str
    config: dict[str, Any]
    seed: int
    best_nmse: float | None
    best_step: int | None
    final_nmse: float | None
    history: History
    wall_time_s: float
    task: dict[str, Any]
    provenance: dict[str, Any] = field(default_factory=dict)

    @property
    def steps(self) -> int:
        """The run's training steps (its schedule's length)."""
        return int(self.config["steps"])

    @classmethod
    def from_dict(cls, record: dict[str, Any]) -> RunRecord:
        """The record of a stored JSON object (checked by the store first)."""
        h = record["history"]
        return cls(**{name: record[name] for name in _NAMED if name != "history"},
                   history=History(tuple(h["step"]), tuple(h["val_nmse"]), tuple(h["train_loss"])),
                   provenance={k: v for k, v in record.items() if k not in _NAMED})

    def to_dict(self) -> dict[str, Any]:
        """The JSON object the store keeps."""
        named = {name: getattr(self, name) for name in _NAMED}
        return {**named, "history": self.history.to_dict(), **self.provenance}
