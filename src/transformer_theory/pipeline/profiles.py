"""Parameter profiles: ``params/smoke.yaml`` (CI), ``params/book.yaml`` (default), ``params/paper.yaml``.

Each file maps a notebook stem to the parameter values that profile gives it.
"""

from __future__ import annotations

from typing import Any

import yaml

from transformer_theory.pipeline.paths import params_dir

PROFILES = ("smoke", "book", "paper")
DEFAULT_PROFILE = "book"


def load_profile(profile: str) -> dict[str, dict[str, Any]]:
    """The notebook → parameters mapping of ``profile``; ``ValueError`` for an unknown or malformed one."""
    if profile not in PROFILES:
        raise ValueError(f"unknown profile '{profile}'. Valid profiles: {', '.join(PROFILES)}")
    path = params_dir() / f"{profile}.yaml"
    if not path.is_file():
        raise ValueError(f"profile '{profile}': file {path} is missing")
    data = yaml.safe_load(path.read_text()) or {}
    if not isinstance(data, dict):
        raise ValueError(f"{path}: expected a mapping 'notebook: {{parameter: value}}', got {type(data).__name__}")
    for notebook, params in data.items():
        if params is not None and not isinstance(params, dict):
            raise ValueError(f"{path}: entry '{notebook}' must be a mapping of parameters, got {params!r}")
    return {str(k): dict(v or {}) for k, v in data.items()}

