"""Canonical form of a comparison tree: the *jobs* a schedule places, the same for every plain rewrite.

The scheduler (:mod:`~transformer_theory.infoflow.schedule`) does not place the nodes of a tree as
written but the jobs of its canonical form, so that trees computing the same function through a
plain rewrite get the same verdict and exponent (a **reconstruction** of how InfoFlow reads a target,
Yu et al. 2026 as summarised; see the book's page on how it reconstructs the papers):

* **one specific-position job.** Every :class:`~transformer_theory.infoflow.trees.Positions` node
  joins one job reading the union of their positions: one head with positional encoding attends to
  a fixed set of any size, and the cost law applies to the union (InfoFlow §2.3, mode 3).
* **additive shifts are separate terms.** A nested node that enters a score additively (a
  :class:`~transformer_theory.infoflow.trees.Sum` term, or a :class:`~transformer_theory.infoflow.trees.Custom`
  argument the function is linear in, checked on random inputs) and does not depend on the bound
  variable shifts every score equally: ``max_t [g(t) + C] = max_t g(t) + C``. It is lifted out of the
  reduction and computed beside it; when the reduction returns a separate ``value``, the shift cannot
  change the result and is dropped.
* **one retrieval per selection.** Reductions that select the same position share one job when they
  read the same jobs: the selection is fingerprinted numerically (the score on fixed random tokens,
  up to an increasing affine map, shifts removed), so ``max_t 2 a^T x(t)``, ``max_t a^T x(t)`` and
  ``min_t -a^T x(t)`` are one retrieval (what is read from the selected token is the FFN's business).
* **k-th largest.** ``rank=k`` and the same selection written as a max that masks the maxima of
  earlier reductions, by position (``exclude=(first, second, ...)``) or by value (a score that is
  ``-inf`` where it reaches an earlier maximum, recognised on sampled inputs), are one job; the k-th largest of ``T`` scores is
  the ``(T + 1 - k)``-th smallest, so ``k > (T + 1) / 2`` flips to the smaller rank (``k = T`` is the
  argmin, a plain retrieval). With more than one layer a rank ``k >= 2`` is a **pointer chase**: from
  the top-1 position, ``k - 1`` look-ups of the next smaller score.
* **pointer chases.** A reduction whose value is a chain of ``m`` nested look-ups with one and the same
  pointer score (``targets.k_hop``) is one chain job, placed with pointer doubling: a token that
  attends to another inherits its information set (Sanford et al. 2024), so ``m`` hops take about
  ``log2 m`` layers, not ``m``.

A node with two or more free variables (comparison order >= 3, or a k-th largest with a free
variable) is *blocked*: no retrieval computes it and its term needs global aggregation.
"""

from __future__ import annotations

import math
import zlib
from dataclasses import dataclass
from typing import Any

import numpy as np

from transformer_theory.infoflow.trees import (Bilinear, Custom, EvalContext, Expr, Linear, Node, NormOfSum,
                                               Positions, Reduction, Sum, Tree, ordinal)

CLS, TOKENS, ALL = "CLS", "tokens", "all"


@dataclass
class Job:
    """One unit of the schedule: a retrieval, the specific-position read, a pointer chase, or a blocked node.

    ``kind``
        ``"retrieval"`` (one top-1 retrieval), ``"specific"`` (one specific-position aggregation),
        ``"chain"`` (a pointer chase of ``hops`` look-ups, or a k-th largest, ``rank >= 2``), ``"blocked"``.
    ``nodes``
        the tree nodes (post-order indices) the job stands for; the first one represents it.
    ``deps``
        jobs whose values must be available before the job runs.
    ``free``
        whether it depends on a free variable (a per-token value: its queries are the tokens).
    ``query``
        ``"CLS"``, ``"tokens"`` or ``"all"``: which tokens need the result (set from its consumers).
    """

    id: int
    kind: str
    nodes: tuple[int, ...]
    deps: frozenset[int]
    free: bool
    label: str
    description: str
    query: str = ""
    hops: int = 0
    doubling_only: bool = False
    pointer: str = ""
    pointer_node: int | None = None
    positions: tuple[int, ...] = ()
    rank: int = 1
    op: str = ""
    blocked: str = ""
    reason: str = ""

    @property
    def representative(self) -> int:
        return self.nodes[0]


