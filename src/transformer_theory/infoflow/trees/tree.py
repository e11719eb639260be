"""The comparison tree: its nodes in post-order with their places, and its evaluation on data."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from transformer_theory.checks import is_integer, positive_int
from transformer_theory.infoflow.trees.context import EvalContext
from transformer_theory.infoflow.trees.expressions import Bilinear, Expr, Linear, Node, Sum
from transformer_theory.infoflow.trees.inputs import GaussianInputs, InputDistribution
from transformer_theory.infoflow.trees.nodes import Positions, Reduction

#: Elements of the evaluation layout (batch x position axes) allowed per chunk of the batch.
EVAL_BUDGET = 2**21


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

    The tree names the vectors and matrices its scores leave unnamed (:class:`Linear`, :class:`Bilinear`):
    distinct ones get distinct names (``a``, ``b``, ... and ``A``, ``B``, ...), equal ones share a name, so
    ``repr`` tells them apart; two different parameters given the same name are refused.
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
        self._name_parameters()
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

    def leading_terms(self, k: int) -> "Tree":
        """The target made of this tree's first ``k`` terms (their sum; the stages of a curriculum over the terms).

        Raises:
            ValueError: ``k`` is not in 1..len(terms), or the tree combines its terms by another function than the sum.
        """
        if self.combine != "sum":
            raise ValueError(f"{self.name}: only a tree that sums its terms has leading terms")
        if not is_integer(k) or not 1 <= k <= len(self.terms):
            raise ValueError(f"{self.name}: k must be an integer in 1..{len(self.terms)}, got {k!r}")
        if k == len(self.terms):
            return self
        return Tree(self.terms[:k], input_dim=self.input_dim, inputs=self.inputs, name=f"{self.name}[:{k}]",
                    params=self.params, description=f"the first {k} terms of {self.description or self.name}")

    def _name_parameters(self) -> None:
        exprs = [e for info in self.info for e in _exprs(info.node)]
        kinds = (([e for e in exprs if isinstance(e, Linear)], lambda e: e.a, "abcdefghijklmnopqrsuvwyz"),
                 ([e for e in exprs if isinstance(e, Bilinear) and e.A is not None], lambda e: e.A,
                  "ABCDEFGHJKLMNOPQRSUVWXYZ"))
        named: dict[str, np.ndarray] = {}
        for items, value, _ in kinds:
            for e in items:
                if e.name is not None:
                    if e.name in named and not np.array_equal(named[e.name], value(e)):
                        raise ValueError(f"{self.name}: two different parameters are both named '{e.name}'")
                    named[e.name] = value(e)
        taken = set(named) | {"x"} | {i.node.var for i in self.info if isinstance(i.node, Reduction)}
        for items, value, letters in kinds:
            fresh = (n for n in itertools.chain(letters, (f"{letters[0]}{i}" for i in itertools.count(1)))
                     if n not in taken)
            given: list[tuple[np.ndarray, str]] = []
            for e in (e for e in items if e.name is None):
                e.name = next((n for arr, n in given if np.array_equal(arr, value(e))), None) or next(fresh)
                given.append((value(e), e.name))

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
            fused = info.node.fused_chain()
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
            ctx = EvalContext(X[lo:lo + chunk_size], {}, {}, 0)
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
        ctx = EvalContext(X, {}, {}, 0)
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
