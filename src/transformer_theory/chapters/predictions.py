"""Writing the held-out suite's predictions (chapter 12) before any network is trained.

The calculator's predictions and the observation criterion of :mod:`transformer_theory.infoflow.heldout` go
to ``results/book/12_predictions.json`` with the git commit, so the history shows them before the training
results. Run ``python -m transformer_theory.chapters.predictions`` and commit the file alone.
"""

from __future__ import annotations

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


def write_predictions(path: str | Path | None = None) -> Path:
    """Write :func:`~transformer_theory.infoflow.heldout.predictions_document` (chapter 12) to ``path`` (default
    ``results/book/12_predictions.json`` in the repository) with :func:`write_committed`."""
    document = {**predictions_document(), "written_by": "transformer_theory.chapters.predictions.write_predictions"}
    return write_committed(document, PREDICTIONS_FILE, path)


if __name__ == "__main__":  # pragma: no cover - the command that writes the committed file
    print(write_predictions())
