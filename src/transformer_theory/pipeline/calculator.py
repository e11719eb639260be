"""``python -m transformer_theory predict TARGET --heads H1,H2,...``: the InfoFlow calculator on the command line.

The target is read by :func:`~transformer_theory.infoflow.expression.parse_target` (a named target or an
expression, :data:`~transformer_theory.infoflow.expression.SYNTAX`), the verdict comes from
:func:`~transformer_theory.infoflow.predict` and the information sets from the same schedule
(:class:`~transformer_theory.infoflow.Propagation`). :func:`answer` gathers them in one
:class:`Answer`; :func:`format_answer` prints it, :meth:`Answer.as_json` is the ``--json`` form.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict, dataclass

from transformer_theory.checks import positive_int
from transformer_theory.infoflow import Architecture, predict
from transformer_theory.infoflow.expression import SYNTAX, parse_target
from transformer_theory.infoflow.propagation import Propagation, steps_of
from transformer_theory.infoflow.schedule import CLS

__all__ = ["Answer", "Layer", "add_parser", "answer", "format_answer", "parse_heads", "run"]

#: Defaults of ``--embed`` and ``--T`` (the held-out suite's E and longer sequence length) and ``--d``.
EMBED, SEQ_LEN, TOKEN_DIM = 32, 16, 4

#: Information sets longer than this are printed as a count (``--json`` always lists them).
SHOWN = 12


@dataclass(frozen=True)
class Layer:
    """Information sets after ``layer``: of a generic token ``t`` and of the CLS token."""

    layer: int
    token: tuple[str, ...]
    cls: tuple[str, ...]


@dataclass(frozen=True)
class Answer:
    """What ``predict`` prints: the target, the architecture, the verdict with its reason and cost, and the
    information sets layer by layer."""

    target: str
    formula: str
    heads: tuple[int, ...]
    embed_dim: int
    input_dim: int
    positional: bool
    seq_len: int
    efficient: bool
    reason: str
    exponent: float
    regime: str
    cost: str
    reference: str
    notes: tuple[str, ...]
    layers: tuple[Layer, ...]

    @property
    def verdict(self) -> str:
        return "efficient" if self.efficient else "inefficient"

    def as_json(self) -> str:
        return json.dumps({**asdict(self), "verdict": self.verdict}, indent=2)


def _ordered(labels: set[str]) -> tuple[str, ...]:
    """Positions first (in numeric order), then the retrieved ones by length and name."""
    return tuple(sorted(labels, key=lambda s: (not s.isdigit(), int(s) if s.isdigit() else len(s), s)))


def answer(target: str, heads: tuple[int, ...], embed_dim: int = EMBED, seq_len: int = SEQ_LEN,
           input_dim: int | None = None, positional: bool = False, seed: int = 0) -> Answer:
    """The calculator's answer for the target text ``target`` on ``heads`` (one count per layer).

    ``input_dim`` and ``seed`` set an expression's token dimension (default 4) and parameters; a named target
    has its own (its ``d`` and ``seed`` arguments), so giving ``input_dim`` with one is an error.
    """
    tree = parse_target(target, TOKEN_DIM if input_dim is None else input_dim, seed)
    if input_dim is not None and tree.input_dim != input_dim:
        raise ValueError(f"--d {input_dim}: the named target {tree.name} works on tokens of dimension "
                         f"d = {tree.input_dim} (set it with its argument d=..., where it has one)")
    arch = Architecture(heads, embed_dim, tree.input_dim, positional=positional)
    prediction = predict(tree, arch, seq_len)
    flow = Propagation(prediction.schedule, steps_of(prediction.schedule))
    layers = tuple(Layer(layer, _ordered(flow.template(layer)), _ordered(flow.labels(CLS, layer)))
                   for layer in range(arch.n_layers + 1))
    return Answer(target=tree.name, formula=tree.description or " + ".join(repr(t) for t in tree.terms),
                  heads=arch.heads, embed_dim=arch.embed_dim, input_dim=arch.input_dim, positional=positional,
                  seq_len=prediction.seq_len, efficient=prediction.efficient, reason=prediction.reason,
                  exponent=prediction.exponent, regime=prediction.regime, cost=prediction.formula,
                  reference=prediction.reference, notes=prediction.notes, layers=layers)


def _set(labels: tuple[str, ...]) -> str:
    if len(labels) > SHOWN:
        return f"{len(labels)} positions ({', '.join(labels[:4])}, ..., {labels[-1]})"
    return "{" + ", ".join(labels) + "}"


def format_answer(a: Answer) -> str:
    """``a`` as the lines ``predict`` prints."""
    pe = ", positional encoding" if a.positional else ""
    lines = [f"target        {a.target}" + ("" if a.formula == a.target else f": {a.formula}"),
             f"architecture  {len(a.heads)} layer(s), heads {','.join(map(str, a.heads))}, E = {a.embed_dim}, "
             f"d = {a.input_dim}{pe}; T = {a.seq_len}",
             f"verdict       {a.verdict}",
             f"reason        {a.reason}",
             f"cost          M ~ eps^-{a.exponent:.3g} parameters for accuracy eps ({a.regime}): {a.cost}"]
    if a.reference:
        lines.append(f"reference     {a.reference}")
    lines += [f"note          {n}" for n in a.notes]
    lines.append("information sets I(t, l) of a token t and I(CLS, l) of the CLS token after layer l "
                 "(s1* is the position the reduction labelled s1 retrieves):")
    lines += [f"  l = {x.layer}: I(t) = {_set(x.token)}   I(CLS) = {_set(x.cls)}" for x in a.layers]
    return "\n".join(lines)


def parse_heads(text: str) -> tuple[int, ...]:
    """``"2,2"`` -> ``(2, 2)``: head counts per layer (``ValueError`` naming ``--heads`` otherwise)."""
    parts = [p.strip() for p in text.split(",")]
    if not all(p.isdigit() and int(p) > 0 for p in parts):
        raise ValueError(f"--heads {text!r}: expected positive head counts per layer, separated by commas, "
                         f"such as 2,2 or 1")
    return tuple(int(p) for p in parts)


def add_parser(sub: argparse._SubParsersAction) -> None:
    """The ``predict`` subcommand (its ``--help`` documents the expression syntax)."""
    parser = sub.add_parser(
        "predict", help="the InfoFlow calculator: is a target efficient on an architecture, and why",
        description="Predict whether a transformer with the given heads per layer approximates TARGET\n"
                    "efficiently (InfoFlow's rule as this book reconstructs it): the verdict, its reason, the\n"
                    "cost exponent and the information sets layer by layer.",
        epilog=SYNTAX, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("target", help="a named target such as 'pairwise_max(D=2)', or an expression such as "
                        "'max_t a^T x(t) + max_s b^T x(s)' (quote it; syntax below)")
    parser.add_argument("--heads", required=True, metavar="H1,H2,...", help="heads per layer, such as 2,2 (two layers)")
    parser.add_argument("--embed", type=int, default=EMBED, metavar="E", help=f"embedding dimension E (default {EMBED})")
    parser.add_argument("--T", type=int, default=SEQ_LEN, dest="seq_len", metavar="T",
                        help=f"sequence length (default {SEQ_LEN})")
    parser.add_argument("--d", type=int, metavar="D", help=f"token dimension of an expression (default {TOKEN_DIM})")
    parser.add_argument("--seed", type=int, default=0, help="seed of an expression's parameters (default 0)")
    parser.add_argument("--positional", action="store_true", help="the model has positional encoding")
    parser.add_argument("--json", action="store_true", help="print the answer as JSON")


def run(args: argparse.Namespace) -> int:
    """Print the answer; bad input raises ``ValueError`` (exit status 2) before anything is computed."""
    heads = parse_heads(args.heads)
    embed, seq_len = positive_int("--embed", args.embed), positive_int("--T", args.seq_len)
    a = answer(args.target, heads, embed, seq_len, args.d, args.positional, args.seed)
    print(a.as_json() if args.json else format_answer(a))
    return 0