@dataclass
class Canonical:
    """The canonical form of ``tree`` at ``seq_len``: jobs (ids in dependency order) and, per root term,
    the jobs it needs directly."""

    tree: Tree
    seq_len: int
    jobs: list[Job]
    terms: tuple[frozenset[int], ...]
    notes: tuple[str, ...]

    def closure(self, ids: frozenset[int] | set[int]) -> frozenset[int]:
        """``ids`` and every job they depend on, transitively."""
        out, todo = set(), list(ids)
        while todo:
            j = todo.pop()
            if j not in out:
                out.add(j)
                todo += self.jobs[j].deps
        return frozenset(out)

    def term_jobs(self, term: int) -> frozenset[int]:
        """Every job the 1-based root ``term`` needs."""
        return self.closure(self.terms[term - 1])


# ----------------------------------------------------------------------------------------------
# structural keys: equal keys <=> the same function (up to renaming position variables)
# ----------------------------------------------------------------------------------------------
def _expr_key(e: Expr, names: dict[str, str], memo: dict[int, tuple]) -> tuple:
    if isinstance(e, Node):
        return _node_ref(e, names, memo)
    if isinstance(e, Linear):
        return ("lin", names[e.var], e.a.tobytes())
    if isinstance(e, Bilinear):
        left, right, A = names[e.left], names[e.right], e.A
        if A is None:
            return ("dot",) + tuple(sorted((left, right)))
        if left > right:
            left, right, A = right, left, A.T
        return ("bil", left, right, A.tobytes())
    if isinstance(e, NormOfSum):
        return ("norm", tuple(sorted(names[v] for v in e.vars)), e.squared)
    if isinstance(e, Sum):
        items = sorted((repr(_expr_key(t, names, memo)), w) for w, t in e.items)
        return ("sum", e.constant, tuple(items))
    if isinstance(e, Custom):
        args = tuple(names[a] if isinstance(a, str) else _node_ref(a, names, memo) for a in e.args)
        return ("custom", id(e.fn), args)
    return ("expr", id(e))  # pragma: no cover - every Expr of the library is handled above


def _node_ref(node: Node, names: dict[str, str], memo: dict[int, tuple]) -> tuple:
    return (node_key(node, memo), tuple(names[v] for v in sorted(node.variables())))


def node_key(node: Node, memo: dict[int, tuple] | None = None) -> tuple:
    """Structural key of ``node`` as a function of its free variables (renamed ``f0, f1, ...``)."""
    memo = {} if memo is None else memo
    if id(node) in memo:
        return memo[id(node)]
    names = {v: f"f{i}" for i, v in enumerate(sorted(node.variables()))}
    if isinstance(node, Positions):
        key: tuple = ("positions", node.positions, None if node.fn is None else id(node.fn))
    else:
        assert isinstance(node, Reduction)
        inner = dict(names, **{node.var: "b"})
        excl = tuple(sorted(names[e] if isinstance(e, str) else repr(_node_ref(e, names, memo)) for e in node.exclude))
        key = ("reduction", node.op, node.rank, _expr_key(node.score, inner, memo),
               None if node.value is None else _expr_key(node.value, inner, memo), excl)
    memo[id(node)] = key
    return key


#: tokens the selection fingerprints are computed on (fixed, so fingerprints compare across nodes)
_FP_TOKENS = 24

#: input samples on which a max masking earlier maxima by value is recognised as a k-th largest
_MASK_SAMPLES = 32


def _probe(e: Expr, ctx: EvalContext, lifted: set[int], memo: dict[int, tuple]) -> np.ndarray:
    """``e`` on the probe tokens, lifted nodes set to 0 and every other nested node replaced by fixed
    random values (the same for structurally equal nodes)."""
    if isinstance(e, Node):
        if id(e) in lifted:
            return np.zeros(())
        free = sorted(e.variables())
        rng = np.random.default_rng(zlib.crc32(repr(node_key(e, memo)).encode()))
        table = rng.normal(size=(_FP_TOKENS,) * len(free))
        return table[tuple(ctx.idx[v] for v in free)][None] if free else table.reshape((1,) * (ctx.ndim + 1))
    if isinstance(e, Sum):
        out: Any = e.constant
        for w, t in e.items:
            out = out + w * _probe(t, ctx, lifted, memo)
        return np.asarray(out, dtype=np.float64)
    if isinstance(e, Custom):
        vals = [ctx.tokens(a) if isinstance(a, str) else _probe(a, ctx, lifted, memo) for a in e.args]
        return np.asarray(e.fn(*vals), dtype=np.float64)
    return np.asarray(e.evaluate(ctx), dtype=np.float64)


