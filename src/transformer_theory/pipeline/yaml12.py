"""Reading profile files and command-line values as YAML 1.2 (core schema), with one-line errors.

PyYAML implements YAML 1.1, where ``010`` is 8, ``1:30`` is 90, ``yes`` is true, ``1e3`` is a string and
``2001-12-14`` a date. :class:`Yaml12Loader` keeps PyYAML's parser and replaces its scalar resolution by the
1.2 core schema (YAML 1.2.2, section 10.3.2): ``null``/``~``, ``true``/``false``, decimal, ``0o`` and ``0x``
integers, floats with an optional exponent, ``.inf`` and ``.nan``; everything else is a string. A key given
twice in one mapping is an error (1.2 forbids it; PyYAML keeps the last value). An alias inside its own anchor (``a: &x [*x]``, a recursive structure no parameter can hold) is an error.
"""

from __future__ import annotations

import math
import re
from typing import Any

import yaml
from yaml.composer import ComposerError
from yaml.constructor import ConstructorError

_INT = re.compile(r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$")
_FLOAT = re.compile(
    r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"
)
_BOOL = re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$")
_NULL = re.compile(r"^(?:~|null|Null|NULL|)$")
_MERGE = re.compile(r"^<<$")  # not part of 1.2, but every 1.2 loader keeps merge keys


class Yaml12Loader(yaml.SafeLoader):
    """PyYAML's safe loader with YAML 1.2 core-schema scalars and an error for self-referencing anchors."""

    yaml_implicit_resolvers: dict = {}

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._open_anchors: list[str | None] = []  # anchors of the collections being composed

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent) and self.peek_event().anchor in self._open_anchors:
            event = self.peek_event()
            raise ComposerError(None, None, f"alias '*{event.anchor}' refers to its own anchor '&{event.anchor}' "
                                "(a self-referencing structure)", event.start_mark)
        return super().compose_node(parent, index)

    def _compose_collection(self, compose: Any, anchor: str | None) -> Any:
        self._open_anchors.append(anchor)
        try:
            return compose(anchor)
        finally:
            self._open_anchors.pop()

    def compose_sequence_node(self, anchor: str | None) -> Any:
        return self._compose_collection(super().compose_sequence_node, anchor)

    def compose_mapping_node(self, anchor: str | None) -> Any:
        return self._compose_collection(super().compose_mapping_node, anchor)

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict:
        """The mapping of ``node``; a key given twice is an error at its second line (YAML 1.2.2, 3.2.1.1)."""
        first: dict[Any, int] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":  # merged keys may be overridden
                continue
            key = self.construct_object(key_node, deep=True)
            try:
                seen = key in first
            except TypeError:  # an unhashable key: the base constructor reports it
                continue
            if seen:
                raise ConstructorError(None, None, f"duplicate key {key!r} (first given at line {first[key]})",
                                       key_node.start_mark)
            first[key] = key_node.start_mark.line + 1
        return super().construct_mapping(node, deep)

    def construct_yaml_int(self, node: yaml.ScalarNode) -> int:
        text = self.construct_scalar(node)
        if not _INT.match(text):
            raise ConstructorError(None, None, f"not a YAML 1.2 integer: {text!r}", node.start_mark)
        base = {"0o": 8, "0x": 16}.get(text[:2], 10)
        return int(text[2:] if base != 10 else text, base)

    def construct_yaml_float(self, node: yaml.ScalarNode) -> float:
        text = self.construct_scalar(node)
        special = {".inf": math.inf, "+.inf": math.inf, "-.inf": -math.inf, ".nan": math.nan}
        if text.lower() in special:
            return special[text.lower()]
        if not _FLOAT.match(text):
            raise ConstructorError(None, None, f"not a YAML 1.2 float: {text!r}", node.start_mark)
        return float(text)

    def construct_yaml_bool(self, node: yaml.ScalarNode) -> bool:
        text = self.construct_scalar(node)
        if not _BOOL.match(text):
            raise ConstructorError(None, None, f"not a YAML 1.2 boolean: {text!r}", node.start_mark)
        return text.lower() == "true"


for _tag, _regexp, _first in [
    ("bool", _BOOL, "tTfF"),
    ("int", _INT, "-+0123456789"),
    ("float", _FLOAT, "-+0123456789."),
    ("null", _NULL, ["~", "n", "N", ""]),
    ("merge", _MERGE, "<"),
]:
    Yaml12Loader.add_implicit_resolver(f"tag:yaml.org,2002:{_tag}", _regexp, list(_first))
for _tag in ("int", "float", "bool"):
    Yaml12Loader.add_constructor(f"tag:yaml.org,2002:{_tag}", getattr(Yaml12Loader, f"construct_yaml_{_tag}"))


def error_line(exc: yaml.YAMLError, source: str) -> str:
    """``exc`` as one line naming ``source`` and, where PyYAML knows it, the line and column."""
    mark = getattr(exc, "problem_mark", None)
    if mark is None:
        return f"{source}: {' '.join(str(exc).split())}"
    problem = getattr(exc, "problem", None) or "invalid YAML"
    context = getattr(exc, "context", None)
    return f"{source}, line {mark.line + 1}, column {mark.column + 1}: {problem}" + (f" ({context})" if context else "")


def compose(text: str, source: str) -> yaml.Node | None:
    """The node tree of the YAML document ``text``; ``ValueError`` (one line, see :func:`error_line`) if invalid."""
    loader = Yaml12Loader(text)
    try:
        return loader.get_single_node()
    except yaml.YAMLError as exc:
        raise ValueError(error_line(exc, source)) from None
    finally:
        loader.dispose()


def construct(node: yaml.Node | None, source: str) -> Any:
    """The Python value of a node tree from :func:`compose` (``None`` for an empty document)."""
    if node is None:
        return None
    loader = Yaml12Loader("")
    try:
        return loader.construct_document(node)
    except yaml.YAMLError as exc:
        raise ValueError(error_line(exc, source)) from None
    finally:
        loader.dispose()


def load(text: str, source: str) -> Any:
    """Parse ``text`` as YAML 1.2; ``ValueError`` naming ``source``, the line and the problem if invalid."""
    return construct(compose(text, source), source)
