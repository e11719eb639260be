"""Scores of a comparison tree (:class:`Expr` and its kinds) and :class:`Node`, the base of its nodes."""

from __future__ import annotations

import itertools
import math
from typing import Any, Callable, Sequence

import numpy as np

from transformer_theory.checks import is_real
from transformer_theory.infoflow.trees.context import EvalContext

#: Random inputs a :class:`Custom` function is checked on when its tree is built.
PROBE_SAMPLES = 16


class Expr:
    """A score (or a readout value) in a comparison tree; evaluated on a layout by :meth:`evaluate`."""

    #: whether the expression is symmetric in all its position variables (enables tuple enumeration)
    symmetric: bool = False

    def variables(self) -> frozenset[str]:
        """Position variables read (directly, or as free variables of nested nodes)."""
        raise NotImplementedError

    def nodes(self) -> tuple["Node", ...]:
        """Nested nodes whose values this expression uses."""
        return ()

    def evaluate(self, ctx: EvalContext) -> np.ndarray:  # pragma: no cover - interface
        raise NotImplementedError

    def check(self, d: int) -> None:
        """Raise ``ValueError`` if the parameters do not fit tokens of dimension ``d`` (called by :class:`Tree`)."""

    def monotone_split(self) -> "tuple[Expr, Callable[[np.ndarray], np.ndarray]] | None":
        """``(inner, f)`` with ``self == f(inner)`` and ``f`` increasing, if cheaper to reduce ``inner``."""
        return None

    # scores combine linearly: ``a + b``, ``a - b``, ``2 * a``, ``a + 1.0``
    def __add__(self, other: "Expr | float") -> "Sum":
        return Sum.of(self, other)

    def __radd__(self, other: "Expr | float") -> "Sum":
        return Sum.of(other, self)

    def __sub__(self, other: "Expr | float") -> "Sum":
        return Sum.of(self, -1.0 * other)

    def __rsub__(self, other: "Expr | float") -> "Sum":
        return Sum.of(other, -1.0 * self)

    def __mul__(self, c: float) -> "Sum":
        if not is_real(c) or not math.isfinite(float(c)):
            raise ValueError(f"a score can only be multiplied by a finite number, got {c!r} (use Custom for products)")
        return Sum([self], [float(c)])

    __rmul__ = __mul__

    def __neg__(self) -> "Sum":
        return -1.0 * self


def check_variable(name: str, what: str) -> str:
    """``name`` if it is a position variable (an identifier such as ``'s'``), else ``ValueError`` naming ``what``."""
    if not isinstance(name, str) or not name.isidentifier():
        raise ValueError(f"{what}: position variables are identifiers such as 's' or 't1', got {name!r}")
    return name


def _parameter_name(name: str | None, what: str) -> str | None:
    if name is not None and not (isinstance(name, str) and name.isidentifier()):
        raise ValueError(f"{what}: a parameter's name is an identifier such as 'a' or 'A1', got {name!r}")
    return name


def _finite_array(value: Any, what: str) -> np.ndarray:
    try:
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{what} must be an array of real numbers, got {value!r}") from None
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{what} contains NaN or infinite entries")
    return arr


class Linear(Expr):
    """``a^T x(var)`` (order 1): the score of max-position retrieval in P1's D-retrieval target.

    ``name`` is how the vector prints (``b^T x(t)``); left ``None``, the :class:`Tree` names its distinct
    vectors ``a``, ``b``, ... (equal vectors share a name).
    """

    def __init__(self, var: str, a: Sequence[float] | np.ndarray, *, name: str | None = None):
        self.var = check_variable(var, "Linear")
        self.name = _parameter_name(name, "Linear")
        self.a = _finite_array(a, f"Linear a^T x({var}): a")
        if self.a.ndim != 1:
            raise ValueError(f"Linear a^T x({var}): a must be a vector, got shape {self.a.shape}")

    def variables(self) -> frozenset[str]:
        return frozenset({self.var})

    def check(self, d: int) -> None:
        if self.a.shape != (d,):
            raise ValueError(f"Linear a^T x({self.var}): a has {self.a.size} entries, but the tokens have d = {d}")

    def evaluate(self, ctx: EvalContext) -> np.ndarray:
        feat = ctx.cached(("linear", id(self)), lambda X: X @ self.a)
        return ctx.gather1(feat, self.var)

    def __repr__(self) -> str:
        return f"{self.name or 'a'}^T x({self.var})"


