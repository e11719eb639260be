"""Comparison trees: a target written as nested max/min reductions over token positions.

InfoFlow (Yu, Jiang, Bao, Li 2026, arXiv 2605.17930) measures a target by its *comparison tree*; the
names (comparison tree, order beta', dimension beta_1, comparison number) are the paper's as
summarised, **the definitions used here are a reconstruction** (see the book's page on how it
reconstructs the papers):

* the root combines its *terms* (a sum by default, or any smooth ``F0``);
* a :class:`Reduction` is ``max``/``min`` (or the k-th largest / smallest) over one bound position
  variable of a *score*; the score may read the bound variable, variables bound by enclosing
  reductions (its *free* variables) and the values of nested reductions;
* a :class:`Positions` node reads a fixed, content-independent set of positions (needs positional
  encoding in the model).

The same object is **evaluable on data**: :meth:`Tree.__call__` evaluates every reduction generically
(one vectorised evaluator for every tree, hand-written or library-made), so the targets of
:mod:`transformer_theory.infoflow.targets` also generate the training data of the experiment chapters.
A nested node is evaluated once per value of its own free variables (so a chain of ``k`` nested
pointer look-ups costs ``k T^2`` per sample, not ``T^(k+1)``).

Writing a new tree::

    from transformer_theory.infoflow.trees import Tree, Reduction, Linear, Bilinear, Custom
    inner = Reduction("max", "s", Bilinear("s", "t", A), label="s")     # m(t) = max_s x(s)^T A x(t)
    outer = Reduction("min", "t", Custom(lambda xt, m: m - xt[..., 0], ("t", inner)), label="t")
    tree = Tree([outer], input_dim=4, name="my target")                  # min_t [m(t) - x(t)_1]
    y = tree(X)                                                          # X: (batch, T, 4)

Scores combine with ``+``, ``-`` and scalar ``*`` (:class:`Sum`), e.g. ``Linear("t", a) + inner``.
Parameters are checked against the token dimension when the :class:`Tree` is built, and every
:class:`Custom` function is run once on random inputs then (it must return one value per position;
a declared ``symmetric=True`` is verified).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol, Sequence

import numpy as np

from transformer_theory.checks import is_integer, is_real, positive_int, positive_real

#: Elements of the evaluation layout (batch x position axes) allowed per chunk of the batch.
EVAL_BUDGET = 2**21

#: Random inputs a :class:`Custom` function is checked on when its tree is built.
PROBE_SAMPLES = 16


# ----------------------------------------------------------------------------------------------
# evaluation context: every position variable is an integer index array broadcastable to a layout
# ----------------------------------------------------------------------------------------------
class _Ctx:
    """Layout of one evaluation: batch axis + one axis per bound variable (or a tuple axis)."""

    def __init__(self, X: np.ndarray, cache: dict, idx: dict[str, np.ndarray], ndim: int):
        self.X = X
        self.cache = cache
        self.idx = idx
        self.ndim = ndim

    @property
    def T(self) -> int:
        return self.X.shape[1]

    def cached(self, key: Any, fn: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
        if key not in self.cache:
            self.cache[key] = fn(self.X)
        return self.cache[key]

    def gram(self) -> np.ndarray:
        """``G[b, s, t] = x(s) . x(t)``."""
        return self.cached("gram", lambda X: np.matmul(X, X.transpose(0, 2, 1)))

    def index(self, var: str) -> np.ndarray:
        return self.idx[var]

    def gather1(self, feat: np.ndarray, var: str) -> np.ndarray:
        """``feat[:, idx[var]]`` for a per-token feature ``feat`` of shape (B, T)."""
        return feat[:, self.idx[var]]

    def gather2(self, M: np.ndarray, v: str, w: str) -> np.ndarray:
        """``M[:, idx[v], idx[w]]`` for a pair feature ``M`` of shape (B, T, T)."""
        iv, iw = self.idx[v], self.idx[w]
        if self.ndim and iw.shape[-1] == self.T and iv.shape[-1] == 1 and iw.size == self.T:
            # w runs over the last axis: gather whole rows (contiguous copies, much faster)
            return np.take(M, iv[..., 0], axis=1)
        if self.ndim and iv.shape[-1] == self.T and iw.shape[-1] == 1 and iv.size == self.T:
            return np.take(M.transpose(0, 2, 1), iw[..., 0], axis=1)
        return M[:, iv, iw]

    def tokens(self, var: str) -> np.ndarray:
        """The tokens ``x(var)``, shape (B, *layout, d)."""
        return self.X[:, self.idx[var]]

    def bind(self, var: str) -> "_Ctx":
        """A new trailing axis of length T for ``var``."""
        idx = {k: v[..., None] for k, v in self.idx.items()}
        idx[var] = np.arange(self.T).reshape((1,) * self.ndim + (self.T,))
        return _Ctx(self.X, self.cache, idx, self.ndim + 1)

    def bind_tuple(self, vars_: Sequence[str], symmetric: bool) -> "_Ctx":
        """Two trailing axes (C, T) enumerating tuples of ``vars_`` jointly.

        With ``symmetric`` the first ``k-1`` variables run over sorted tuples (combinations with
        repetition) and the last over all positions: a symmetric score takes every value it takes
        on ``[T]^k`` (pairs t1 <= t2 + batched third index for the triangle center).
        """
        T, k = self.T, len(vars_)
        if symmetric:
            comb = np.array(list(itertools.combinations_with_replacement(range(T), k - 1)), dtype=np.intp)
        else:
            comb = np.array(list(itertools.product(range(T), repeat=k - 1)), dtype=np.intp)
        comb = comb.reshape(len(comb), k - 1)
        lead = (1,) * self.ndim
        idx = {key: v[..., None, None] for key, v in self.idx.items()}
        for j, var in enumerate(vars_[:-1]):
            idx[var] = comb[:, j].reshape(lead + (len(comb), 1))
        idx[vars_[-1]] = np.arange(T).reshape(lead + (1, T))
        return _Ctx(self.X, self.cache, idx, self.ndim + 2)


# ----------------------------------------------------------------------------------------------
# scores
# ----------------------------------------------------------------------------------------------
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

    def evaluate(self, ctx: _Ctx) -> np.ndarray:  # pragma: no cover - interface
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


def _check_var(name: str, what: str) -> str:
    if not isinstance(name, str) or not name.isidentifier():
        raise ValueError(f"{what}: position variables are identifiers such as 's' or 't1', got {name!r}")
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
    """``a^T x(var)`` (order 1): the score of max-position retrieval in P1's D-retrieval target."""

    def __init__(self, var: str, a: Sequence[float] | np.ndarray):
        self.var = _check_var(var, "Linear")
        self.a = _finite_array(a, f"Linear a^T x({var}): a")
        if self.a.ndim != 1:
            raise ValueError(f"Linear a^T x({var}): a must be a vector, got shape {self.a.shape}")

    def variables(self) -> frozenset[str]:
        return frozenset({self.var})

    def check(self, d: int) -> None:
        if self.a.shape != (d,):
            raise ValueError(f"Linear a^T x({self.var}): a has {self.a.size} entries, but the tokens have d = {d}")

    def evaluate(self, ctx: _Ctx) -> np.ndarray:
        feat = ctx.cached(("linear", id(self)), lambda X: X @ self.a)
        return ctx.gather1(feat, self.var)

    def __repr__(self) -> str:
        return f"a^T x({self.var})"


