"""Writing the held-out suite's predictions (chapter 12) before any network is trained, and reading a chapter's
committed predictions back (:func:`committed_predictions`).

The calculator's predictions and the observation criterion of :mod:`transformer_theory.infoflow.heldout` go
to ``results/book/12_predictions.json`` with the git commit, so the history shows them before the training
results. Run ``python -m transformer_theory.chapters.predictions`` and commit the file alone.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from transformer_theory.infoflow.heldout import PREDICTIONS_FILE, predictions_document
from transformer_theory.storage.paths import project_root
from transformer_theory.storage.provenance import environment
from transformer_theory.storage.results import write_json_atomic


def write_committed(document: dict[str, Any], default: Path, path: str | Path | None = None) -> Path:
    """Write a chapter's predictions with the git commit and versions, atomically. Chapters 08, 09 and 12 commit
    theirs this way.

    Args:
        document: The predictions without the provenance (:func:`calculator_document`).
        default: Where they are committed, relative to the repository root.
        path: Where to write them instead (``None``: ``default`` in the repository).

    Returns:
        The path written.
    """
    target = Path(path) if path is not None else project_root() / default
    env = environment()
    write_json_atomic(target, {**document, "git": env["git"], "versions": env["versions"]})
    return target


def calculator_document(chapter: str, what: str, p: dict[str, Any], keys: tuple[str, ...], criterion: Any,
                        predictions: list[dict[str, Any]]) -> dict[str, Any]:
    """A training chapter's committed predictions without the provenance.

    Args:
        chapter: The chapter's number (``"08"``), for the description.
        what: What the chapter trains, for the description.
        p: The parameters the predictions were computed for.
        keys: The names of ``p`` to store.
        criterion: The observation criterion committed with them.
        predictions: The calculator's rows.

    Returns:
        ``description``, ``parameters`` (``keys`` of ``p``), ``criterion`` and ``predictions``.
    """
    return {"description": (f"InfoFlow calculator predictions for chapter {chapter} ({what}), written before its "
                            "networks were trained"),
            "parameters": {k: p[k] for k in keys}, "criterion": criterion, "predictions": predictions}


@dataclass(frozen=True)
class CommittedPredictions:
    """A chapter's predictions as committed before its runs, beside what the library computes now for the chapter's
    parameters: the ``commit`` that wrote the file, the computed ``predictions`` rows, and whether the committed
    predictions, parameters and criterion are the same as the computed ones (in the book profile all three must be;
    a reader's own parameters change the first two)."""

    commit: str
    predictions: list[dict[str, Any]]
    same_predictions: bool
    same_parameters: bool
    same_criterion: bool

    def __str__(self) -> str:
        return (f"committed at {self.commit[:12]} - the same as the library computes for these parameters: "
                f"{self.same_predictions}")

    def flags(self) -> dict[str, Any]:
        """The commit and the three comparisons, as a chapter records them."""
        return {"commit": self.commit, "same_predictions": self.same_predictions,
                "same_parameters": self.same_parameters, "same_criterion": self.same_criterion}


def committed_predictions(document: dict[str, Any], default: Path) -> CommittedPredictions:
    """The predictions committed at ``default`` (relative to the repository root; chapters 08 and 09) against
    ``document``, what the library computes now (:func:`calculator_document`, compared as JSON)."""
    committed = json.loads((project_root() / default).read_text())
    computed = json.loads(json.dumps(document))
    return CommittedPredictions(committed["git"]["commit"], document["predictions"],
                                *(committed[k] == computed[k] for k in ("predictions", "parameters", "criterion")))


def write_predictions(path: str | Path | None = None) -> Path:
    """Write :func:`~transformer_theory.infoflow.heldout.predictions_document` (chapter 12) to ``path`` (default
    ``results/book/12_predictions.json`` in the repository) with :func:`write_committed`."""
    document = {**predictions_document(), "written_by": "transformer_theory.chapters.predictions.write_predictions"}
    return write_committed(document, PREDICTIONS_FILE, path)


if __name__ == "__main__":  # pragma: no cover - the command that writes the committed file
    print(write_predictions())