class Bilinear(Expr):
    """``x(left)^T A x(right)`` (order 2 when ``left != right``); ``A=None`` means the dot product.

    ``name`` is how the matrix prints; left ``None``, the :class:`Tree` names its distinct matrices
    ``A``, ``B``, ... (equal matrices share a name).
    """

    def __init__(self, left: str, right: str, A: np.ndarray | None = None, *, name: str | None = None):
        self.left = check_variable(left, "Bilinear")
        self.name = _parameter_name(name, "Bilinear")
        self.right = check_variable(right, "Bilinear")
        self.A = None if A is None else _finite_array(A, f"Bilinear x({left})^T A x({right}): A")
        if self.A is not None and (self.A.ndim != 2 or self.A.shape[0] != self.A.shape[1]):
            raise ValueError(f"Bilinear: A must be a square d x d matrix, got shape {self.A.shape}")

    def variables(self) -> frozenset[str]:
        return frozenset({self.left, self.right})

    def check(self, d: int) -> None:
        if self.A is not None and self.A.shape != (d, d):
            raise ValueError(f"Bilinear x({self.left})^T A x({self.right}): A has shape {self.A.shape}, "
                             f"but the tokens have d = {d} (A must be {d} x {d})")

    def evaluate(self, ctx: EvalContext) -> np.ndarray:
        if self.A is None:
            M = ctx.gram()
        else:
            M = ctx.cached(("bilinear", id(self)), lambda X: np.matmul(X @ self.A, X.transpose(0, 2, 1)))
        return ctx.gather2(M, self.left, self.right)

    def __repr__(self) -> str:
        mid = "" if self.A is None else f" {self.name or 'A'}"
        return f"x({self.left})^T{mid} x({self.right})"


class NormOfSum(Expr):
    """``||x(v_1) + ... + x(v_k)||`` (squared with ``squared=True``); order k, symmetric.

    Evaluated through the Gram matrix, ``||sum x||^2 = sum_i ||x_i||^2 + 2 sum_{i<j} x_i . x_j``, in
    float64 (clipped at 0 before the square root).
    """

    symmetric = True

    def __init__(self, vars_: Sequence[str], squared: bool = False):
        vs = tuple(check_variable(v, "NormOfSum") for v in vars_)
        if len(vs) == 0 or len(set(vs)) != len(vs):
            raise ValueError(f"NormOfSum: needs distinct position variables, got {vs!r}")
        self.vars = vs
        self.squared = bool(squared)

    def variables(self) -> frozenset[str]:
        return frozenset(self.vars)

    def evaluate(self, ctx: EvalContext) -> np.ndarray:
        nrm = ctx.cached("sqnorm", lambda X: np.einsum("btd,btd->bt", X, X))
        last = [v for v in self.vars if ctx.idx[v].shape[-1:] == (ctx.T,) and ctx.idx[v].size == ctx.T] if ctx.ndim else []
        others = [v for v in self.vars if v not in last[:1]]
        if len(self.vars) >= 2 and last and all(ctx.idx[v].shape[-1] == 1 for v in others):
            # fast path: ||S + x(w)||^2 = ||S||^2 + ||x(w)||^2 + 2 S.x(w), S = sum of the other tokens,
            # with the cross term as one batched matmul over the last axis (w runs over all positions)
            S = _accumulate([ctx.tokens(v)[..., 0, :] for v in others])  # (B, *prefix, d)
            B, d = S.shape[0], S.shape[-1]
            prefix = S.shape[1:-1]
            out = np.matmul(S.reshape(B, -1, d), ctx.X.transpose(0, 2, 1)).reshape((B,) + prefix + (ctx.T,))
            out *= 2.0
            out += np.einsum("...d,...d->...", S, S)[..., None]
            out += nrm.reshape((B,) + (1,) * len(prefix) + (ctx.T,))
            np.maximum(out, 0.0, out=out)
            return out if self.squared else np.sqrt(out, out=out)
        G = ctx.gram()
        out = _accumulate([ctx.gather2(G, v, w) for v, w in itertools.combinations(self.vars, 2)])
        if out is not None:
            out *= 2.0
        out = _accumulate(([out] if out is not None else []) + [ctx.gather1(nrm, v) for v in self.vars])
        np.maximum(out, 0.0, out=out)
        return out if self.squared else np.sqrt(out, out=out)

    def monotone_split(self) -> tuple[Expr, Callable[[np.ndarray], np.ndarray]] | None:
        return None if self.squared else (NormOfSum(self.vars, squared=True), np.sqrt)

    def __repr__(self) -> str:
        s = "||" + " + ".join(f"x({v})" for v in self.vars) + "||"
        return s + "^2" if self.squared else s


