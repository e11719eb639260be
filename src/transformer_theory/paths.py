"""Where the project's folders are (the repository root holds notebooks/, params/, build/)."""

from __future__ import annotations

import os
from pathlib import Path

#: Environment variable that points the CLI at another project root (used by the tests).
ROOT_ENV = "TRANSFORMER_THEORY_ROOT"


def project_root() -> Path:
    """The repository root: ``$TRANSFORMER_THEORY_ROOT`` if set, else the checkout holding this package."""
    env = os.environ.get(ROOT_ENV)
    if env:
        return Path(env).resolve()
    return Path(__file__).resolve().parents[2]


def notebooks_dir() -> Path:
    return project_root() / "notebooks"


def params_dir() -> Path:
    return project_root() / "params"


def build_dir() -> Path:
    return project_root() / "build"
