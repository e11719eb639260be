"""What a results file records about the run: versions, git commit, platform, config hash."""

from __future__ import annotations

import hashlib
import json
import platform
import subprocess
import sys
from importlib import metadata
from typing import Any

from transformer_theory.pipeline.paths import project_root

#: Packages whose versions every results file records.
TRACKED_PACKAGES = ("transformer-theory", "numpy", "torch", "matplotlib", "papermill", "nbformat", "jupyter-book", "Sphinx")


def package_versions() -> dict[str, str]:
    versions = {"python": platform.python_version()}
    for name in TRACKED_PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return versions


def git_commit() -> dict[str, Any]:
    """The checkout's commit and whether its tracked files have uncommitted changes."""

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", *args], cwd=project_root(), capture_output=True, text=True, check=True, timeout=10
        ).stdout.strip()

    try:
        commit = git("rev-parse", "HEAD")
        dirty = bool(git("status", "--porcelain", "--untracked-files=no"))
    except (OSError, subprocess.SubprocessError):
        return {"commit": "unknown", "dirty": None}
    return {"commit": commit, "dirty": dirty}


def config_hash(notebook: str, parameters: dict[str, Any]) -> str:
    """A short hash of the notebook name and its effective parameters (identifies a configuration)."""
    blob = json.dumps({"notebook": notebook, "parameters": parameters}, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def environment() -> dict[str, Any]:
    return {
        "versions": package_versions(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "executable": sys.executable,
        "git": git_commit(),
    }
