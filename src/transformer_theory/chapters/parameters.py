"""What the parameter dataclasses of the chapters share: the field of a parameter with its one-line description
(:func:`param`, :func:`setting`, read back by :func:`descriptions`), the training settings of chapters 07 to 12
(:class:`TrainingParameters`), the checks their ``__post_init__`` makes (each raises ``ValueError`` naming the
parameter) and the ``DEFAULTS`` dict derived from a dataclass.

A chapter's parameters are a frozen dataclass whose fields are the names of its notebook's ``parameters`` cell, each
with its default, type and description (the single source ``python -m transformer_theory list NOTEBOOK`` prints); a
list parameter is stored as a tuple once checked (lists of lists as tuples of tuples), and :func:`defaults` gives
them back as lists, the form the notebook's cell and the profiles hold.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, field, fields, make_dataclass
from typing import Any

from transformer_theory.checks import non_negative_int, non_negative_real, positive_int, positive_real
from transformer_theory.chapters.experiment import TRAINING_DEFAULTS, int_list, non_empty_list, seed_list

__all__ = ["SETTING_DOCS", "SHARED_SETTINGS", "TrainingParameters", "defaults", "descriptions", "double_seed_list",
           "int_lists", "int_rows", "param", "positive_ints", "reference_step_list", "seed_lists", "setting", "store"]

#: The one-line description of each training setting of
#: :data:`~transformer_theory.chapters.experiment.TRAINING_DEFAULTS` (:func:`setting`).
SETTING_DOCS: dict[str, str] = {
    "steps": "AdamW steps of each run",
    "batch_size": "samples per AdamW step",
    "lr": "peak learning rate (linear warm-up, then a half cosine)",
    "warmup": "steps of the learning rate's linear warm-up",
    "weight_decay": "AdamW's weight decay",
    "train_size": "training samples, drawn once per run",
    "val_size": "held-out samples of the validation NMSE",
    "eval_every": "steps between two validation NMSEs",
    "seeds": "seeds of each configuration (the best over them is reported)",
    "ffn_width": "hidden width of each FFN",
    "encoder_width": "hidden width of the two-layer ReLU token encoder",
}


def param(default: Any, doc: str) -> Any:
    """The dataclass field of a parameter: its ``default`` (a list given as a tuple) and its one-line description."""
    return field(default=default, metadata={"doc": doc})


def setting(name: str, default: Any = None, doc: str | None = None) -> Any:
    """The field of the training setting ``name``: ``default`` (``None``: its value in ``TRAINING_DEFAULTS``, a list as
    a tuple) and ``doc`` (``None``: its :data:`SETTING_DOCS` line)."""
    value = TRAINING_DEFAULTS[name] if default is None else default
    return param(tuple(value) if isinstance(value, list) else value, SETTING_DOCS[name] if doc is None else doc)


def descriptions(cls: type) -> dict[str, str]:
    """Each parameter of the dataclass ``cls`` and its one-line description ("" when it has none)."""
    return {f.name: f.metadata.get("doc", "") for f in fields(cls)}


def store(p: Any, name: str, value: Any) -> None:
    """Store the checked ``value`` of ``name`` (a tuple for a list) in the frozen dataclass ``p``: only its
    ``__post_init__`` does so."""
    object.__setattr__(p, name, value)


def positive_ints(p: Any, *names: str) -> None:
    """Each of ``names`` is a positive integer."""
    for name in names:
        positive_int(name, getattr(p, name))


def int_lists(p: Any, *names: str, low: int = 1) -> None:
    """Each of ``names`` is a non-empty list of integers ``>= low``, stored as a tuple."""
    for name in names:
        store(p, name, tuple(int_list(name, getattr(p, name), low)))


def seed_lists(p: Any, *names: str) -> None:
    """Each of ``names`` is a non-empty list of seeds (integers ``>= 0``), stored as a tuple."""
    for name in names:
        store(p, name, tuple(seed_list(name, getattr(p, name))))


def double_seed_list(p: Any, among: str = "seeds", name: str = "double_seeds") -> None:
    """The parameter ``name``, the seeds of a chapter's doubling check (:mod:`~transformer_theory.chapters.budget`), is
    a list (empty: no doubling check) of seeds among those of the parameter ``among``; stored as a tuple."""
    values = getattr(p, name)
    if isinstance(values, (str, bytes)) or not isinstance(values, Sequence):
        raise ValueError(f"{name} must be a list of seeds (empty: no doubling check), got {values!r}")
    store(p, name, tuple(seed_list(name, values)) if values else ())
    if not set(getattr(p, name)) <= set(getattr(p, among)):
        raise ValueError(f"{name}: {list(getattr(p, name))} must be among {among} {list(getattr(p, among))} (each "
                         "doubled run is compared with its own seed's run)")


def reference_step_list(p: Any) -> None:
    """``reference_steps``, the step counts of a chapter's budget check, is a list (empty: no budget check) of
    positive integers other than ``steps``; stored as a tuple."""
    values = p.reference_steps
    if isinstance(values, (str, bytes)) or not isinstance(values, Sequence):
        raise ValueError(f"reference_steps must be a list of step counts (empty: no budget check), got {values!r}")
    store(p, "reference_steps", tuple(positive_int(f"reference_steps[{i}]", n) for i, n in enumerate(values)))
    if p.steps in p.reference_steps:
        raise ValueError(f"reference_steps must differ from steps = {p.steps}, got {list(p.reference_steps)}")


def int_rows(p: Any, name: str, what: str, length: int | None = None) -> None:
    """``name`` is a non-empty list of non-empty lists of positive integers; stored as a tuple of tuples.

    Args:
        p: The parameter dataclass being checked (in its ``__post_init__``).
        name: The field to check.
        what: What a row is, for the message (``"[h1, h2, E] triples"``).
        length: The number of integers every row must hold (``None``: any).
    """
    rows = non_empty_list(name, getattr(p, name), what)
    checked = tuple(tuple(int_list(f"{name}[{i}]", row)) for i, row in enumerate(rows))
    if length is not None and any(len(row) != length for row in checked):
        raise ValueError(f"{name} must hold {what}, got {getattr(p, name)!r}")
    store(p, name, checked)


#: The training settings every chapter of 07 to 12 has, with the defaults of
#: :data:`~transformer_theory.chapters.experiment.TRAINING_DEFAULTS`; a chapter adds ``steps`` and, if it has them,
#: ``train_size`` (``None``: fresh samples at every step), ``seeds`` and ``ffn_width`` (chapter 10 sizes its FFNs
#: per D instead).
SHARED_SETTINGS = ("batch_size", "lr", "warmup", "weight_decay", "val_size", "eval_every", "encoder_width")


class _TrainingChecks:
    """The checks of the training settings (sizes positive, ``lr`` positive, ``warmup`` and ``weight_decay``
    non-negative) and the parameters as the dict the run builders of :mod:`.experiment` read."""

    def __post_init__(self) -> None:
        positive_ints(self, "batch_size", "val_size", "eval_every", "encoder_width", "steps",
                      *(n for n in ("train_size", "ffn_width") if getattr(self, n, None) is not None))
        positive_real("lr", getattr(self, "lr"))
        non_negative_int("warmup", getattr(self, "warmup"))
        non_negative_real("weight_decay", getattr(self, "weight_decay"))

    def settings(self) -> dict[str, Any]:
        """The parameters as a dict, the form :func:`~transformer_theory.chapters.experiment.experiment_run` and
        :func:`~transformer_theory.chapters.experiment.infoflow_model` read."""
        return asdict(self)  # self: a TrainingParameters (the dataclass below) or a subclass


#: The frozen dataclass of :data:`SHARED_SETTINGS` (their names and defaults taken from ``TRAINING_DEFAULTS``, so
#: they are written once) that every chapter's parameters extend; checked on construction.
TrainingParameters = make_dataclass("TrainingParameters",
                                    [(n, type(TRAINING_DEFAULTS[n]), setting(n)) for n in SHARED_SETTINGS],
                                    bases=(_TrainingChecks,), frozen=True, namespace={"__module__": __name__})


def _lists(value: Any) -> Any:
    return [_lists(v) for v in value] if isinstance(value, tuple) else value


def defaults(cls: type) -> dict[str, Any]:
    """The defaults of the parameter dataclass ``cls`` as its notebook's parameters cell holds them (lists, not
    tuples), in the order of its fields."""
    p = cls()
    return {f.name: _lists(getattr(p, f.name)) for f in fields(cls)}