class Bilinear(Expr):
    """``x(left)^T A x(right)`` (order 2 when ``left != right``); ``A=None`` means the dot product."""

    def __init__(self, left: str, right: str, A: np.ndarray | None = None):
        self.left = _check_var(left, "Bilinear")
        self.right = _check_var(right, "Bilinear")
        self.A = None if A is None else _finite_array(A, f"Bilinear x({left})^T A x({right}): A")
        if self.A is not None and (self.A.ndim != 2 or self.A.shape[0] != self.A.shape[1]):
            raise ValueError(f"Bilinear: A must be a square d x d matrix, got shape {self.A.shape}")

    def variables(self) -> frozenset[str]:
        return frozenset({self.left, self.right})

    def check(self, d: int) -> None:
        if self.A is not None and self.A.shape != (d, d):
            raise ValueError(f"Bilinear x({self.left})^T A x({self.right}): A has shape {self.A.shape}, "
                             f"but the tokens have d = {d} (A must be {d} x {d})")

    def evaluate(self, ctx: _Ctx) -> np.ndarray:
        if self.A is None:
            M = ctx.gram()
        else:
            M = ctx.cached(("bilinear", id(self)), lambda X: np.matmul(X @ self.A, X.transpose(0, 2, 1)))
        return ctx.gather2(M, self.left, self.right)

    def __repr__(self) -> str:
        mid = "" if self.A is None else " A"
        return f"x({self.left})^T{mid} x({self.right})"


