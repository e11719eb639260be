"""Checking parameter overrides against a notebook's ``parameters`` cell.

papermill silently ignores a misspelled parameter name; every run of this project goes through
:func:`check_parameters` first, so a typo or a wrongly typed value fails before anything executes.
"""

from __future__ import annotations

import difflib
from typing import Any

import yaml


def _numbers_as_floats(value: Any) -> Any:
    """YAML 1.1 reads ``1e-3`` (no dot) as a string; read such strings as the floats they spell."""
    if isinstance(value, list):
        return [_numbers_as_floats(v) for v in value]
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return value
    return value


def parse_value(text: str) -> Any:
    """Parse a command-line value as a YAML scalar or flow list (``10``, ``1e-3``, ``true``, ``[2, 3]``, ``abc``)."""
    try:
        return _numbers_as_floats(yaml.safe_load(text))
    except yaml.YAMLError as exc:
        raise ValueError(f"cannot parse value {text!r}: {exc}") from None


def parse_list(text: str) -> list[Any]:
    """Parse a sweep's comma-separated values ``v1,v2,...`` (each a YAML scalar or flow list)."""
    try:
        values = _numbers_as_floats(yaml.safe_load(f"[{text}]"))
    except yaml.YAMLError as exc:
        raise ValueError(f"cannot parse sweep values {text!r}: {exc}") from None
    if not values:
        raise ValueError(f"sweep values {text!r}: expected at least one value")
    return values


def _type_name(value: Any) -> str:
    return type(value).__name__


def _coerce(name: str, notebook: str, default: Any, value: Any) -> Any:
    """Return ``value`` converted to the default's type, or raise ``ValueError`` naming the mismatch."""
    if default is None:
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
        value = list(value) if ok else value
    else:
        ok = isinstance(value, type(default))
    if not ok:
        raise ValueError(
            f"parameter '{name}' of notebook '{notebook}' expects {_type_name(default)} "
            f"(default {default!r}), got {_type_name(value)} {value!r}"
        )
    return value


def check_parameters(notebook: str, defaults: dict[str, Any], values: dict[str, Any], *, source: str = "") -> dict[str, Any]:
    """Validate ``values`` against the notebook's ``defaults``; return them coerced to the default types.

    ``source`` names where the values came from (``"-p"``, ``"params/smoke.yaml"``) for the message.
    """
    where = f" (from {source})" if source else ""
    checked: dict[str, Any] = {}
    for name, value in values.items():
        if name not in defaults:
            close = difflib.get_close_matches(name, list(defaults), n=1)
            hint = f" Did you mean '{close[0]}'?" if close else ""
            raise ValueError(
                f"unknown parameter '{name}' for notebook '{notebook}'{where}.{hint} "
                f"Valid parameters: {', '.join(defaults) or '(none)'}"
            )
        checked[name] = _coerce(name, notebook, defaults[name], value)
    return checked
