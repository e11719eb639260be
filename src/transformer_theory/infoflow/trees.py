"""Comparison trees: a target written as nested max/min reductions over token positions.

InfoFlow (Yu, Jiang, Bao, Li 2026, arXiv 2605.17930) measures a target by its *comparison tree*; the
names (comparison tree, order beta', dimension beta_1, comparison number) come from the seed summary,
the **definitions used here are a reconstruction [INF]** (``shared/papers/infoflow-spec.md`` §2.5):

* the root combines its *terms* (a sum by default, or any smooth ``F0``);
* a :class:`Reduction` is ``max``/``min`` (or the k-th largest / smallest) over one bound position
  variable of a *score*; the score may read the bound variable, variables bound by enclosing
  reductions (its *free* variables) and the values of nested reductions;
* a :class:`Positions` node reads a fixed, content-independent set of positions (needs positional
  encoding in the model).

The same object is **evaluable on data**: :meth:`Tree.__call__` evaluates every reduction generically
(one vectorised evaluator for every tree, hand-written or library-made), so the targets of
:mod:`transformer_theory.infoflow.targets` also generate the training data of the experiment chapters.

Writing a new tree::

    from transformer_theory.infoflow.trees import Tree, Reduction, Linear, Bilinear, Custom
    inner = Reduction("max", "s", Bilinear("s", "t", A), label="s")     # m(t) = max_s x(s)^T A x(t)
    outer = Reduction("min", "t", Custom(lambda xt, m: m - xt[..., 0], ("t", inner)), label="t")
    tree = Tree([outer], input_dim=4, name="my target")                  # min_t [m(t) - x(t)_1]
    y = tree(X)                                                          # X: (batch, T, 4)

A separable score (a sum of per-token terms) should be written as separate reductions: the tree's
structure *is* the decomposition the framework schedules.
"""

from __future__ import annotations

import itertools
import numbers
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

#: Elements of the evaluation layout (batch x position axes) allowed per chunk of the batch.
EVAL_BUDGET = 2**21


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

    def monotone_split(self) -> "tuple[Expr, Callable[[np.ndarray], np.ndarray]] | None":
        """``(inner, f)`` with ``self == f(inner)`` and ``f`` increasing, if cheaper to reduce ``inner``."""
        return None


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


def _check_var(name: str, what: str) -> str:
    if not isinstance(name, str) or not name.isidentifier():
        raise ValueError(f"{what}: position variables are identifiers such as 's' or 't1', got {name!r}")
    return name


class Linear(Expr):
    """``a^T x(var)`` (order 1): the score of max-position retrieval in P1's D-retrieval target."""

    def __init__(self, var: str, a: Sequence[float] | np.ndarray):
        self.var = _check_var(var, "Linear")
        self.a = np.asarray(a, dtype=np.float64).reshape(-1)

    def variables(self) -> frozenset[str]:
        return frozenset({self.var})

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
        self.A = None if A is None else np.asarray(A, dtype=np.float64)
        if self.A is not None and (self.A.ndim != 2 or self.A.shape[0] != self.A.shape[1]):
            raise ValueError(f"Bilinear: A must be a square d x d matrix, got shape {self.A.shape}")

    def variables(self) -> frozenset[str]:
        return frozenset({self.left, self.right})

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