def selection_key(red: Reduction, d: int, lifted: set[int] = frozenset(), op: str | None = None,
                  memo: dict[int, tuple] | None = None) -> tuple | None:
    """Fingerprint of *which position* ``red`` selects: the order of its scores on fixed random tokens
    (and fixed random values of nested nodes), per value of its free variable, with the lifted additive
    nodes removed. A top-1 or k-th selection depends on the scores only through that order, so equal
    fingerprints mean the same selection (``max_t 2 a^T x(t)`` and ``min_t -a^T x(t)`` included).
    ``None`` for more than one free variable."""
    free = sorted(red.free_variables())
    if len(free) > 1:
        return None
    X = np.random.default_rng(12345).normal(size=(1, _FP_TOKENS, d))
    ctx = EvalContext(X, {}, {}, 0)
    for v in free + [red.var]:
        ctx = ctx.bind(v)
    with np.errstate(all="ignore"):
        s = _probe(red.score, ctx, set(lifted), {} if memo is None else memo)
    s = np.broadcast_to(s, (1,) + (_FP_TOKENS,) * (len(free) + 1))[0]
    order = np.argsort(-s if (op or red.op) == "max" else s, axis=-1, kind="stable")
    return ("selection", len(free), order.astype(np.int16).tobytes())


# ----------------------------------------------------------------------------------------------
# how a reduction reads its nested nodes
# ----------------------------------------------------------------------------------------------
def _score_reads(score: Expr, d: int) -> tuple[list[Node], list[Node]]:
    """``(additive, other)``: nested nodes read only as additive terms of the score, and the rest.

    A :class:`Custom` argument the function ignores (weight 0) is in neither list.
    """
    additive: list[Node] = []
    other: list[Node] = []

    def visit(e: Expr) -> None:
        if isinstance(e, Node):
            additive.append(e)
        elif isinstance(e, Sum):
            for w, t in e.items:
                if w != 0.0:  # a term with weight 0 is not read
                    visit(t)
        elif isinstance(e, Custom):
            for j, a in enumerate(e.args):
                if isinstance(a, Node):
                    w = e.additive_weight(j, d) if sum(b is a for b in e.args) == 1 else None
                    if w is None:
                        other.append(a)
                    elif w != 0.0:
                        additive.append(a)
        else:
            other.extend(e.nodes())

    visit(score)
    twice = [n for n in additive if any(n is o for o in other)]
    return [n for n in additive if not any(n is t for t in twice)], other + twice