def _accumulate(arrays: list[np.ndarray]) -> np.ndarray | None:
    """Sum of broadcastable fresh arrays, in place into the first one of the full shape."""
    if not arrays:
        return None
    arrays = sorted(arrays, key=lambda a: a.size)
    full = np.broadcast_shapes(*(a.shape for a in arrays))
    big = [a for a in arrays if a.shape == full]
    if not big:
        out = arrays[0] + arrays[1]  # small pieces first, then grow
        rest = arrays[2:]
    else:
        out = big[-1]
        rest = [a for a in arrays if a is not out]
    for a in rest:
        if out.shape == full:
            out += a
        else:
            out = out + a
    return out


class Sum(Expr):
    """``constant + sum_i w_i e_i``: a score written with ``+``, ``-`` and scalar ``*``.

    A nested node that enters a score only as a term of a :class:`Sum` is read *additively*; when it
    does not depend on the bound variable it shifts every score by the same amount, so it does not
    change which position is selected (the scheduler computes it as a separate term).
    """

    def __init__(self, terms: Sequence[Expr], weights: Sequence[float] | None = None, constant: float = 0.0):
        terms = tuple(terms)
        if not terms:
            raise ValueError("Sum: needs at least one term")
        weights = (1.0,) * len(terms) if weights is None else tuple(weights)
        if len(weights) != len(terms):
            raise ValueError(f"Sum: {len(terms)} terms but {len(weights)} weights")
        if not is_real(constant) or not math.isfinite(float(constant)):
            raise ValueError(f"Sum: constant must be a finite number, got {constant!r}")
        flat: list[tuple[float, Expr]] = []
        const = float(constant)
        for w, t in zip(weights, terms):
            if not is_real(w) or not math.isfinite(float(w)):
                raise ValueError(f"Sum: weights must be finite numbers, got {w!r}")
            if not isinstance(t, Expr):
                raise ValueError(f"Sum: terms must be scores (Expr), got {t!r}")
            if isinstance(t, Sum):  # flatten nested sums
                flat += [(float(w) * w2, t2) for w2, t2 in t.items]
                const += float(w) * t.constant
            else:
                flat.append((float(w), t))
        self.items: tuple[tuple[float, Expr], ...] = tuple(flat)
        self.constant = const

    @staticmethod
    def of(a: "Expr | float", b: "Expr | float") -> "Sum":
        """``a + b`` for scores and numbers."""
        terms, weights, const = [], [], 0.0
        for x in (a, b):
            if isinstance(x, Expr):
                terms.append(x)
                weights.append(1.0)
            elif is_real(x) and math.isfinite(float(x)):
                const += float(x)
            else:
                raise ValueError(f"a score can only be added to a score or a finite number, got {x!r}")
        return Sum(terms, weights, const)

    def variables(self) -> frozenset[str]:
        return frozenset().union(*(t.variables() for _, t in self.items))

    def nodes(self) -> tuple["Node", ...]:
        out: tuple[Node, ...] = ()
        for _, t in self.items:
            out += (t,) if isinstance(t, Node) else t.nodes()
        return out

    def evaluate(self, ctx: EvalContext) -> np.ndarray:
        out: Any = self.constant
        for w, t in self.items:
            out = out + w * np.asarray(t.evaluate(ctx), dtype=np.float64)
        return np.asarray(out, dtype=np.float64)

    def __repr__(self) -> str:
        parts = [repr(t) if w == 1 else f"{w:g} {t!r}" for w, t in self.items]
        if self.constant:
            parts.append(f"{self.constant:g}")
        return "(" + " + ".join(parts) + ")"


