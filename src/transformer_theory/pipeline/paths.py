"""Where the project's folders are: the project root holds ``notebooks/``, ``params/``, ``results/``, ``build/``.

The root is ``$TRANSFORMER_THEORY_ROOT`` when set; otherwise the nearest folder, from the working
directory upwards, that holds the marker :data:`MARKER`; otherwise the same search from this package's
own location (an editable checkout). A non-editable install run outside a checkout gets a clear error.
"""

from __future__ import annotations

import os
from pathlib import Path

#: Environment variable that points the CLI at another project root (used by the tests).
ROOT_ENV = "TRANSFORMER_THEORY_ROOT"
#: A project root is a folder holding these entries.
MARKER = ("params", "notebooks")


def _is_root(folder: Path) -> bool:
    return all((folder / name).is_dir() for name in MARKER)


def find_root(start: Path) -> Path | None:
    """The nearest folder at or above ``start`` that holds :data:`MARKER`, or ``None``."""
    start = start.resolve()
    return next((folder for folder in (start, *start.parents) if _is_root(folder)), None)


def project_root() -> Path:
    """The project root (see the module docstring); ``RuntimeError`` if there is none."""
    env = os.environ.get(ROOT_ENV)
    if env:
        return Path(env).resolve()
    root = find_root(Path.cwd()) or find_root(Path(__file__).parent)
    if root is None:
        raise RuntimeError(
            f"no transformer-theory project found above {Path.cwd()} (a folder holding "
            f"{' and '.join(m + '/' for m in MARKER)}): run from a checkout or set ${ROOT_ENV}"
        )
    return root


def notebooks_dir() -> Path:
    return project_root() / "notebooks"


def params_dir() -> Path:
    return project_root() / "params"


def build_dir() -> Path:
    return project_root() / "build"


def results_dir() -> Path:
    """Committed results of long runs (``results/<profile>/``)."""
    return project_root() / "results"
