"""Names a package loads on first use (PEP 562): importing the package then pulls in nothing heavy (torch, Dask,
matplotlib) until one of those names is used. The top-level package, :mod:`transformer_theory.models` and
:mod:`transformer_theory.training` are such packages. Imports nothing of the project."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_names(package: str, names: Mapping[str, str], namespace: Mapping[str, Any]
               ) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package``, whose public ``names`` each map to the module that defines
    it (an absolute name) and whose own ``namespace`` (its ``globals()``) holds the rest."""

    def attribute(name: str) -> Any:
        if name in names:
            return getattr(importlib.import_module(names[name]), name)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def listing() -> list[str]:
        return sorted([*namespace, *names])

    return attribute, listing