class NormOfSum(Expr):
    """``||x(v_1) + ... + x(v_k)||`` (squared with ``squared=True``); order k, symmetric.

    Evaluated through the Gram matrix, ``||sum x||^2 = sum_i ||x_i||^2 + 2 sum_{i<j} x_i . x_j``, in
    float64 (clipped at 0 before the square root).
    """

    symmetric = True

    def __init__(self, vars_: Sequence[str], squared: bool = False):
        vs = tuple(_check_var(v, "NormOfSum") for v in vars_)
        if len(vs) == 0 or len(set(vs)) != len(vs):
            raise ValueError(f"NormOfSum: needs distinct position variables, got {vs!r}")
        self.vars = vs
        self.squared = bool(squared)

    def variables(self) -> frozenset[str]:
        return frozenset(self.vars)

    def evaluate(self, ctx: _Ctx) -> np.ndarray:
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

    def evaluate(self, ctx: _Ctx) -> np.ndarray:
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
        self.args = tuple(_check_var(a, "Custom") if isinstance(a, str) else a for a in args)
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

    def evaluate(self, ctx: _Ctx) -> np.ndarray:
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


# ----------------------------------------------------------------------------------------------
# nodes
# ----------------------------------------------------------------------------------------------
class Node(Expr):
    """A node of a comparison tree (a reduction or a fixed-position read); its value is an Expr.

    :meth:`evaluate` computes the node once per value of its own free variables and gathers that
    table into the caller's layout (a nested node does not multiply the work of its enclosing ones).
    """

    label: str | None = None

    def describe(self) -> str:  # pragma: no cover - interface
        raise NotImplementedError

    def _compute(self, ctx: _Ctx) -> np.ndarray:  # pragma: no cover - interface
        raise NotImplementedError

    def _table(self, ctx: _Ctx, what: str, fn: Callable[["_Ctx"], np.ndarray]) -> np.ndarray:
        free = sorted(self.variables())
        key = (what, id(self))
        if key not in ctx.cache:
            compact = _Ctx(ctx.X, ctx.cache, {}, 0)
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

    def evaluate(self, ctx: _Ctx) -> np.ndarray:
        return self._table(ctx, "node", lambda c: np.asarray(self._compute(c), dtype=np.float64))


def _ordinal(k: int) -> str:
    return f"{k}{'tsnrhtdd'[(k // 10 % 10 != 1) * (k % 10 < 4) * k % 10::4]}"


