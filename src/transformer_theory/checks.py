"""Argument checks shared by every package: each raises ``ValueError`` naming the argument.

One notion of integer everywhere: a :class:`numbers.Integral` that is not a ``bool`` (so ``3``,
``np.int64(3)`` pass; ``True``, ``3.0`` and ``"3"`` do not). One notion of real: a
:class:`numbers.Real` that is not a ``bool`` (``np.float32`` passes, numeric strings do not).
"""

from __future__ import annotations

import difflib
import math
import numbers
from typing import Any, Collection, Iterable, TypeVar

import numpy as np

T = TypeVar("T")

__all__ = ["is_integer", "is_real", "positive_int", "non_negative_int", "positive_real", "non_negative_real",
           "finite_real", "one_of", "seed_value", "boolean", "unknown_name"]


def is_integer(value: object) -> bool:
    """``True`` for integers (Python or NumPy), ``False`` for bools, floats and everything else."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def is_real(value: object) -> bool:
    """``True`` for real numbers (Python or NumPy ints and floats), ``False`` for bools, complex, strings."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def positive_int(name: str, value: object) -> int:
    """``value`` as an ``int`` if it is an integer >= 1, else ``ValueError`` naming ``name``."""
    if not is_integer(value) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


def non_negative_int(name: str, value: object) -> int:
    """``value`` as an ``int`` if it is an integer >= 0, else ``ValueError`` naming ``name``."""
    if not is_integer(value) or value < 0:
        raise ValueError(f"{name} must be a non-negative integer, got {value!r}")
    return int(value)


def finite_real(name: str, value: object) -> float:
    """``value`` as a ``float`` if it is a finite real number, else ``ValueError`` naming ``name``."""
    if not is_real(value) or not math.isfinite(float(value)):
        raise ValueError(f"{name} must be a finite real number, got {value!r}")
    return float(value)


def positive_real(name: str, value: object) -> float:
    """``value`` as a ``float`` if it is a finite real number > 0, else ``ValueError`` naming ``name``."""
    if not is_real(value) or not math.isfinite(float(value)) or not float(value) > 0:
        raise ValueError(f"{name} must be a positive finite number, got {value!r}")
    return float(value)


def non_negative_real(name: str, value: object) -> float:
    """``value`` as a ``float`` if it is a finite real number >= 0, else ``ValueError`` naming ``name``."""
    if not is_real(value) or not math.isfinite(float(value)) or float(value) < 0:
        raise ValueError(f"{name} must be a non-negative finite number, got {value!r}")
    return float(value)


def one_of(name: str, value: T, choices: Collection[Any]) -> T:
    """``value`` if it is one of ``choices`` (not a bool, not a list), else ``ValueError`` listing them."""
    try:
        ok = not isinstance(value, bool) and value in choices  # True == 1: a bool never stands for a choice
    except TypeError:  # an unhashable value (a list) is never a valid choice
        ok = False
    if not ok:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, choices))}, got {value!r}")
    return value


def seed_value(value: object, name: str = "seed") -> int:
    """A random seed: an integer >= 0 (``ValueError`` naming ``name`` otherwise)."""
    return non_negative_int(name, value)


def boolean(name: str, value: object) -> bool:
    """``value`` if it is ``True`` or ``False`` (Python or NumPy bool), else ``ValueError`` naming ``name``."""
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def unknown_name(what: str, name: object, valid: Iterable[str], where: str = "") -> ValueError:
    """The error for ``name``, which is no valid ``what`` (``"notebook"``): ``where`` prefixes it, the closest valid
    name is offered ("Did you mean"), and the valid names are listed sorted (the same list every time)."""
    valid = sorted(valid)
    close = difflib.get_close_matches(str(name), valid, n=1)
    hint = f" Did you mean {close[0]!r}?" if close else ""
    return ValueError(f"{where}unknown {what} {name!r}.{hint} Valid {what}s: {', '.join(valid) or '(none)'}")
