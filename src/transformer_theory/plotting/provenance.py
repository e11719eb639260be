"""The line under every figure of the book: what produced it (the stored training runs it shows, by key, or the
page's own computation), with which seeds, under which profile and at which commit.

A notebook makes one :class:`Provenance` with :meth:`Provenance.here` and shows each figure with :func:`show`
instead of ``plt.show()``; a figure of training runs passes them (:meth:`Provenance.of_runs`).
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Protocol

import matplotlib.pyplot as plt

from transformer_theory.plotting.style import readable_log_ticks
from transformer_theory.storage.provenance import git_commit

#: The characters of a commit shown (git's short form).
SHORT_COMMIT = 10


class StoredRecord(Protocol):
    """A stored training run's record (a :class:`~transformer_theory.training.record.RunRecord`, which this package
    does not import): its ``key`` and ``seed``."""

    @property
    def key(self) -> str: ...

    @property
    def seed(self) -> int: ...


class StoredRun(Protocol):
    """A stored training run, as :func:`~transformer_theory.chapters.registry.run_experiment` returns it: its
    ``record`` holds its ``key`` and ``seed``."""

    @property
    def record(self) -> StoredRecord: ...


@dataclass(frozen=True)
class Provenance:
    """What produced a figure.

    Attributes:
        profile: The profile the page ran under.
        commit: The checkout's commit, with `` + uncommitted changes`` when its tracked files differed.
        seeds: The seeds of the computation or of the runs shown.
        runs: The keys of the stored training runs the figure shows (empty: computed in this page).
    """

    profile: str
    commit: str
    seeds: tuple[int, ...]
    runs: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not self.profile or not self.commit:
            raise ValueError(f"a provenance needs a profile and a commit, got {self.profile!r} and {self.commit!r}")
        if not self.seeds or not all(isinstance(s, int) and not isinstance(s, bool) for s in self.seeds):
            raise ValueError(f"seeds must be a non-empty tuple of ints, got {self.seeds!r}")
        if not all(isinstance(k, str) and k for k in self.runs):
            raise ValueError(f"run keys must be non-empty strings, got {self.runs!r}")

    @classmethod
    def here(cls, seeds: int | Sequence[int], profile: str) -> Provenance:
        """The provenance of a figure computed in the running notebook from ``seeds`` under ``profile`` (its
        context's) at the checkout's commit."""
        git = git_commit()
        commit = git["commit"][:SHORT_COMMIT] + (" + uncommitted changes" if git["dirty"] else "")
        return cls(profile, commit, tuple(sorted({seeds} if isinstance(seeds, int) else set(seeds))))

    def of_runs(self, runs: Iterable[StoredRun]) -> Provenance:
        """This page's provenance for a figure of the stored training ``runs``: their keys and seeds.

        Raises:
            ValueError: ``runs`` is empty.
        """
        records = [r.record for r in runs]
        if not records:
            raise ValueError("a figure of training runs needs at least one run")
        return self.with_runs([r.key for r in records], [r.seed for r in records])

    def with_runs(self, keys: Iterable[str], seeds: Iterable[int]) -> Provenance:
        """This page's provenance for a figure of the stored runs ``keys``, trained from ``seeds``."""
        return replace(self, runs=tuple(dict.fromkeys(keys)), seeds=tuple(sorted(set(seeds))))

    def line(self) -> str:
        """One sentence: the source, the seeds, the profile, the commit."""
        seeds = ("seed " if len(self.seeds) == 1 else "seeds ") + ", ".join(map(str, self.seeds))
        n = len(self.runs)
        source = (f"From {n} stored training run{'s' if n > 1 else ''}" if self.runs else "Computed in this page")
        return f"{source} ({seeds}), {self.profile} profile, commit {self.commit}."

    def html(self) -> str:
        """The line as an HTML paragraph of class ``figure-provenance``; the run keys fold out under it."""
        line = html.escape(self.line())
        if not self.runs:
            return f'<p class="figure-provenance">{line}</p>'
        keys = " ".join(f"<code>{html.escape(k)}</code>" for k in self.runs)
        return (f'<details class="figure-provenance"><summary>{line} Run keys</summary>'
                f"<p>{keys}</p></details>")


def show(provenance: Provenance, fig: plt.Figure | None = None) -> None:
    """Show ``fig`` (default: the current figure) with its log axes made readable (:func:`readable_log_ticks`)
    and ``provenance``'s line under it; the figure is closed."""
    from IPython.display import HTML, display

    fig = plt.gcf() if fig is None else fig
    readable_log_ticks(fig)
    display(fig)
    plt.close(fig)
    display(HTML(provenance.html()))