class Custom(Expr):
    """Any vectorised function of tokens and nested values.

    ``args`` lists position variables (the function receives the tokens ``x(var)``, shape
    ``(..., d)``) and nodes (it receives their values, shape ``(...)``), all mutually broadcastable;
    it must return an array of the broadcast shape (without the trailing ``d``).
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
        self.symmetric = bool(symmetric)
        self.name = name or getattr(fn, "__name__", "f")

    def variables(self) -> frozenset[str]:
        out: set[str] = set()
        for a in self.args:
            out |= {a} if isinstance(a, str) else set(a.variables())
        return frozenset(out)

    def nodes(self) -> tuple["Node", ...]:
        return tuple(a for a in self.args if isinstance(a, Node))

    def evaluate(self, ctx: _Ctx) -> np.ndarray:
        vals = [ctx.tokens(a) if isinstance(a, str) else a.evaluate(ctx) for a in self.args]
        return np.asarray(self.fn(*vals), dtype=np.float64)

    def __repr__(self) -> str:
        names = [a if isinstance(a, str) else (a.label or "m") for a in self.args]
        return f"{self.name}({', '.join(names)})"


# ----------------------------------------------------------------------------------------------
# nodes
# ----------------------------------------------------------------------------------------------
class Node(Expr):
    """A node of a comparison tree (a reduction or a fixed-position read); its value is an Expr."""

    label: str | None = None


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
        max/min. Only ``k = 1`` is a cheap max-position retrieval (InfoFlow Theorem 2, as summarised).
    value
        what the reduction returns, evaluated at the selected position (default: the score itself);
        e.g. ``Linear(var, b)`` returns ``b^T x(t_k)``.
    exclude
        enclosing variables the bound variable must differ from (e.g. ``s != t``).
    label
        name of the selected position in information sets (``"s1"`` gives ``s1*(t)``); default ``var``.
    """

    def __init__(self, op: str, var: str, score: Expr, *, rank: int = 1, value: Expr | None = None,
                 exclude: Sequence[str] = (), label: str | None = None):
        if op not in ("max", "min"):
            raise ValueError(f"Reduction: op must be 'max' or 'min', got {op!r}")
        self.op = op
        self.var = _check_var(var, "Reduction")
        if not isinstance(score, Expr):
            raise ValueError(f"reduction '{op} over {var}': score must be an Expr, got {score!r}")
        if value is not None and not isinstance(value, Expr):
            raise ValueError(f"reduction '{op} over {var}': value must be an Expr, got {value!r}")
        if not isinstance(rank, numbers.Integral) or isinstance(rank, bool) or rank < 1:
            raise ValueError(f"reduction '{op} over {var}': rank = {rank!r} must be an integer >= 1")
        self.score = score
        self.rank = int(rank)
        self.value = value
        self.exclude = tuple(_check_var(v, "Reduction.exclude") for v in exclude)
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

    def free_variables(self) -> frozenset[str]:
        return (self.score.variables() | (self.value.variables() if self.value else frozenset())) - {self.var}

    def variables(self) -> frozenset[str]:
        return self.free_variables()

    def nodes(self) -> tuple[Node, ...]:
        out: tuple[Node, ...] = ()
        for e in (self.score, self.value):
            if e is not None:
                out += (e,) if isinstance(e, Node) else e.nodes()
        return out

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
        sub = ctx.bind(self.var)
        s = np.asarray(self.score.evaluate(sub), dtype=np.float64)
        s = np.broadcast_to(s, s.shape[:-1] + (ctx.T,)) if s.shape[-1] == 1 else s
        if self.exclude:
            mask = np.zeros((1,) * (sub.ndim + 1), dtype=bool)
            for v in self.exclude:
                mask = mask | (sub.idx[v] == sub.idx[self.var])[None]
            s = np.where(mask, -np.inf if self.op == "max" else np.inf, s)
        return sub, s

    def evaluate_with_index(self, ctx: _Ctx) -> tuple[np.ndarray, np.ndarray]:
        """Value and selected position (0-based) over the layout of the free variables."""
        if self.rank > ctx.T:
            raise ValueError(f"reduction '{self.describe()}': rank {self.rank} exceeds seq_len = {ctx.T}")
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

    def evaluate(self, ctx: _Ctx) -> np.ndarray:
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
    paper's §4.4). Read by specific-position aggregation, which needs positional encoding.
    """

    def __init__(self, positions: Sequence[int], fn: Callable[[np.ndarray], np.ndarray] | None = None,
                 *, label: str | None = None):
        P = tuple(positions)
        if not P:
            raise ValueError("Positions: the position set P is empty")
        for p in P:
            if not isinstance(p, numbers.Integral) or isinstance(p, bool) or p < 1:
                raise ValueError(f"Positions: positions are 1-based integers, got {p!r}")
        if len(set(P)) != len(P):
            raise ValueError(f"Positions: repeated positions in {P}")
        self.positions = tuple(int(p) for p in P)
        self.fn = fn
        self.label = label if label is not None else "P"

    def describe(self) -> str:
        return f"positions {set(self.positions)}"

    def variables(self) -> frozenset[str]:
        return frozenset()

    def evaluate(self, ctx: _Ctx) -> np.ndarray:
        if max(self.positions) > ctx.T:
            raise ValueError(f"{self.describe()}: position {max(self.positions)} exceeds seq_len = {ctx.T}")
        toks = ctx.X[:, [p - 1 for p in self.positions]]  # (B, m, d)
        out = toks.sum(axis=1) if self.fn is None else np.asarray(self.fn(toks), dtype=np.float64)
        if ctx.ndim == 0:
            return out
        if out.ndim != 1:
            raise ValueError(f"{self.describe()}: a vector-valued node can only be a term of the root")
        return out.reshape(out.shape + (1,) * ctx.ndim)

    def __repr__(self) -> str:
        return f"sum_{{p in {set(self.positions)}}} x(p)" if self.fn is None else f"f(x(p), p in {self.positions})"


# ----------------------------------------------------------------------------------------------
# inputs
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class GaussianInputs:
    """i.i.d. tokens ``x(t) ~ N(0, variance * I_d)``; with ``norm_range=(lo, hi)`` each token is
    rescaled so that its norm is clamped to ``[lo, hi]`` (triangle center, InfoFlow §4.2 per S2)."""

    d: int
    variance: float = 1.0
    norm_range: tuple[float, float] | None = None

    def sample(self, batch: int, seq_len: int, rng: np.random.Generator | int | None = None) -> np.ndarray:
        for name, v in (("batch", batch), ("seq_len", seq_len)):
            if not isinstance(v, numbers.Integral) or isinstance(v, bool) or v < 1:
                raise ValueError(f"{name} = {v!r} must be a positive integer")
        rng = rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)
        X = rng.normal(0.0, np.sqrt(self.variance), size=(int(batch), int(seq_len), self.d))
        if self.norm_range is not None:
            lo, hi = self.norm_range
            n = np.linalg.norm(X, axis=-1, keepdims=True)
            X = X * (np.clip(n, lo, hi) / np.maximum(n, 1e-300))
        return X


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
        the input distribution (default ``N(0, I_d)``).
    name, params, description
        a short name, the fixed random parameters (``a_i``, ``A_i``) and a formula for display.
    """

    def __init__(self, terms: Sequence[Node], *, combine: str | Callable[[list[np.ndarray]], np.ndarray] = "sum",
                 input_dim: int, inputs: GaussianInputs | None = None, name: str = "target",
                 params: dict[str, Any] | None = None, description: str = ""):
        terms = tuple(terms)
        if not terms:
            raise ValueError(f"{name}: a comparison tree needs at least one term")
        for i, t in enumerate(terms):
            if not isinstance(t, Node):
                raise ValueError(f"{name}: term {i + 1} must be a Reduction or Positions node, got {t!r}")
        if combine != "sum" and not callable(combine):
            raise ValueError(f"{name}: combine must be 'sum' or a callable, got {combine!r}")
        if not isinstance(input_dim, numbers.Integral) or isinstance(input_dim, bool) or input_dim < 1:
            raise ValueError(f"{name}: input_dim = {input_dim!r} must be an integer >= 1")
        self.terms = terms
        self.combine = combine
        self.input_dim = int(input_dim)
        self.inputs = inputs if inputs is not None else GaussianInputs(self.input_dim)
        if self.inputs.d != self.input_dim:
            raise ValueError(f"{name}: inputs have d = {self.inputs.d} but input_dim = {self.input_dim}")
        self.name = name
        self.params = dict(params or {})
        self.description = description
        self.info: list[NodeInfo] = []
        for i, t in enumerate(terms):
            self._walk(t, bound=(), term=i + 1, parent=None, ancestors=0)
        self._assign_labels()

    # ------------------------------------------------------------------ structure
    def _walk(self, node: Node, bound: tuple[str, ...], term: int, parent: int | None, ancestors: int) -> int:
        if any(info.node is node for info in self.info):
            raise ValueError(f"{self.name}: node '{_desc(node)}' appears twice in the tree; build a new node")
        child_ids: list[int] = []
        if isinstance(node, Reduction):
            if node.var in bound:
                raise ValueError(f"reduction '{node.describe()}' rebinds variable '{node.var}' "
                                 f"already bound by an enclosing reduction")
            for v in sorted(node.free_variables()):
                if v not in bound:
                    raise ValueError(f"reduction '{node.describe()}' uses variable '{v}' "
                                     f"that no enclosing reduction binds")
            for v in node.exclude:
                if v not in bound:
                    raise ValueError(f"reduction '{node.describe()}' excludes variable '{v}' "
                                     f"that no enclosing reduction binds")
            inner_bound = bound + (node.var,)
            for child in node.nodes():
                child_ids.append(self._walk(child, inner_bound, term, None, ancestors + 1))
        elif isinstance(node, Positions):
            pass
        else:  # pragma: no cover - guarded by the caller
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
        depth = max((i.ancestors + 1 for i in self.info if isinstance(i.node, Reduction)), default=1)
        return T ** depth

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