class Custom(Expr):
    """Any vectorised function of tokens and nested values.

    ``args`` lists position variables (the function receives the tokens ``x(var)``, shape
    ``(..., d)``) and nodes (it receives their values, shape ``(...)``), all mutually broadcastable;
    it must return an array of the broadcast shape (without the trailing ``d``). When the tree is
    built the function is called on random inputs: a result that keeps the feature axis, or is NaN,
    is refused, and ``symmetric=True`` (the value does not change when two position variables swap
    their tokens) is verified.
    """

    def __init__(self, fn: Callable[..., np.ndarray], args: Sequence["str | Node"], *,
                 symmetric: bool = False, name: str | None = None):
        if not callable(fn):
            raise ValueError(f"Custom: fn must be callable, got {fn!r}")
        self.fn = fn
        self.args = tuple(check_variable(a, "Custom") if isinstance(a, str) else a for a in args)
        for a in self.args:
            if not isinstance(a, (str, Node)):
                raise ValueError(f"Custom: args are position variables or nodes, got {a!r}")
        self.name = name or getattr(fn, "__name__", "f")
        self.symmetric = bool(symmetric)
        if self.symmetric and any(isinstance(a, Node) for a in self.args):
            raise ValueError(f"Custom '{self.name}': symmetric=True is declared for functions of position "
                             f"variables only, but its arguments include nodes")
        self._probes: dict[tuple, np.ndarray] = {}

    def variables(self) -> frozenset[str]:
        out: set[str] = set()
        for a in self.args:
            out |= {a} if isinstance(a, str) else set(a.variables())
        return frozenset(out)

    def nodes(self) -> tuple["Node", ...]:
        return tuple(a for a in self.args if isinstance(a, Node))

    def evaluate(self, ctx: EvalContext) -> np.ndarray:
        vals = [ctx.tokens(a) if isinstance(a, str) else a.evaluate(ctx) for a in self.args]
        out = np.asarray(self.fn(*vals), dtype=np.float64)
        expected = np.broadcast_shapes(*(v.shape[:-1] if isinstance(a, str) else v.shape
                                         for a, v in zip(self.args, vals))) if vals else ()
        if out.ndim > len(expected):
            raise ValueError(f"Custom '{self.name}' returned shape {out.shape} for inputs of shape {expected}: "
                             f"a score gives one value per position (did it keep the token-feature axis?)")
        return out

    # -------------------------------------------------------------- checks on random inputs
    def _probe(self, d: int, seed: int, swap: tuple[str, str] | None = None,
               shift: tuple[int, np.ndarray] | None = None) -> np.ndarray:
        key = (d, seed, swap, None if shift is None else (shift[0], shift[1].tobytes()))
        if key in self._probes:
            return self._probes[key]
        rng = np.random.default_rng(seed)
        names = sorted({a for a in self.args if isinstance(a, str)})
        toks = {v: rng.normal(size=(PROBE_SAMPLES, d)) for v in names}
        if swap is not None:
            toks[swap[0]], toks[swap[1]] = toks[swap[1]], toks[swap[0]]
        vals = []
        for j, a in enumerate(self.args):
            if isinstance(a, str):
                vals.append(toks[a])
            else:
                v = rng.normal(size=PROBE_SAMPLES)
                vals.append(v + shift[1] if shift is not None and shift[0] == j else v)
        try:
            with np.errstate(all="ignore"):
                out = np.asarray(self.fn(*vals), dtype=np.float64)
        except Exception as exc:  # a user function: report any failure as bad input
            raise ValueError(f"Custom '{self.name}' failed on {PROBE_SAMPLES} random inputs (tokens of shape "
                             f"({PROBE_SAMPLES}, {d}), values of shape ({PROBE_SAMPLES},)): {exc}") from exc
        self._probes[key] = out
        return out

    def check(self, d: int) -> None:
        out = self._probe(d, 0)
        if out.ndim > 1 or (out.ndim == 1 and out.shape[0] not in (1, PROBE_SAMPLES)):
            raise ValueError(f"Custom '{self.name}' returned shape {out.shape} for {PROBE_SAMPLES} positions with "
                             f"tokens of dimension d = {d}: a score gives one value per position "
                             f"(did it keep the token-feature axis?)")
        if np.isnan(out).any():
            raise ValueError(f"Custom '{self.name}' returned NaN on random inputs")
        if self.symmetric:
            names = sorted({a for a in self.args if isinstance(a, str)})
            for u, w in itertools.combinations(names, 2):
                if not np.allclose(self._probe(d, 0, swap=(u, w)), out, rtol=1e-9, atol=1e-12, equal_nan=True):
                    raise ValueError(f"Custom '{self.name}' is declared symmetric=True, but swapping the tokens of "
                                     f"'{u}' and '{w}' changes its value on random inputs")

    def additive_weight(self, j: int, d: int) -> float | None:
        """``w`` if the function is ``g(other args) + w * m`` in its ``j``-th argument ``m`` (a node value),
        checked on random inputs; ``None`` otherwise."""
        weights = []
        for seed in (1, 2):
            delta = np.random.default_rng(100 + seed).normal(size=PROBE_SAMPLES)
            with np.errstate(all="ignore"):
                diff = self._probe(d, seed, shift=(j, delta)) - self._probe(d, seed)
                w = diff / delta
            if diff.shape != (PROBE_SAMPLES,) or not np.all(np.isfinite(w)):
                return None
            weights.append(w)
        w = np.concatenate(weights)
        return float(w[0]) if np.allclose(w, w[0], rtol=1e-8, atol=1e-10) else None

    def __repr__(self) -> str:
        names = [a if isinstance(a, str) else (a.label or "m") for a in self.args]
        return f"{self.name}({', '.join(names)})"


