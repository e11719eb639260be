"""Targets from text: a named target with arguments, or a comparison tree written as an expression.

:func:`parse_target` reads either

* a **named target**: a function of :mod:`~transformer_theory.infoflow.targets` or a tree of the held-out
  suite (:data:`~transformer_theory.infoflow.heldout.TREES`) with literal arguments, e.g.
  ``pairwise_max(D=2)``, ``k_hop(3)``, ``specific_positions(P=(1, 2))``, ``mixed_orders``; or
* an **expression** in the syntax of :data:`SYNTAX`, e.g. ``max_t a^T x(t) + max_s b^T x(s)``, which
  becomes a :class:`~transformer_theory.infoflow.trees.Tree` of :class:`Reduction`, :class:`Linear`,
  :class:`Bilinear`, :class:`NormOfSum` and :class:`Sum` nodes.

Nothing is evaluated as Python: the text is tokenised and parsed by hand. A malformed text raises
:class:`ExpressionError` (a ``ValueError``) naming the column and what was expected there; an unknown
target name gets "did you mean".
"""

from __future__ import annotations

import difflib
import inspect
import re
import zlib
from dataclasses import dataclass
from typing import Any, Callable, NoReturn

import numpy as np

from transformer_theory.checks import positive_int, seed_value
import transformer_theory.infoflow.targets as targets
from transformer_theory.infoflow.trees import Bilinear, Expr, Linear, NormOfSum, Reduction, Tree

__all__ = ["SYNTAX", "ExpressionError", "named_targets", "parse_target"]

#: The expression syntax, as ``python -m transformer_theory predict --help`` prints it.
SYNTAX = """\
A target is a named target with arguments, or an expression.

Named targets: every function of transformer_theory.infoflow.targets and every tree of the held-out
suite, with literal arguments (numbers, True/False, tuples):
  pairwise_max(D=2)   k_hop(3)   max_retrieval(D=3, d=4)   specific_positions(P=(1, 2))   mixed_orders

Expressions: a sum of reductions over token positions, with named parameters.
  max_t SCORE, min_t SCORE        max / min over the position variable t (names: letters and digits)
  max_{s,t} SCORE                 max_s max_t SCORE (outer variable first)
  min_{s != t} SCORE              min over s, skipping the position of the enclosing variable t
  max[k=2]_t SCORE                the 2nd largest score
  a^T x(t)                        linear score: vector a times the token at t
  x(s)^T A x(t)                   bilinear score with matrix A; x(s)^T x(t) is the dot product
  ||x(t1) + x(t2) + x(t3)||       three-token score (any number of tokens); ||...||^2 squared
  2 SCORE, 2*SCORE, -SCORE        a constant times a score
  [SCORE + SCORE - SCORE + 1]     a sum of scores, in [...] or (...)
The score of a reduction is the one term that follows it (bracket a sum), so
  max_t a^T x(t) + max_s b^T x(s)            is a sum of two reductions (the root sums its terms),
  max_t [a^T x(t) + min_s b^T x(s)]          is one reduction whose score holds a nested one.
A reduction may read the variables of the reductions around it: max_t max_s x(s)^T A x(t).
Each vector or matrix name is one fixed random parameter (entries N(0, 1/d), drawn from --seed and the
name): the same name is the same parameter, different names are different ones.
Examples:
  'max_t a^T x(t) + max_t b^T x(t)'                  two retrievals (one head each)
  'max_t max_s x(s)^T A x(t)'                        pairwise max (InfoFlow's intrinsic-dimension target, D = 1)
  'min_t min_{s != t} x(s)^T x(t)'                   InfoFlow Theorem 1's minimum pairwise dot product
  'min_{t1,t2,t3} ||x(t1) + x(t2) + x(t3)||'         the triangle center
  'max_t [a^T x(t) + min_s b^T x(s)]'                a shifted max
"""

_TOKEN = re.compile(r"""
    (?P<space>\s+)
  | (?P<number>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)
  | (?P<transpose>\^T(?![A-Za-z0-9]))
  | (?P<norm>\|\|)
  | (?P<ne>!=)
  | (?P<punct>[()\[\]{},+\-*=_^])
  | (?P<name>[A-Za-z][A-Za-z0-9]*)
""", re.VERBOSE)

_REDUCE = ("max", "min")


class ExpressionError(ValueError):
    """A malformed target text: ``column`` (1-based) is where it goes wrong, the message says what was expected."""

    def __init__(self, text: str, column: int, message: str):
        self.text, self.column, self.message = text, column, message
        shown = " ".join(text.splitlines())
        super().__init__(f"{message} (at column {column})\n  {shown}\n  {' ' * (column - 1)}^")