class Reduction(Node):
    """``op_{var in [T]} score`` -- one comparison of the tree.

    Parameters
    ----------
    op
        ``"max"`` or ``"min"``.
    var
        the bound position variable.
    score
        an :class:`Expr` reading ``var`` (and possibly variables of enclosing reductions and nested
        reductions' values).
    rank
        ``k``: select the k-th largest (``max``) / smallest (``min``) score; ``k = 1`` is the usual
        max/min. Only ``k = 1`` is a cheap max-position retrieval in one layer (InfoFlow Theorem 2,
        as summarised).
    value
        what the reduction returns, evaluated at the selected position (default: the score itself);
        e.g. ``Linear(var, b)`` returns ``b^T x(t_k)``; a nested reduction whose free variable is
        ``var`` reads the selected position's own look-up (a pointer chase).
    exclude
        positions ``var`` must avoid: enclosing variables (``"t"`` for ``s != t``) or reductions whose
        selected positions are masked (the maxima found by earlier reductions: the k-th largest
        written as a max that masks the first k - 1).
    label
        name of the selected position in information sets (``"s1"`` gives ``s1*(t)``); default ``var``.
    """

    def __init__(self, op: str, var: str, score: Expr, *, rank: int = 1, value: Expr | None = None,
                 exclude: Sequence["str | Reduction"] = (), label: str | None = None):
        if op not in ("max", "min"):
            raise ValueError(f"Reduction: op must be 'max' or 'min', got {op!r}")
        self.op = op
        self.var = _check_var(var, "Reduction")
        if not isinstance(score, Expr):
            raise ValueError(f"reduction '{op} over {var}': score must be an Expr, got {score!r}")
        if value is not None and not isinstance(value, Expr):
            raise ValueError(f"reduction '{op} over {var}': value must be an Expr, got {value!r}")
        self.rank = positive_int(f"reduction '{op} over {var}': rank", rank)
        self.score = score
        self.value = value
        if isinstance(exclude, (str, Node)):
            exclude = (exclude,)
        excl = []
        for e in exclude:
            if isinstance(e, str):
                excl.append(_check_var(e, "Reduction.exclude"))
            elif isinstance(e, Reduction):
                excl.append(e)
            else:
                raise ValueError(f"reduction '{op} over {var}': exclude lists enclosing variables or reductions "
                                 f"(whose selected positions are masked), got {e!r}")
        self.exclude: tuple[str | Reduction, ...] = tuple(excl)
        self.label = label if label is not None else var
        if var not in score.variables():
            raise ValueError(f"reduction '{self.describe()}': its score does not read '{var}'")
        if value is not None and not value.variables() <= score.variables() | {var}:
            extra = sorted(value.variables() - score.variables() - {var})
            raise ValueError(f"reduction '{self.describe()}': value reads {extra} that the score does not")

    def describe(self) -> str:
        return f"{self.op} over {self.var}"

    @property
    def order(self) -> int:
        """Comparison order beta': distinct positions entering one comparison (incl. ``var``)."""
        return len(self.score.variables())

    @property
    def exclude_vars(self) -> tuple[str, ...]:
        return tuple(e for e in self.exclude if isinstance(e, str))

    @property
    def exclude_nodes(self) -> tuple["Reduction", ...]:
        return tuple(e for e in self.exclude if isinstance(e, Reduction))

    def free_variables(self) -> frozenset[str]:
        out = self.score.variables() | (self.value.variables() if self.value else frozenset())
        out |= frozenset(self.exclude_vars).union(*(e.variables() for e in self.exclude_nodes))
        return out - {self.var}

    def variables(self) -> frozenset[str]:
        return self.free_variables()

    def nodes(self) -> tuple[Node, ...]:
        out: tuple[Node, ...] = ()
        for e in (self.score, self.value):
            if e is not None:
                out += (e,) if isinstance(e, Node) else e.nodes()
        return out + self.exclude_nodes

    # ------------------------------------------------------------------ evaluation
    def _fused_chain(self) -> tuple[list[str], Expr] | None:
        """Nested same-op rank-1 reductions ``op_{v1} op_{v2} ... phi(v1, v2, ...)`` with a symmetric
        phi reading exactly the chain's variables: evaluated as one joint reduction over tuples."""
        chain: list[str] = []
        node: Expr = self
        while (isinstance(node, Reduction) and node.op == self.op and node.rank == 1
               and node.value is None and not node.exclude):
            chain.append(node.var)
            if isinstance(node.score, Reduction):
                node = node.score
                continue
            phi = node.score
            break
        else:
            return None
        if len(chain) >= 2 and phi.symmetric and not phi.nodes() and phi.variables() == set(chain):
            return chain, phi
        return None

    def _scores(self, ctx: _Ctx) -> tuple[_Ctx, np.ndarray]:
        T = ctx.T
        if self.rank + len(self.exclude) > T:
            which = "largest" if self.op == "max" else "smallest"
            excl = f" after excluding {len(self.exclude)} position(s)" if self.exclude else ""
            raise ValueError(f"reduction '{self.describe()}': selecting the {_ordinal(self.rank)} {which} score"
                             f"{excl} needs seq_len >= {self.rank + len(self.exclude)}, got seq_len = {T}")
        sub = ctx.bind(self.var)
        s = np.asarray(self.score.evaluate(sub), dtype=np.float64)
        if s.ndim != sub.ndim + 1:
            raise ValueError(f"reduction '{self.describe()}': its score has shape {s.shape}, expected one value per "
                             f"position (a score that keeps the token-feature axis is not a score)")
        s = np.broadcast_to(s, s.shape[:-1] + (T,)) if s.shape[-1] == 1 else s
        if self.exclude:
            mask = np.zeros((1,) * (sub.ndim + 1), dtype=bool)
            for e in self.exclude:
                if isinstance(e, str):
                    mask = mask | (sub.idx[e] == sub.idx[self.var])[None]
                else:
                    mask = mask | (e.selected_in(ctx)[..., None] == sub.idx[self.var][None])
            s = np.where(mask, -np.inf if self.op == "max" else np.inf, s)
        return sub, s

    def evaluate_with_index(self, ctx: _Ctx) -> tuple[np.ndarray, np.ndarray]:
        """Value and selected position (0-based) over the layout of the free variables."""
        sub, s = self._scores(ctx)
        if self.rank == 1:
            arg = np.argmax(s, axis=-1) if self.op == "max" else np.argmin(s, axis=-1)
        else:
            order = np.argsort(-s if self.op == "max" else s, axis=-1, kind="stable")
            arg = order[..., self.rank - 1]
        if self.value is None:
            val = np.take_along_axis(s, arg[..., None], axis=-1)[..., 0]
        else:
            v = np.broadcast_to(np.asarray(self.value.evaluate(sub), dtype=np.float64), s.shape)
            val = np.take_along_axis(v, arg[..., None], axis=-1)[..., 0]
        return val, arg

    def selected_in(self, ctx: _Ctx) -> np.ndarray:
        """The selected position (0-based) over ``ctx``'s layout (computed once per free-variable value)."""
        return self._table(ctx, "arg", lambda c: self.evaluate_with_index(c)[1])

    def _compute(self, ctx: _Ctx) -> np.ndarray:
        fused = self._fused_chain()
        if fused is not None:
            chain, phi = fused
            split = phi.monotone_split()
            inner, post = split if split is not None else (phi, None)
            sub = ctx.bind_tuple(chain, symmetric=True)
            s = np.asarray(inner.evaluate(sub), dtype=np.float64)
            s = s.reshape(s.shape[:-2] + (-1,))
            red = s.max(axis=-1) if self.op == "max" else s.min(axis=-1)
            return red if post is None else post(red)
        if self.rank == 1 and self.value is None:  # value only: no argmax needed
            _, s = self._scores(ctx)
            return s.max(axis=-1) if self.op == "max" else s.min(axis=-1)
        return self.evaluate_with_index(ctx)[0]

    def __repr__(self) -> str:
        k = "" if self.rank == 1 else f"[k={self.rank}]"
        return f"{self.op}{k}_{self.var} {self.score!r}"


