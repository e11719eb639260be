"""Checking parameter overrides against a notebook's ``parameters`` cell.

papermill silently ignores a misspelled parameter name; every run of this project goes through
:func:`check_parameters` first, so a typo or a wrongly typed value fails before anything executes.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Collection
from typing import Any, Iterator

from transformer_theory.checks import finite_real, unknown_name
from transformer_theory.pipeline import yaml12


def parse_value(text: str) -> Any:
    """Parse a command-line value as a YAML 1.2 scalar or flow list (``10``, ``1e-3``, ``true``, ``[2, 3]``, ``abc``);
    an empty (or blank) value is that string (YAML would read null: write ``null`` for that)."""
    return yaml12.load(text, f"value {text!r}") if text.strip() else text


def parse_list(text: str) -> list[Any]:
    """Parse a sweep's comma-separated values ``v1,v2,...`` (each a YAML 1.2 scalar or flow list)."""
    values = yaml12.load(f"[{text}]", f"sweep values {text!r}")
    if not values:
        raise ValueError(f"sweep values {text!r}: expected at least one value")
    return values


#: The longest :func:`point_name` kept whole; a longer one is cut and ends in a hash of the whole.
MAX_NAME = 100


def point_name(point: dict[str, Any]) -> str:
    """A readable, file-name-safe label of parameter values, e.g. ``N=10_seed=0`` (lists as ``dims=2,3``), in the
    order given; one longer than :data:`MAX_NAME` characters is cut and ends in 8 hex digits of its whole text."""

    def fmt(value: Any) -> str:
        text = ",".join(map(str, value)) if isinstance(value, (list, tuple)) else str(value)
        return re.sub(r"[^A-Za-z0-9.,+-]", "-", text)

    name = "_".join(f"{k}={fmt(v)}" for k, v in point.items())
    if len(name) <= MAX_NAME:
        return name
    return f"{name[:MAX_NAME - 9]}-{hashlib.sha256(repr(point).encode()).hexdigest()[:8]}"


def _floats(value: Any, where: str = "") -> Iterator[tuple[str, float]]:
    """Every float inside ``value`` (lists, tuples, dict values), with its position such as ``[2]``."""
    if isinstance(value, float):
        yield where, value
    elif isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            yield from _floats(item, f"{where}[{i}]")
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _floats(item, f"{where}[{key!r}]")


def _type_name(value: Any) -> str:
    return type(value).__name__


def _typed(name: str, notebook: str, default: Any, value: Any, where: str) -> Any:
    """Return ``value`` converted to the default's type, or raise ``ValueError`` naming the mismatch.

    A list must be non-empty if its default is, and its elements must have the type of the default's
    elements when those all have one type (``[1, 2]``: integers; ``[[1, 2]]``: lists of integers).
    """
    if default is None:  # a default that is not a literal: any value
        return value
    ok = True
    if isinstance(default, bool):
        ok = isinstance(value, bool)
    elif isinstance(default, int):
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif isinstance(default, float):
        ok = isinstance(value, (int, float)) and not isinstance(value, bool)
        value = float(value) if ok else value
    elif isinstance(default, (list, tuple)):
        ok = isinstance(value, (list, tuple))
        if ok and default and not value:
            raise ValueError(f"parameter '{name}' of notebook '{notebook}' expects a non-empty list "
                             f"(default {default!r}), got []{where}")
        if ok:
            element = default[0] if len({type(d) for d in default}) == 1 else None
            value = [_typed(f"{name}[{i}]", notebook, element, v, where) for i, v in enumerate(value)]
    else:
        ok = isinstance(value, type(default))
    if not ok:
        raise ValueError(
            f"parameter '{name}' of notebook '{notebook}' expects {_type_name(default)} "
            f"(default {default!r}), got {_type_name(value)} {value!r}{where}"
        )
    return value


def _coerce(name: str, notebook: str, default: Any, value: Any, where: str) -> Any:
    """:func:`_typed`, refusing NaN and infinities unless the default itself holds one (``x = 1e999``)."""
    value = _typed(name, notebook, default, value, where)
    if all(math.isfinite(x) for _, x in _floats(default)):
        for position, x in _floats(value):
            finite_real(f"parameter '{name}{position}' of notebook '{notebook}'{where}", x)
    return value


def check_parameters(notebook: str, defaults: dict[str, Any], values: dict[str, Any], *, source: str = "",
                     may_be_empty: Collection[str] = ()) -> dict[str, Any]:
    """Validate ``values`` against the notebook's ``defaults``; return them coerced to the default types.

    ``source`` names where the values came from (``"-p"``, ``"params/smoke.yaml"``) for the message;
    ``may_be_empty`` names the lists that may be empty although their default is not (a chapter's optional
    parts, :attr:`~transformer_theory.chapters.experiment.Experiment.optional`).
    """
    where = f" (from {source})" if source else ""
    checked: dict[str, Any] = {}
    for name, value in values.items():
        if name not in defaults:
            raise unknown_name("parameter", name, defaults, f"notebook '{notebook}'{where}: ")
        empty = name in may_be_empty and isinstance(value, (list, tuple)) and not value
        checked[name] = [] if empty else _coerce(name, notebook, defaults[name], value, where)
    return checked