# ----------------------------------------------------------------------------------------------
# the canonicalisation pass
# ----------------------------------------------------------------------------------------------
class _Builder:
    def __init__(self, tree: Tree, seq_len: int):
        self.tree = tree
        self.T = seq_len
        self.d = tree.input_dim
        self.jobs: list[Job] = []
        self.by_key: dict[Any, int] = {}
        self.memo: dict[int, tuple] = {}
        self.specific: int | None = None
        self.notes: list[str] = []

    def index(self, node: Node) -> int:
        return self.tree.index_of(node)

    def new_job(self, key: Any, node: Node, **kw: Any) -> int:
        """A job for ``node``; a node with the same key and dependencies joins the existing job (so job
        ids stay in dependency order)."""
        i = self.index(node)
        key = (key, tuple(sorted(kw["deps"])))
        if key in self.by_key:
            job = self.jobs[self.by_key[key]]
            job.nodes += (i,)
            return job.id
        jid = len(self.jobs)
        kw.setdefault("label", self.tree.info[i].label)
        kw.setdefault("description", self.tree.describe(i))
        self.jobs.append(Job(id=jid, nodes=(i,), **kw))
        self.by_key[key] = jid
        return jid

    def selection(self, red: Reduction, lifted: set[int] = frozenset(), op: str | None = None) -> tuple:
        """Which position ``red`` (at most one free variable) selects: its numerical fingerprint."""
        key = selection_key(red, self.d, lifted, op, self.memo)
        assert key is not None, "called for reductions with at most one free variable"
        return key

    # ---------------------------------------------------------------- recognisers
    def effective_rank(self, red: Reduction) -> int | None:
        """Rank of a closed reduction counting the masked maxima of earlier reductions with the same
        selection (``exclude=(first, ..., (k-1)-th)``); ``None`` if the masks are not of that form."""
        if red.exclude_vars or red.free_variables():
            return None if red.exclude else red.rank
        ranks = []
        for e in red.exclude_nodes:
            if e.free_variables() or self.selection(e) != self.selection(red):
                return None
            r = self.effective_rank(e)
            if r is None:
                return None
            ranks.append(r)
        if sorted(ranks) != list(range(1, len(ranks) + 1)):
            return None
        return red.rank + len(ranks)

    def value_masked_rank(self, red: Reduction, read: list[Node]) -> tuple[Reduction, int] | None:
        """``(base, k)`` when the closed ``red`` selects, on sampled inputs, always the position of the k-th
        (k >= 2) score of a closed rank-1 reduction ``base`` it reads (directly or through such reductions):
        the k-th largest written as a max whose score masks the maxima found by earlier reductions."""
        if red.free_variables() or red.rank != 1 or red.exclude or not read:
            return None
        candidates, todo = [], [n for n in read if isinstance(n, Reduction) and not n.free_variables()]
        while todo:
            n = todo.pop(0)
            if n.rank == 1 and not n.exclude and not any(n is c for c in candidates):
                candidates.append(n)
            todo += [m for m in n.score.nodes() if isinstance(m, Reduction) and not m.free_variables()]
        if not candidates:
            return None
        X = self.tree.sample_inputs(_MASK_SAMPLES, self.T, 0)
        chosen = self.tree.selected_positions(X, self.index(red))
        for base in reversed(candidates):  # the deepest first: the k-th largest of the plain comparison
            with np.errstate(all="ignore"):
                scores = np.broadcast_to(base.score.evaluate(EvalContext(X, {}, {}, 0).bind(base.var)), X.shape[:2])
            order = np.argsort(-scores if base.op == "max" else scores, axis=-1, kind="stable")
            ranks = np.argmax(order == chosen[:, None], axis=-1) + 1
            if ranks.min() == ranks.max() >= 2:
                return base, int(ranks[0])
        return None

    def hop_chain(self, red: Reduction) -> tuple[int, tuple, list[Reduction]] | None:
        """``(m, pointer, hops)`` when ``red``'s value is ``m >= 1`` nested look-ups with one pointer
        (the same selection from each position to the next)."""
        hops: list[Reduction] = []
        pointer, var, node = None, red.var, red.value
        while isinstance(node, Reduction):
            if node.rank != 1 or node.exclude or node.variables() != {var} or node.score.nodes():
                return None
            key = self.selection(node)
            if pointer is not None and key != pointer:
                return None
            pointer = key
            hops.append(node)
            var, node = node.var, node.value
        if not hops or (node is not None and node.nodes()):
            return None
        return len(hops), pointer, hops

    # ---------------------------------------------------------------- the pass
    def visit(self, node: Node) -> tuple[int, tuple[int, ...]]:
        """``(job, extras)``: the job computing ``node``'s value, and jobs whose values are added to it."""
        if isinstance(node, Positions):
            return self.visit_positions(node), ()
        assert isinstance(node, Reduction)
        red = node
        i = self.index(red)
        desc = self.tree.describe(i)
        free = bool(red.free_variables())
        rank = self.effective_rank(red)
        masked = rank is not None and rank != red.rank  # the masked maxima belong to a rank-k job
        chain = self.hop_chain(red) if red.rank == 1 and not red.exclude else None
        additive, other = _score_reads(red.score, self.d)
        by_value = self.value_masked_rank(red, other) if rank == red.rank and chain is None else None
        if by_value is not None:  # the masks belong to the rank-k job, which compares the base's scores
            base, rank = by_value
            masked, other, additive = True, [n for n in base.score.nodes()], []
        lifted = [c for c in additive if red.var not in c.variables()]
        deps: set[int] = set()
        extras: list[int] = []
        for child in lifted:  # a shift of every score does not change the selection
            cj, cext = self.visit(child)
            if red.value is None:
                extras += [cj, *cext]  # computed beside the reduction, added to its value
        value_nodes = [] if red.value is None or chain is not None else (
            [red.value] if isinstance(red.value, Node) else list(red.value.nodes()))
        for child in [c for c in additive if c not in lifted] + other + value_nodes + \
                ([] if masked else list(red.exclude_nodes)):
            cj, cext = self.visit(child)
            deps |= {cj, *cext}
        deps_f = frozenset(deps)
        lifted_ids = {id(c) for c in lifted}
        excl = () if masked else tuple(sorted(e if isinstance(e, str) else repr(node_key(e, self.memo))
                                              for e in red.exclude))
        n_free = len(red.free_variables())
        if n_free >= 2:
            fv = ", ".join(sorted(red.free_variables()))
            reason = (f"'{desc}' compares {red.order} positions jointly: its query would be the tuple ({fv}), but a "
                      f"token holds one position, so it is not a top-1 retrieval (comparison order {red.order} > 2); "
                      f"covering all T^{n_free} tuples needs global aggregation")
            return self.new_job(("blocked", node_key(red, self.memo)), red, kind="blocked", deps=deps_f, free=True,
                                blocked="order", reason=reason), tuple(extras)
        k, op = (red.rank if rank is None else rank), (red.op if by_value is None else by_value[0].op)
        if k >= 2 and not free:
            available = self.T - (0 if masked else len(red.exclude_nodes))
            flipped = available + 1 - k
            if flipped < k:
                which = ("largest", "smallest") if op == "max" else ("smallest", "largest")
                self.notes.append(f"'{desc}': the {ordinal(k)} {which[0]} of {available} scores is the "
                                  f"{ordinal(flipped)} {which[1]}")
                k, op = flipped, ("min" if op == "max" else "max")
        sel = self.selection(base if by_value is not None else red, lifted_ids, op)
        if k >= 2 and free:
            reason = (f"'{desc}' selects the {ordinal(k)} {'largest' if op == 'max' else 'smallest'} score for each "
                      f"value of its free variable: its 'next score' pointer would compare three positions, so it is "
                      f"not a chase of top-1 retrievals")
            return self.new_job(("rank", k, sel, excl), red, kind="blocked", deps=deps_f, free=True, blocked="rank",
                                reason=reason, rank=k, op=op), tuple(extras)
        if k >= 2:
            which = "smaller" if op == "max" else "larger"
            return self.new_job(("rank", k, sel, excl), red, kind="chain", deps=deps_f, free=False, hops=k - 1,
                                rank=k, op=op, pointer=f"next_{self.tree.info[i].label}",
                                description=f"{desc} ({ordinal(k)} {'largest' if op == 'max' else 'smallest'}: "
                                            f"{k - 1} look-up(s) of the next {which} score)"), tuple(extras)
        if chain is not None:
            m, pointer, hops = chain
            as_hop = n_free == 1 and sel == pointer  # the reduction is itself a look-up of the same pointer
            hop_index = self.index(hops[0])
            jid = self.new_job(("chain", sel, pointer, m), red, kind="chain", deps=deps_f, free=free,
                               hops=m + 1 if as_hop else m, doubling_only=as_hop, op=op,
                               pointer=self.tree.info[i if as_hop else hop_index].label,
                               pointer_node=i if as_hop else hop_index)
            job = self.jobs[jid]
            job.nodes = tuple(dict.fromkeys(job.nodes + tuple(self.index(h) for h in hops)))
            return jid, tuple(extras)
        return self.new_job(("retrieval", sel, excl), red, kind="retrieval", deps=deps_f, free=free, op=op), \
            tuple(extras)

    def visit_positions(self, node: Positions) -> int:
        i = self.index(node)
        if self.specific is None:
            self.specific = len(self.jobs)
            self.jobs.append(Job(id=self.specific, kind="specific", nodes=(i,), deps=frozenset(), free=False,
                                 label=self.tree.info[i].label, description="", positions=node.positions))
        else:
            job = self.jobs[self.specific]
            job.nodes += (i,)
            job.positions = tuple(sorted(set(job.positions) | set(node.positions)))
        job = self.jobs[self.specific]
        job.description = f"positions {set(job.positions)}"
        return self.specific