class Positions(Node):
    """A fixed, content-independent set of positions ``P`` (1-based): ``fn(x(p_1), ..., x(p_m))``.

    The default ``fn`` is the sum ``sum_{p in P} x(p)`` (a vector in ``R^d``: the target of the
    paper's §4.4); ``fn`` receives the tokens at ``P``, shape ``(batch, m, d)``, and returns one value
    (or vector, for a term of the root) per sample. Read by specific-position aggregation, which
    needs positional encoding.
    """

    def __init__(self, positions: Sequence[int], fn: Callable[[np.ndarray], np.ndarray] | None = None,
                 *, label: str | None = None):
        P = tuple(positions)
        if not P:
            raise ValueError("Positions: the position set P is empty")
        for p in P:
            if not is_integer(p) or p < 1:
                raise ValueError(f"Positions: positions are 1-based integers, got {p!r}")
        if len(set(P)) != len(P):
            raise ValueError(f"Positions: repeated positions in {P}")
        if fn is not None and not callable(fn):
            raise ValueError(f"Positions: fn must be callable, got {fn!r}")
        self.positions = tuple(int(p) for p in P)
        self.fn = fn
        self.label = label if label is not None else "P"

    def describe(self) -> str:
        return f"positions {set(self.positions)}"

    def variables(self) -> frozenset[str]:
        return frozenset()

    def check_output(self, d: int, scalar: bool) -> None:
        """Run ``fn`` on random tokens: one value per sample (``scalar``) or a value/vector per sample."""
        if self.fn is None:
            if scalar:
                raise ValueError(f"{self.describe()}: the default fn (the sum of the tokens) is a vector; "
                                 f"a node nested in a score needs a scalar fn")
            return
        toks = np.random.default_rng(0).normal(size=(PROBE_SAMPLES, len(self.positions), d))
        try:
            out = np.asarray(self.fn(toks), dtype=np.float64)
        except Exception as exc:  # a user function: report any failure as bad input
            raise ValueError(f"{self.describe()}: fn failed on tokens of shape {toks.shape}: {exc}") from exc
        if out.shape[:1] != (PROBE_SAMPLES,) or out.ndim > (1 if scalar else 2):
            want = f"({PROBE_SAMPLES},)" if scalar else f"({PROBE_SAMPLES},) or ({PROBE_SAMPLES}, m)"
            raise ValueError(f"{self.describe()}: fn returned shape {out.shape} for tokens of shape {toks.shape}, "
                             f"expected {want}")

    def _compute(self, ctx: _Ctx) -> np.ndarray:
        if max(self.positions) > ctx.T:
            raise ValueError(f"{self.describe()}: position {max(self.positions)} exceeds seq_len = {ctx.T}")
        toks = ctx.X[:, [p - 1 for p in self.positions]]  # (B, m, d)
        return toks.sum(axis=1) if self.fn is None else np.asarray(self.fn(toks), dtype=np.float64)

    def __repr__(self) -> str:
        return f"sum_{{p in {set(self.positions)}}} x(p)" if self.fn is None else f"f(x(p), p in {self.positions})"


# ----------------------------------------------------------------------------------------------
# inputs
# ----------------------------------------------------------------------------------------------
class InputDistribution(Protocol):
    """What a tree samples its inputs from: ``d`` and ``sample(batch, seq_len, rng) -> (batch, seq_len, d)``."""

    d: int

    def sample(self, batch: int, seq_len: int,
               rng: np.random.Generator | int | None = None) -> np.ndarray:  # pragma: no cover - protocol
        ...


def _rng_and_sizes(batch: int, seq_len: int, rng: np.random.Generator | int | None
                   ) -> tuple[int, int, np.random.Generator]:
    batch, seq_len = positive_int("batch", batch), positive_int("seq_len", seq_len)
    return batch, seq_len, rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)


