"""The nodes of a comparison tree: :class:`Reduction` (one comparison) and :class:`Positions` (a fixed read)."""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from transformer_theory.checks import is_integer, positive_int
from transformer_theory.infoflow.trees.context import EvalContext
from transformer_theory.infoflow.trees.expressions import PROBE_SAMPLES, Expr, Node, check_variable


def ordinal(k: int) -> str:
    """``k`` as an English ordinal: ``'1st'``, ``'2nd'``, ``'11th'``, ``'23rd'`` (a reduction's rank in messages)."""
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
        self.var = check_variable(var, "Reduction")
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
                excl.append(check_variable(e, "Reduction.exclude"))
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
    def fused_chain(self) -> tuple[list[str], Expr] | None:
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

    def _scores(self, ctx: EvalContext) -> tuple[EvalContext, np.ndarray]:
        T = ctx.T
        if self.rank + len(self.exclude) > T:
            which = "largest" if self.op == "max" else "smallest"
            excl = f" after excluding {len(self.exclude)} position(s)" if self.exclude else ""
            raise ValueError(f"reduction '{self.describe()}': selecting the {ordinal(self.rank)} {which} score"
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

    def evaluate_with_index(self, ctx: EvalContext) -> tuple[np.ndarray, np.ndarray]:
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

    def selected_in(self, ctx: EvalContext) -> np.ndarray:
        """The selected position (0-based) over ``ctx``'s layout (computed once per free-variable value)."""
        return self._table(ctx, "arg", lambda c: self.evaluate_with_index(c)[1])

    def _compute(self, ctx: EvalContext) -> np.ndarray:
        fused = self.fused_chain()
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
        var = f"{{{self.var} != {', '.join(self.exclude_vars)}}}" if self.exclude_vars else self.var
        return f"{self.op}{k}_{var} {self.score!r}"


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

    def _compute(self, ctx: EvalContext) -> np.ndarray:
        if max(self.positions) > ctx.T:
            raise ValueError(f"{self.describe()}: position {max(self.positions)} exceeds seq_len = {ctx.T}")
        toks = ctx.X[:, [p - 1 for p in self.positions]]  # (B, m, d)
        return toks.sum(axis=1) if self.fn is None else np.asarray(self.fn(toks), dtype=np.float64)

    def __repr__(self) -> str:
        return f"sum_{{p in {set(self.positions)}}} x(p)" if self.fn is None else f"f(x(p), p in {self.positions})"
