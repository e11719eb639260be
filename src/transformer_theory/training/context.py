"""What a chapter runs in: its profile, its run store and the recorder of its key numbers, passed in explicitly.

The runner builds one :class:`Context` per notebook run and hands it to the kernel
(:func:`~transformer_theory.pipeline.context.kernel_context`); a test or an interactive session builds its own.
Nothing below the pipeline reads the environment or a module-global: what a chapter reads and writes is here.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from collections.abc import Mapping
from typing import Any

from transformer_theory.storage.results import Recorder
from transformer_theory.training.store import RunStore, default_store


@dataclass(frozen=True)
class Context:
    """A chapter's run: ``profile`` (the name of its parameter profile), ``store`` (where its training runs are read
    and kept) and ``results`` (where its key numbers go)."""

    profile: str
    store: RunStore
    results: Recorder = field(default_factory=Recorder)

    def __post_init__(self) -> None:
        if not isinstance(self.profile, str) or not self.profile:
            raise ValueError(f"profile must be a non-empty name, got {self.profile!r}")
        if not isinstance(self.store, RunStore):
            raise ValueError(f"store must be a RunStore, got {type(self.store).__name__}")

    @classmethod
    def for_profile(cls, profile: str, runs: str | os.PathLike | None = None,
                    results: Recorder | None = None) -> "Context":
        """The context of ``profile`` with its default run store (:func:`~.store.default_store`; ``runs``: a folder
        that replaces it) and ``results`` (default: kept in memory only)."""
        return cls(profile, default_store(profile, runs), Recorder() if results is None else results)

    def record(self, name: str, value: Any) -> Any:
        """Record a key number of the chapter (:meth:`~transformer_theory.storage.results.Recorder.record`) and
        return ``value``."""
        return self.results.record(name, value)

    def record_all(self, values: Mapping[str, Any]) -> None:
        """:meth:`record` each of ``values`` under its name (an analysis's ``recorded()``)."""
        for name, value in values.items():
            self.record(name, value)