@dataclass(frozen=True)
class GaussianInputs:
    """i.i.d. tokens ``x(t) ~ N(0, variance * I_d)``; with ``norm_range=(lo, hi)`` each token is
    rescaled so that its norm is clamped to ``[lo, hi]`` (triangle center, InfoFlow §4.2 as summarised)."""

    d: int
    variance: float = 1.0
    norm_range: tuple[float, float] | None = None

    def __post_init__(self) -> None:
        positive_int("GaussianInputs: d", self.d)
        positive_real("GaussianInputs: variance", self.variance)
        if self.norm_range is not None:
            lo, hi = self.norm_range
            if not (is_real(lo) and is_real(hi) and 0 <= lo <= hi < math.inf):
                raise ValueError(f"GaussianInputs: norm_range must be (lo, hi) with 0 <= lo <= hi finite, "
                                 f"got {self.norm_range!r}")

    def sample(self, batch: int, seq_len: int, rng: np.random.Generator | int | None = None) -> np.ndarray:
        batch, seq_len, rng = _rng_and_sizes(batch, seq_len, rng)
        X = rng.normal(0.0, np.sqrt(self.variance), size=(batch, seq_len, self.d))
        if self.norm_range is not None:
            lo, hi = self.norm_range
            n = np.linalg.norm(X, axis=-1, keepdims=True)
            X = X * (np.clip(n, lo, hi) / np.maximum(n, 1e-300))
        return X


@dataclass(frozen=True)
class PointerCycleInputs:
    """Tokens that point to each other along one cycle through all ``T`` positions (``d = 4``).

    Token ``t`` carries a *key* ``k_t = (cos th_t, sin th_t)`` and a *pointer* ``p_t = k_{pi(t)}``, the
    key of its successor: ``x(t) = (k_t, p_t)``. The keys sit at ``T`` equally spaced angles
    ``th_t = phi + 2 pi r_t / T`` (a uniform random rotation ``phi`` and a uniformly random assignment
    ``r`` of angles to positions); ``pi`` is a uniformly random cyclic permutation (a single cycle, so
    ``k < T`` hops never revisit a token). The pointer score ``k_s . p_t = cos(th_s - th_pi(t))`` is 1 at
    ``s = pi(t)`` and at most ``cos(2 pi / T)`` elsewhere: every look-up has a unique answer with a
    margin ``1 - cos(2 pi / T)``, so the k-hop target is well posed (its only discontinuities are the
    measure-zero inputs where the start of the chase changes).
    """

    d: int = 4

    def __post_init__(self) -> None:
        if self.d != 4:
            raise ValueError(f"PointerCycleInputs: tokens are (key, pointer) in R^2 x R^2, so d = 4, "
                             f"got d = {self.d!r}")

    def sample(self, batch: int, seq_len: int, rng: np.random.Generator | int | None = None) -> np.ndarray:
        B, T, rng = _rng_and_sizes(batch, seq_len, rng)
        phi = rng.uniform(0.0, 2 * np.pi, size=(B, 1))
        theta = phi + 2 * np.pi * np.argsort(rng.random((B, T)), axis=1) / T
        order = np.argsort(rng.random((B, T)), axis=1)  # the cycle visits order[:, 0], order[:, 1], ...
        succ = np.empty((B, T), dtype=np.intp)
        np.put_along_axis(succ, order, np.roll(order, -1, axis=1), axis=1)
        nxt = np.take_along_axis(theta, succ, axis=1)
        return np.stack([np.cos(theta), np.sin(theta), np.cos(nxt), np.sin(nxt)], axis=-1)


# ----------------------------------------------------------------------------------------------
# trees
# ----------------------------------------------------------------------------------------------
@dataclass
class NodeInfo:
    """Where a node sits in its tree (computed once by :class:`Tree`)."""

    node: Node
    index: int                 # position in post-order (children first)
    term: int                  # 1-based index of the root term it belongs to
    parent: int | None         # index of the enclosing node (None: a term of the root)
    ancestors: int             # number of enclosing nodes
    height: int                # 1 + longest chain of nested nodes below (1 for a leaf node)
    label: str                 # unique label (selected position is ``label*``)
    children: tuple[int, ...] = field(default_factory=tuple)

    @property
    def free(self) -> frozenset[str]:
        return self.node.variables()


def _exprs(node: Node) -> list[Expr]:
    """The expressions of a node that are not nodes themselves, recursively through sums and customs."""
    if not isinstance(node, Reduction):
        return []
    out, todo = [], [e for e in (node.score, node.value) if e is not None]
    while todo:
        e = todo.pop()
        if isinstance(e, Node):
            continue
        out.append(e)
        if isinstance(e, Sum):
            todo += [t for _, t in e.items]
    return out


