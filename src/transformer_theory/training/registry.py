"""The targets a run can train on, by name: a registry that the chapters add to.

The engine knows no target: a :class:`~transformer_theory.training.config.RunConfig` names its target, and the
name (part of the run's key) is looked up here. Whoever defines runs registers the functions they train on
(:func:`register_targets`, done for the book's chapters by :mod:`~transformer_theory.chapters.registry`).
"""

from __future__ import annotations

from typing import Callable, Mapping

from transformer_theory.infoflow.trees import Tree

#: A function of a target's parameters (a run's ``target_args``) returning its comparison tree.
TargetFunction = Callable[..., Tree]

_TARGETS: dict[str, TargetFunction] = {}


def register_targets(functions: Mapping[str, TargetFunction]) -> None:
    """Make each function trainable under its name (registering the same function twice is harmless).

    Raises:
        ValueError: a name is not an identifier, a function is not callable, or a name is taken by another
            function (runs of both would share their keys).
    """
    for name, function in functions.items():
        if not isinstance(name, str) or not name.isidentifier():
            raise ValueError(f"a target's name is an identifier, got {name!r}")
        if not callable(function):
            raise ValueError(f"target {name!r}: expected a function returning a Tree, got {function!r}")
        if _TARGETS.get(name, function) is not function:
            raise ValueError(f"target {name!r} is already registered as {_TARGETS[name]!r}")
    _TARGETS.update(functions)


def target_names() -> tuple[str, ...]:
    """The registered names, in the order they were registered."""
    return tuple(_TARGETS)


def target_function(name: str) -> TargetFunction:
    """The function registered as ``name`` (``ValueError`` listing the registered names otherwise)."""
    if name not in _TARGETS:
        raise ValueError(f"target must be one of {', '.join(_TARGETS)}, got {name!r} "
                         f"(register it with register_targets)")
    return _TARGETS[name]
