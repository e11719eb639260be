"""Where the project's folders are: the project root holds ``notebooks/``, ``params/``, ``results/``, ``build/``.

The root is ``$TRANSFORMER_THEORY_ROOT`` when set; otherwise the nearest folder, from the working
directory upwards, that holds the marker :data:`MARKER`; otherwise the same search from this package's
own location (an editable checkout). A non-editable install run outside a checkout gets a clear error.
"""

from __future__ import annotations

import os
import tempfile
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
    """The chapters' notebooks (``notebooks/``)."""
    return project_root() / "notebooks"


def params_dir() -> Path:
    """The parameter profiles (``params/``)."""
    return project_root() / "params"


def build_dir() -> Path:
    """Everything the runs write outside ``results/`` (``build/``)."""
    return project_root() / "build"


def results_dir() -> Path:
    """Committed results of long runs (``results/<profile>/``)."""
    return project_root() / "results"


def run_store_folders(profile: str, runs: str | os.PathLike | None = None) -> tuple[Path, list[Path]]:
    """Where the training runs of ``profile`` are stored: (the folder written, the folders read first).

    The folder ``runs`` alone when given (``make reproduce`` trains into a fresh store); otherwise
    ``build/runs/<profile>/``, reading the committed ``results/<profile>/runs/`` first.
    """
    if runs is not None:
        return Path(runs), []
    return build_dir() / "runs" / profile, [results_dir() / profile / "runs"]


def check_writable_file(path: str | os.PathLike, what: str, suffix: str) -> Path:
    """``path`` if a file named ``*<suffix>`` can be written there (creating missing folders); else ``ValueError``.

    Checked without creating anything: ``path`` must not be a folder and must end in ``suffix``, and the nearest
    existing folder above it must accept a new file (tried with an anonymous temporary file).

    Args:
        path: The file to be written.
        what: What the file is, for the message (``"--output"``, ``"results file"``).
        suffix: The ending its name must have (``".ipynb"``).
    """
    path = Path(path)
    if path.is_dir():
        raise ValueError(f"{what} {path} is a folder; give a file name ending in {suffix}")
    if path.suffix != suffix:
        raise ValueError(f"{what} {path}: expected a file name ending in {suffix}")
    _check_can_create_in(path.parent, f"{what} {path}")
    return path


def check_writable_folder(folder: str | os.PathLike, what: str) -> Path:
    """``folder`` if it is, or can be created as, a folder that accepts new files; else ``ValueError``.

    Args:
        folder: The folder to be written in.
        what: What the folder is, for the message (``"--output"``).
    """
    folder = Path(folder)
    _check_can_create_in(folder, f"{what} {folder}")
    return folder


def _check_can_create_in(folder: Path, described: str) -> None:
    existing = next(p for p in (folder, *folder.absolute().parents) if p.exists())
    if not existing.is_dir():
        raise ValueError(f"{described}: {existing} is not a folder")
    try:
        with tempfile.TemporaryFile(dir=existing):
            pass
    except OSError as exc:
        raise ValueError(f"{described}: cannot write in {existing} ({exc.strerror})") from None