@dataclass(frozen=True)
class _Token:
    kind: str   # number, transpose, norm, ne, punct, name, end
    text: str
    column: int

    def describe(self) -> str:
        return "the end of the expression" if self.kind == "end" else repr(self.text)


def _tokens(text: str, start: int = 0, end: int | None = None) -> list[_Token]:
    """The tokens of ``text[start:end]``, with their columns in ``text``."""
    end = len(text) if end is None else end
    out, i = [], start
    while i < end:
        m = _TOKEN.match(text, i, end)
        if m is None:
            raise ExpressionError(text, i + 1, f"unexpected character {text[i]!r}")
        if m.lastgroup != "space":
            out.append(_Token(m.lastgroup, m.group(), i + 1))
        i = m.end()
    return out + [_Token("end", "", end + 1)]


def named_targets() -> dict[str, Callable[..., Tree]]:
    """Every named target: the public functions of :mod:`~transformer_theory.infoflow.targets` and the
    held-out suite's trees, by name (sorted)."""
    from transformer_theory.infoflow.heldout import TREES  # heldout imports the predictions, which import us

    found = {name: fn for name, fn in inspect.getmembers(targets, inspect.isfunction)
             if not name.startswith("_") and fn.__module__ == targets.__name__}
    return dict(sorted({**found, **TREES}.items()))


_CALL = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*(?:\((.*)\))?\s*", re.DOTALL)


def parse_target(text: str, d: int = 4, seed: int = 0) -> Tree:
    """The target ``text`` names or writes (see :data:`SYNTAX`); ``d`` is the token dimension of an expression's
    parameters and ``seed`` fixes them (a named target has its own ``d`` and ``seed`` arguments)."""
    if not isinstance(text, str):
        raise ValueError(f"a target text must be a string, got {type(text).__name__}")
    d, seed = positive_int("d", d), seed_value(seed)
    if not text.strip():
        raise ExpressionError(text, 1, "the target is empty: expected a named target or an expression")
    names = named_targets()
    call = _CALL.fullmatch(text)
    if call and call.group(1) in names:
        return _call_target(text, call, names[call.group(1)])
    if call and not re.match(r"(max|min)(_|\[|$)", call.group(1)):
        hint = difflib.get_close_matches(call.group(1), list(names), n=3)
        raise ExpressionError(text, call.start(1) + 1, f"unknown target {call.group(1)!r}"
                              + (f" (did you mean {' or '.join(map(repr, hint))}?)" if hint else "")
                              + f"; named targets: {', '.join(names)}; or write an expression (see --help)")
    try:
        return _Parser(text, _tokens(text), d, seed).tree()
    except ExpressionError as exc:
        first = re.match(r"\s*([A-Za-z_][A-Za-z0-9_]*)", text)
        hint = difflib.get_close_matches(first.group(1), list(names), n=1, cutoff=0.75) if first else []
        if hint:
            raise ExpressionError(text, exc.column, f"{exc.message}; if you meant a named target: "
                                  f"did you mean {hint[0]!r}?") from None
        raise


def _call_target(text: str, call: re.Match, fn: Callable[..., Tree]) -> Tree:
    name = call.group(1)
    args: list[Any] = []
    kwargs: dict[str, Any] = {}
    if call.group(2) is not None:
        p = _Parser(text, _tokens(text, call.start(2), call.end(2)))
        while p.peek().kind != "end":
            if p.peek().kind == "name" and p.peek(1).text == "=":
                key = p.take().text
                p.take()
                if key in kwargs:
                    p.fail(f"argument {key!r} given twice", p.toks[p.pos - 2])
                kwargs[key] = p.literal()
            elif kwargs:
                p.fail("expected a keyword argument NAME=VALUE (positional arguments come first)")
            else:
                args.append(p.literal())
            if p.peek().kind != "end":
                p.expect(",", "between arguments")
    signature = inspect.signature(fn)
    try:
        signature.bind(*args, **kwargs)
    except TypeError as exc:
        shown = ", ".join(p.name + ("" if p.default is p.empty else f"={p.default!r}")
                          for p in signature.parameters.values())
        raise ExpressionError(text, call.start(1) + 1, f"{name}({shown}): {exc}") from None
    return fn(*args, **kwargs)