class Tree:
    """A comparison tree that is also an evaluable target.

    Parameters
    ----------
    terms
        the root's children (reductions or position nodes).
    combine
        ``"sum"`` (default) or a function of the list of term values (the smooth ``F0``).
    input_dim
        token dimension ``d`` of the data the target is evaluated on.
    inputs
        the input distribution (default ``N(0, I_d)``): any object with ``d`` and
        ``sample(batch, seq_len, rng)``, e.g. :class:`GaussianInputs`, :class:`PointerCycleInputs`.
    name, params, description
        a short name, the fixed random parameters (``a_i``, ``A_i``) and a formula for display.
    """

    def __init__(self, terms: Sequence[Node], *, combine: str | Callable[[list[np.ndarray]], np.ndarray] = "sum",
                 input_dim: int, inputs: InputDistribution | None = None, name: str = "target",
                 params: dict[str, Any] | None = None, description: str = ""):
        terms = tuple(terms)
        if not terms:
            raise ValueError(f"{name}: a comparison tree needs at least one term")
        for i, t in enumerate(terms):
            if not isinstance(t, Node):
                hint = " (the root sums its terms: list them separately)" if isinstance(t, Expr) else ""
                raise ValueError(f"{name}: term {i + 1} must be a Reduction or Positions node, got {t!r}{hint}")
        if combine != "sum" and not callable(combine):
            raise ValueError(f"{name}: combine must be 'sum' or a callable, got {combine!r}")
        self.terms = terms
        self.combine = combine
        self.input_dim = positive_int(f"{name}: input_dim", input_dim)
        self.inputs = inputs if inputs is not None else GaussianInputs(self.input_dim)
        if not hasattr(self.inputs, "sample") or not hasattr(self.inputs, "d"):
            raise ValueError(f"{name}: inputs must have d and sample(batch, seq_len, rng), got {self.inputs!r}")
        if self.inputs.d != self.input_dim:
            raise ValueError(f"{name}: inputs have d = {self.inputs.d} but input_dim = {self.input_dim}")
        self.name = name
        self.params = dict(params or {})
        self.description = description
        self.info: list[NodeInfo] = []
        for i, t in enumerate(terms):
            self._walk(t, bound=(), term=i + 1, parent=None, ancestors=0)
        self._assign_labels()
        for info in self.info:
            if isinstance(info.node, Positions):
                info.node.check_output(self.input_dim, scalar=info.parent is not None)
            for e in _exprs(info.node):
                e.check(self.input_dim)

    # ------------------------------------------------------------------ structure
    def _walk(self, node: Node, bound: tuple[str, ...], term: int, parent: int | None, ancestors: int) -> int:
        if any(info.node is node for info in self.info):
            raise ValueError(f"{self.name}: node '{_desc(node)}' appears twice in the tree; build a new node "
                             f"(equal nodes are computed once)")
        child_ids: list[int] = []
        if isinstance(node, Reduction):
            if node.var in bound:
                raise ValueError(f"reduction '{node.describe()}' rebinds variable '{node.var}' "
                                 f"already bound by an enclosing reduction")
            for v in sorted(node.free_variables()):
                if v not in bound:
                    raise ValueError(f"reduction '{node.describe()}' uses variable '{v}' "
                                     f"that no enclosing reduction binds")
            for v in node.exclude_vars:
                if v not in bound:
                    raise ValueError(f"reduction '{node.describe()}' excludes variable '{v}' "
                                     f"that no enclosing reduction binds")
            inner_bound = bound + (node.var,)
            masked = node.exclude_nodes
            for child in node.nodes():
                # a masked reduction is evaluated outside the bound variable: it may not read it
                child_ids.append(self._walk(child, bound if any(child is m for m in masked) else inner_bound,
                                            term, None, ancestors + 1))
        elif not isinstance(node, Positions):  # pragma: no cover - guarded by the caller
            raise ValueError(f"{self.name}: unknown node {node!r}")
        height = 1 + max((self.info[c].height for c in child_ids), default=0)
        idx = len(self.info)
        self.info.append(NodeInfo(node, idx, term, parent, ancestors, height, node.label or "n", tuple(child_ids)))
        for c in child_ids:
            self.info[c].parent = idx
        return idx

    def _assign_labels(self) -> None:
        counts: dict[str, int] = {}
        for info in self.info:
            counts[info.label] = counts.get(info.label, 0) + 1
        seen: dict[str, int] = {}
        for info in self.info:
            if counts[info.label] > 1:
                base = f"{info.label}{info.term}" if len(self.terms) > 1 else info.label
                seen[base] = seen.get(base, 0) + 1
                info.label = base if seen[base] == 1 else f"{base}_{seen[base]}"

    def describe(self, index: int) -> str:
        """``'max over s (term 2)'``: a node in words."""
        info = self.info[index]
        d = _desc(info.node)
        return f"{d} (term {info.term})" if len(self.terms) > 1 else d

    def index_of(self, node: Node) -> int:
        """Post-order index of ``node`` in this tree."""
        for info in self.info:
            if info.node is node:
                return info.index
        raise ValueError(f"{self.name}: '{_desc(node)}' is not a node of this tree")

    def nodes(self) -> list[NodeInfo]:
        """Every node, children before parents (post-order)."""
        return list(self.info)

    def reductions(self) -> list[NodeInfo]:
        return [i for i in self.info if isinstance(i.node, Reduction)]

    # ------------------------------------------------------------------ data
    def sample_inputs(self, batch: int, seq_len: int, rng: np.random.Generator | int | None = None) -> np.ndarray:
        """Inputs of shape (batch, seq_len, d) from the target's input distribution (float64)."""
        return self.inputs.sample(batch, seq_len, rng)

    def sample(self, batch: int, seq_len: int, rng: np.random.Generator | int | None = None
               ) -> tuple[np.ndarray, np.ndarray]:
        """``(X, y)``: inputs and target values."""
        X = self.sample_inputs(batch, seq_len, rng)
        return X, self.evaluate(X)

    def _layout_elements(self, T: int) -> int:
        """Largest evaluation layout per sample: a node binds its free variables and its own variable
        (a fused chain of symmetric reductions binds the whole chain at once)."""
        axes = 1
        for info in self.reductions():
            fused = info.node._fused_chain()
            axes = max(axes, len(info.free) + (len(fused[0]) if fused else 1))
        return T ** axes

    def _check_X(self, X: np.ndarray) -> np.ndarray:
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 3:
            raise ValueError(f"{self.name}: X must have shape (batch, seq_len, d), got {X.shape}")
        if X.shape[-1] != self.input_dim:
            raise ValueError(f"{self.name}: X has token dimension {X.shape[-1]}, the target expects d = {self.input_dim}")
        if X.shape[1] < 1:
            raise ValueError(f"{self.name}: seq_len must be >= 1")
        return X

    def evaluate(self, X: np.ndarray, chunk_size: int | None = None) -> np.ndarray:
        """Target values for a NumPy batch ``X`` (batch, T, d): shape (batch,) or (batch, m). float64."""
        X = self._check_X(X)
        B, T, _ = X.shape
        if chunk_size is None:
            chunk_size = max(1, EVAL_BUDGET // max(1, self._layout_elements(T)))
        outs = []
        for lo in range(0, B, chunk_size):
            ctx = _Ctx(X[lo:lo + chunk_size], {}, {}, 0)
            vals = [t.evaluate(ctx) for t in self.terms]
            if self.combine == "sum":
                out = vals[0]
                for v in vals[1:]:
                    out = out + v
            else:
                out = np.asarray(self.combine(vals), dtype=np.float64)
            outs.append(out)
        return np.concatenate(outs, axis=0) if outs else np.zeros((0,))

    def __call__(self, X: Any) -> Any:
        """Evaluate on a NumPy array or a torch tensor (returned as a tensor of X's dtype and device)."""
        if type(X).__module__.startswith("torch"):
            import torch

            out = self.evaluate(X.detach().to("cpu", torch.float64).numpy())
            return torch.as_tensor(out, dtype=X.dtype if X.is_floating_point() else torch.float64, device=X.device)
        return self.evaluate(X)

    def selected_positions(self, X: np.ndarray, index: int) -> np.ndarray:
        """0-based positions selected by reduction ``index`` (post-order index), per sample and per
        value of its free variables (one axis each, in binding order)."""
        X = self._check_X(X)
        info = self.info[index]
        if not isinstance(info.node, Reduction):
            raise ValueError(f"{self.describe(index)} is not a reduction")
        chain = []
        j: int | None = index
        while self.info[j].parent is not None:
            j = self.info[j].parent
            chain.append(self.info[j].node.var)
        ctx = _Ctx(X, {}, {}, 0)
        for v in reversed(chain):
            if v in info.free:
                ctx = ctx.bind(v)
        _, arg = info.node.evaluate_with_index(ctx)
        full = (X.shape[0],) + (X.shape[1],) * ctx.ndim
        return np.broadcast_to(arg, full).copy()

    def __repr__(self) -> str:
        return f"Tree({self.name}: {self.description or ' + '.join(repr(t) for t in self.terms)})"


def _desc(node: Node) -> str:
    return node.describe() if hasattr(node, "describe") else repr(node)