class Node(Expr):
    """A node of a comparison tree (a reduction or a fixed-position read); its value is an Expr.

    :meth:`evaluate` computes the node once per value of its own free variables and gathers that
    table into the caller's layout (a nested node does not multiply the work of its enclosing ones).
    """

    label: str | None = None

    def describe(self) -> str:  # pragma: no cover - interface
        raise NotImplementedError

    def _compute(self, ctx: EvalContext) -> np.ndarray:  # pragma: no cover - interface
        raise NotImplementedError

    def _table(self, ctx: EvalContext, what: str, fn: Callable[["EvalContext"], np.ndarray]) -> np.ndarray:
        free = sorted(self.variables())
        key = (what, id(self))
        if key not in ctx.cache:
            compact = EvalContext(ctx.X, ctx.cache, {}, 0)
            for v in free:
                compact = compact.bind(v)
            val = np.asarray(fn(compact))
            lead = (ctx.X.shape[0],) + (ctx.T,) * len(free)
            ctx.cache[key] = np.broadcast_to(val, lead + val.shape[1 + len(free):]) if free else val
        val = ctx.cache[key]
        if ctx.ndim and val.ndim > 1 + len(free):
            raise ValueError(f"{self.describe()}: a vector-valued node can only be a term of the root")
        if not free:
            return val.reshape(val.shape[:1] + (1,) * ctx.ndim) if ctx.ndim else val
        return val[(slice(None),) + tuple(ctx.idx[v] for v in free)]

    def evaluate(self, ctx: EvalContext) -> np.ndarray:
        return self._table(ctx, "node", lambda c: np.asarray(self._compute(c), dtype=np.float64))
