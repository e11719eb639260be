"""Parameter profiles: ``params/smoke.yaml`` (CI), ``params/book.yaml`` (default), ``params/paper.yaml``.

Each file maps a chapter's stem to the parameter values that profile gives it. Files are read as YAML 1.2
(:mod:`~transformer_theory.pipeline.yaml12`); every error names the file and the line.
"""

from __future__ import annotations

from typing import Any

from transformer_theory.checks import unknown_name
from transformer_theory.pipeline import yaml12
from transformer_theory.pipeline.notebooks import list_notebooks, unknown_notebook
from transformer_theory.storage.paths import params_dir

PROFILES = ("smoke", "book", "paper")
DEFAULT_PROFILE = "book"


def load_profile(profile: str) -> dict[str, dict[str, Any]]:
    """The chapter → parameters mapping of ``profile``; ``ValueError`` for an unknown or malformed one.

    Malformed: invalid YAML (a key given twice included), an empty file, not a mapping of mappings, or a key
    that is no chapter (a misspelled name).
    """
    if profile not in PROFILES:
        raise unknown_name("profile", profile, PROFILES)
    path = params_dir() / f"{profile}.yaml"
    if not path.is_file():
        raise ValueError(f"profile '{profile}': file {path} is missing")
    node = yaml12.compose(path.read_text(), str(path))
    data = yaml12.construct(node, str(path))
    if data is None:
        raise ValueError(f"{path}, line 1: the profile is empty; expected a mapping 'notebook: {{parameter: value}}' "
                         "(use 'notebook: {}' for a chapter's defaults)")
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a mapping 'notebook: {{parameter: value}}', got {type(data).__name__}")
    lines = {key.value: key.start_mark.line + 1 for key, _ in node.value if isinstance(key.value, str)}
    chapters = {p.stem for p in list_notebooks()}
    for notebook, params in data.items():
        where = f"{path}, line {lines.get(notebook, '?')}: "
        if notebook not in chapters:
            raise unknown_notebook(str(notebook), where)
        if params is not None and not isinstance(params, dict):
            raise ValueError(f"{where}entry '{notebook}' must be a mapping of parameters, got {params!r}")
    return {notebook: dict(params or {}) for notebook, params in data.items()}