class _Parser:
    """Recursive descent over the tokens of an expression (the grammar of :data:`SYNTAX`)."""

    def __init__(self, text: str, toks: list[_Token], d: int = 4, seed: int = 0):
        self.text, self.toks, self.d, self.seed = text, toks, d, seed
        self.pos = 0
        self.params: dict[str, tuple[str, np.ndarray]] = {}   # name -> (kind, value)

    # ------------------------------------------------------------------ tokens
    def peek(self, ahead: int = 0) -> _Token:
        return self.toks[min(self.pos + ahead, len(self.toks) - 1)]

    def take(self) -> _Token:
        tok = self.peek()
        self.pos += 1
        return tok

    def fail(self, message: str, tok: _Token | None = None) -> NoReturn:
        """Raise :class:`ExpressionError` at ``tok`` (default: the next token, named as what was found)."""
        if tok is None:
            tok, message = self.peek(), f"{message}, got {self.peek().describe()}"
        raise ExpressionError(self.text, tok.column, message)

    def expect(self, text: str, where: str) -> _Token:
        if self.peek().text != text or self.peek().kind == "end":
            self.fail(f"expected {text!r} {where}")
        return self.take()

    def is_reduction(self, tok: _Token) -> bool:
        return tok.kind == "name" and tok.text in _REDUCE

    # ------------------------------------------------------------------ grammar
    def tree(self) -> Tree:
        terms = [self.reduction(())]
        while self.peek().text == "+":
            self.take()
            if not self.is_reduction(self.peek()):
                self.fail("expected a reduction (max_... or min_...) after '+': the root sums reductions")
            terms.append(self.reduction(()))
        if self.peek().text == "-":
            self.fail("expected '+': the root sums reductions (put a minus inside a score: "
                      "-max_s a^T x(s) is min_s -a^T x(s))")
        if self.peek().kind != "end":
            self.fail("expected '+' and another reduction, or the end of the expression")
        params = {name: value for name, (_, value) in self.params.items()}
        return Tree(terms, input_dim=self.d, name=" ".join(self.text.split()), params={**params, "seed": self.seed})

    def variable(self, bound: tuple[str, ...], binding: bool) -> str:
        tok = self.peek()
        if tok.kind != "name" or tok.text == "x" or tok.text in _REDUCE:
            self.fail("expected a position variable such as t, s or t1")
        self.take()
        if binding and tok.text in bound:
            self.fail(f"variable {tok.text!r} is already bound by an enclosing reduction: use another name",
                      tok)
        if not binding and tok.text not in bound:
            where = f" (bound here: {', '.join(bound)})" if bound else ""
            self.fail(f"variable {tok.text!r} is not bound by an enclosing max_ or min_{where}", tok)
        return tok.text

    def reduction(self, bound: tuple[str, ...]) -> Reduction:
        head = self.peek()
        if not self.is_reduction(head):
            self.fail("expected a reduction: max_VAR or min_VAR")
        self.take()
        rank = 1
        if self.peek().text == "[":
            self.take()
            if self.peek().text != "k":
                self.fail("expected k=INTEGER in max[k=...]")
            self.take()
            self.expect("=", "in max[k=...]")
            tok = self.peek()
            if tok.kind != "number" or not tok.text.isdigit() or int(tok.text) < 1:
                self.fail("expected a positive integer rank k")
            rank = int(self.take().text)
            self.expect("]", "to close max[k=...")
            if self.peek(1).text == "{":
                self.fail("max[k=...] selects over one variable: write max[k=2]_t", self.peek(1))
        self.expect("_", f"after {head.text!r} (write {head.text}_t or {head.text}_{{s,t}})")
        exclude: tuple[str, ...] = ()
        if self.peek().text == "{":
            self.take()
            names = [self.variable(bound, True)]
            while self.peek().text == ",":
                self.take()
                names.append(self.variable(bound + tuple(names), True))
            if self.peek().kind == "ne":
                if len(names) > 1:
                    self.fail("'!=' follows a single variable: write min_s min_{t != s}")
                self.take()
                exclude = (self.variable(bound, False),)
            self.expect("}", "to close the variables")
        else:
            names = [self.variable(bound, True)]
        score = self.factor(bound + tuple(names), f"the score of {head.text}_{names[0]}")
        try:
            node: Expr = score
            for i, var in enumerate(reversed(names)):
                    node = Reduction(head.text, var, node, rank=rank, exclude=exclude if i == 0 else ())
        except ValueError as exc:
            raise ExpressionError(self.text, head.column, str(exc)) from None
        assert isinstance(node, Reduction)
        return node

    def factor(self, bound: tuple[str, ...], what: str, constant_ok: bool = False) -> Expr | float:
        """``[-] [NUMBER [*]] PRIMARY``, or a lone number where a sum allows one."""
        sign = 1.0
        if self.peek().text == "-" and self.peek().kind == "punct":
            self.take()
            sign = -1.0
        coef = 1.0
        if self.peek().kind == "number":
            coef = float(self.take().text)
            if self.peek().text == "*":
                self.take()
            elif not self.starts_primary(self.peek()):
                if constant_ok:
                    return sign * coef
                self.fail(f"expected {what} after the number (a constant alone is no score)")
        expr = self.primary(bound, what)
        return expr if sign * coef == 1.0 else (sign * coef) * expr

    def starts_primary(self, tok: _Token) -> bool:
        return tok.kind in ("name", "norm") or tok.text in ("(", "[")

    def primary(self, bound: tuple[str, ...], what: str) -> Expr:
        tok = self.peek()
        if self.is_reduction(tok):
            return self.reduction(bound)
        if tok.text in ("(", "["):
            self.take()
            closing = ")" if tok.text == "(" else "]"
            total: Expr | float = self.factor(bound, "a score", constant_ok=True)
            while self.peek().text in ("+", "-") and self.peek().kind == "punct":
                minus = self.take().text == "-"
                part = self.factor(bound, "a score", constant_ok=True)
                total = total - part if minus else total + part
            self.expect(closing, f"to close the {tok.text!r} at column {tok.column}")
            if not isinstance(total, Expr):
                self.fail("expected a score that reads a position, not only numbers", tok)
            return total
        if tok.kind == "norm":
            self.take()
            vars_ = [self.token(bound)]
            while self.peek().text == "+":
                self.take()
                vars_.append(self.token(bound))
            self.expect("||", "to close the norm ||x(t1) + x(t2) + ...||")
            squared = False
            if self.peek().text == "^":
                self.take()
                if self.peek().text != "2":
                    self.fail("expected 2 in ||...||^2")
                self.take()
                squared = True
            try:
                return NormOfSum(vars_, squared=squared)
            except ValueError as exc:
                raise ExpressionError(self.text, tok.column, str(exc)) from None
        if tok.kind == "name" and tok.text == "x":
            left = self.token(bound)
            if self.peek().kind != "transpose":
                self.fail("expected '^T' after x(...) in a bilinear score x(s)^T A x(t)")
            self.take()
            name = None
            if self.peek().kind == "name" and self.peek().text != "x":
                name = self.parameter(self.take(), "matrix")
            right = self.token(bound)
            return Bilinear(left, right, None if name is None else self.params[name][1], name=name)
        if tok.kind == "name":
            self.take()
            if self.peek().kind != "transpose":
                hint = difflib.get_close_matches(tok.text, _REDUCE, n=1) if self.peek().text == "_" else []
                self.fail(f"expected '^T' after the vector {tok.text!r} (a linear score a^T x(t))"
                          + (f"; did you mean {hint[0]}_?" if hint else ""))
            name = self.parameter(tok, "vector")
            self.take()
            return Linear(self.token(bound), self.params[name][1], name=name)
        self.fail(f"expected {what}: a^T x(t), x(s)^T A x(t), ||x(t1) + x(t2)||, a reduction or [...]")

    def token(self, bound: tuple[str, ...]) -> str:
        """``x(VAR)`` with a bound variable."""
        if self.peek().text != "x" or self.peek().kind != "name":
            self.fail("expected a token x(t)")
        self.take()
        self.expect("(", "after x (a token is x(t))")
        var = self.variable(bound, False)
        self.expect(")", "after the position variable")
        return var

    def parameter(self, tok: _Token, kind: str) -> str:
        """The parameter called ``tok``: drawn once per name from the seed and the name."""
        name = tok.text
        if name in self.params:
            if self.params[name][0] != kind:
                self.fail(f"{name!r} is a {self.params[name][0]} elsewhere in the expression, here a {kind}: "
                          f"give them different names", tok)
            return name
        rng = np.random.default_rng([self.seed, zlib.crc32(name.encode())])
        shape = (self.d,) if kind == "vector" else (self.d, self.d)
        self.params[name] = (kind, rng.normal(0.0, 1.0 / np.sqrt(self.d), size=shape))
        return name

    def literal(self) -> Any:
        """A named target's argument: a number, True/False, or a tuple/list of them."""
        tok = self.peek()
        if tok.text == "-" and self.peek(1).kind == "number":
            self.take()
            return -self.literal()
        if tok.kind == "number":
            self.take()
            return int(tok.text) if tok.text.isdigit() else float(tok.text)
        if tok.kind == "name" and tok.text in ("True", "False"):
            self.take()
            return tok.text == "True"
        if tok.text in ("(", "["):
            self.take()
            closing = ")" if tok.text == "(" else "]"
            items = []
            while self.peek().text != closing:
                items.append(self.literal())
                if self.peek().text != closing:
                    self.expect(",", "between the items")
            self.take()
            return tuple(items)
        self.fail("expected a value: a number, True, False or a tuple such as (1, 2)")