def canonicalize(tree: Tree, seq_len: int) -> Canonical:
    """The canonical jobs of ``tree`` at ``seq_len``, with each job's query class set from its consumers."""
    b = _Builder(tree, seq_len)
    terms = []
    for t in tree.terms:
        jid, extras = b.visit(t)
        terms.append(frozenset({jid, *extras}))
    jobs = b.jobs
    needed = Canonical(tree, seq_len, jobs, tuple(terms), ()).closure(set().union(*terms))
    classes: dict[int, set[str]] = {j: set() for j in needed}
    for ids in terms:
        for j in ids:
            classes[j].add(CLS)
    for j in sorted(needed, reverse=True):  # consumers before their dependencies
        job = jobs[j]
        job.query = TOKENS if job.free else (ALL if classes[j] >= {CLS, TOKENS} else next(iter(classes[j]), CLS))
        for dep in job.deps:
            classes[dep] |= {CLS, TOKENS} if job.query == ALL else {job.query}
    return Canonical(tree, seq_len, jobs, tuple(terms), tuple(dict.fromkeys(b.notes)))


def doubling_layers(hops: int) -> int:
    """Layers a pointer chase of ``hops`` look-ups needs at the tokens with pointer doubling:
    ``ceil(log2(hops + 1))`` (each layer doubles the run of pointers every token holds)."""
    return math.ceil(math.log2(hops + 1))
