"""Writing the held-out suite's predictions (chapter 12) before any network is trained.

The calculator's predictions and the observation criterion of :mod:`transformer_theory.infoflow.heldout` go
to ``results/book/12_predictions.json`` with the git commit, so the history shows them before the training
results. Run ``python -m transformer_theory.training.predictions`` and commit the file alone.
"""

from __future__ import annotations

from pathlib import Path

from transformer_theory.infoflow.heldout import PREDICTIONS_FILE, predictions_document
from transformer_theory.pipeline.paths import project_root
from transformer_theory.pipeline.provenance import environment
from transformer_theory.pipeline.results import write_json_atomic


def write_predictions(path: str | Path | None = None) -> Path:
    """Write :func:`~transformer_theory.infoflow.heldout.predictions_document` with the git commit and versions
    to ``path`` (default ``results/book/12_predictions.json`` in the repository), atomically; returns the path."""
    target = Path(path) if path is not None else project_root() / PREDICTIONS_FILE
    env = environment()
    data = {**predictions_document(), "git": env["git"], "versions": env["versions"],
            "written_by": "transformer_theory.training.predictions.write_predictions"}
    write_json_atomic(target, data)
    return target


if __name__ == "__main__":  # pragma: no cover - the command that writes the committed file
    print(write_predictions())
