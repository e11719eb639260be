"""Scheduling a comparison tree onto an architecture: every node to a (layer, head) by top-1 retrieval.

This is the prediction rule of ``infoflow-spec.md`` §2.6, **a reconstruction [INF]** of InfoFlow's
framework (Yu et al. 2026, as summarised):

* a :class:`~transformer_theory.infoflow.trees.Reduction` with rank 1 and at most one free variable
  (comparison order <= 2) is one **max-position retrieval**: its queries are the tokens indexed by
  its free variable (``tokens``), or the CLS token if it has none and is a term of the root
  (``CLS``), or every token if it has none but a parent uses it (``all``); its keys are the tokens of
  its bound variable;
* a :class:`~transformer_theory.infoflow.trees.Positions` node is one **specific-position
  aggregation** (needs positional encoding);
* a node runs strictly after the nodes it uses, and early enough for the nodes enclosing it;
* capacity (§2.3): a head gives each query token at most one retrieval per layer, so at most
  ``h_l`` nodes per layer and query class (``all`` counts for both classes). For every configuration
  of the spec's check table this is the same as "at most h_l reductions per layer" of §2.6.

The search is exact (branch and bound over the placements of each term of the root) and maximises
first the number of terms placed completely, then the number of nodes placed. A term that cannot be
placed is computed by **global aggregation**; its *bottleneck* is the first node (children first)
that cannot be placed, with the reason.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Iterator

from transformer_theory.infoflow.architecture import Architecture
from transformer_theory.infoflow.trees import NodeInfo, Positions, Reduction, Tree

CLS, TOKENS, ALL = "CLS", "tokens", "all"

#: search nodes visited before the exact search gives up (then ``Schedule.exact`` is False)
SEARCH_BUDGET = 200_000


@dataclass(frozen=True)
class Placement:
    """A node executed at ``layer`` by ``head`` for the queries ``query`` (``CLS``/``tokens``/``all``)."""

    index: int
    label: str
    description: str
    layer: int
    head: int
    query: str
    mode: str  # "retrieval" or "specific"


@dataclass(frozen=True)
class Bottleneck:
    """The node of a failed term that could not be scheduled, and why."""

    index: int
    label: str
    description: str
    term: int
    kind: str  # "order" | "rank" | "depth" | "capacity"
    reason: str


@dataclass
class Schedule:
    """Result of :func:`find_schedule`."""

    tree: Tree
    arch: Architecture
    seq_len: int
    placements: dict[int, Placement]
    complete_terms: tuple[int, ...]
    failed_terms: tuple[int, ...]
    bottlenecks: tuple[Bottleneck, ...]
    exact: bool

    @property
    def feasible(self) -> bool:
        """Every term is computed by top-1 retrievals / specific positions (no global aggregation)."""
        return not self.failed_terms

    def free_heads(self, layer: int, query: str) -> int:
        """Heads of ``layer`` not used for ``query`` queries."""
        used = sum(1 for p in self.placements.values() if p.layer == layer and p.query in (query, ALL))
        return self.arch.heads[layer - 1] - used


def query_class(info: NodeInfo) -> str:
    """Which tokens act as queries when ``info``'s node runs."""
    if info.free:
        return TOKENS
    return CLS if info.parent is None else ALL


def _classes(q: str) -> tuple[str, ...]:
    return (CLS, TOKENS) if q == ALL else (q,)


def validate(tree: Tree, arch: Architecture, seq_len: int) -> None:
    """The errors every InfoFlow entry point raises before any work."""
    if not isinstance(tree, Tree):
        raise ValueError(f"target must be a comparison Tree, got {type(tree).__name__}")
    if not isinstance(arch, Architecture):
        raise ValueError(f"arch must be an Architecture, got {type(arch).__name__}")
    if not isinstance(seq_len, numbers.Integral) or isinstance(seq_len, bool) or seq_len < 1:
        raise ValueError(f"seq_len = {seq_len!r} must be a positive integer")
    if tree.input_dim != arch.input_dim:
        raise ValueError(f"{tree.name} works on tokens of dimension d = {tree.input_dim}, "
                         f"but arch.input_dim = {arch.input_dim}")
    for info in tree.nodes():
        node = info.node
        if isinstance(node, Positions):
            if not arch.positional:
                raise ValueError(
                    f"{tree.name} needs positional=True: '{node.describe()}' is read by specific-position "
                    f"aggregation, which attends to fixed positions; without positional encoding attention "
                    f"cannot tell positions apart")
            if max(node.positions) > seq_len:
                raise ValueError(f"{tree.name}: '{node.describe()}' exceeds seq_len = {seq_len}")
        if isinstance(node, Reduction) and node.rank > seq_len:
            raise ValueError(f"{tree.name}: '{node.describe()}' has rank {node.rank} > seq_len = {seq_len}")


def _retrievable(info: NodeInfo) -> bool:
    node = info.node
    if isinstance(node, Positions):
        return True
    return isinstance(node, Reduction) and node.rank == 1 and len(info.free) <= 1


def _term_options(tree: Tree, nodes: list[NodeInfo], L: int) -> list[dict[int, int]]:
    """Every placement (node index -> layer) of a downward-closed subset of ``nodes`` (post-order)."""
    out: list[dict[int, int]] = []

    def rec(k: int, cur: dict[int, int]) -> None:
        if k == len(nodes):
            out.append(dict(cur))
            return
        info = nodes[k]
        rec(k + 1, cur)  # leave this node out
        if not _retrievable(info) or any(c not in cur for c in info.children):
            return
        lo = 1 + max((cur[c] for c in info.children), default=0)
        hi = L - info.ancestors
        for layer in range(lo, hi + 1):
            cur[info.index] = layer
            rec(k + 1, cur)
            del cur[info.index]

    rec(0, {})
    return out


def _fits(tree: Tree, arch: Architecture, usage: dict[tuple[int, str], int], option: dict[int, int]) -> bool:
    add: dict[tuple[int, str], int] = {}
    for idx, layer in option.items():
        for c in _classes(query_class(tree.info[idx])):
            add[(layer, c)] = add.get((layer, c), 0) + 1
    return all(usage.get(k, 0) + v <= arch.heads[k[0] - 1] for k, v in add.items())


def _apply(tree: Tree, usage: dict[tuple[int, str], int], option: dict[int, int], sign: int) -> None:
    for idx, layer in option.items():
        for c in _classes(query_class(tree.info[idx])):
            usage[(layer, c)] = usage.get((layer, c), 0) + sign


def find_schedule(tree: Tree, arch: Architecture, seq_len: int) -> Schedule:
    """The best retrieval schedule of ``tree`` on ``arch`` (exact for small trees), with bottlenecks."""
    validate(tree, arch, seq_len)
    L = arch.n_layers
    n_terms = len(tree.terms)
    term_nodes = {t: [i for i in tree.nodes() if i.term == t] for t in range(1, n_terms + 1)}
    options: dict[int, list[tuple[bool, dict[int, int]]]] = {}
    for t, nodes in term_nodes.items():
        opts = [(len(o) == len(nodes), o) for o in _term_options(tree, nodes, L)]
        opts.sort(key=lambda co: (not co[0], -len(co[1]), sorted(co[1].values())))
        options[t] = opts

    best: dict = {"score": (-1, -1), "choice": None}
    visited = [0]
    exact = [True]
    usage: dict[tuple[int, str], int] = {}
    choice: list[dict[int, int]] = []
    max_nodes = {t: len(ns) for t, ns in term_nodes.items()}

    def search(t: int, complete: int, placed: int) -> None:
        visited[0] += 1
        if visited[0] > SEARCH_BUDGET:
            exact[0] = False
            return
        if t > n_terms:
            if (complete, placed) > best["score"]:
                best["score"] = (complete, placed)
                best["choice"] = [dict(c) for c in choice]
            return
        remaining = n_terms - t + 1
        bound = (complete + remaining, placed + sum(max_nodes[u] for u in range(t, n_terms + 1)))
        if bound <= best["score"]:
            return
        for is_complete, opt in options[t]:
            if not _fits(tree, arch, usage, opt):
                continue
            _apply(tree, usage, opt, +1)
            choice.append(opt)
            search(t + 1, complete + is_complete, placed + len(opt))
            choice.pop()
            _apply(tree, usage, opt, -1)
            if not exact[0]:
                return

    search(1, 0, 0)
    chosen: list[dict[int, int]] = best["choice"] or [{} for _ in range(n_terms)]
    layer_of: dict[int, int] = {}
    for opt in chosen:
        layer_of.update(opt)
    complete_terms = tuple(t for t in range(1, n_terms + 1) if len(chosen[t - 1]) == len(term_nodes[t]))
    failed_terms = tuple(t for t in range(1, n_terms + 1) if t not in complete_terms)
    placements = _assign_heads(tree, layer_of)
    fixed: dict[tuple[int, str], list[int]] = {}
    for t in complete_terms:
        for idx, layer in chosen[t - 1].items():
            for c in _classes(query_class(tree.info[idx])):
                fixed.setdefault((layer, c), []).append(idx)
    bottlenecks = tuple(_bottleneck(tree, arch, term_nodes[t], fixed) for t in failed_terms)
    return Schedule(tree, arch, int(seq_len), placements, complete_terms, failed_terms, bottlenecks, exact[0])


def _assign_heads(tree: Tree, layer_of: dict[int, int]) -> dict[int, Placement]:
    out: dict[int, Placement] = {}
    by_layer: dict[int, list[int]] = {}
    for idx, layer in layer_of.items():
        by_layer.setdefault(layer, []).append(idx)
    for layer, idxs in by_layer.items():
        idxs.sort(key=lambda i: (query_class(tree.info[i]) != ALL, i))
        next_head = {CLS: 1, TOKENS: 1}
        for i in idxs:
            q = query_class(tree.info[i])
            head = max(next_head[c] for c in _classes(q))
            for c in _classes(q):
                next_head[c] = head + 1
            info = tree.info[i]
            mode = "specific" if isinstance(info.node, Positions) else "retrieval"
            out[i] = Placement(i, info.label, tree.describe(i), layer, head, q, mode)
    return dict(sorted(out.items()))


def _subtree(tree: Tree, idx: int) -> Iterator[int]:
    for c in tree.info[idx].children:
        yield from _subtree(tree, c)
    yield idx


def _bottleneck(tree: Tree, arch: Architecture, nodes: list[NodeInfo],
                fixed: dict[tuple[int, str], list[int]]) -> Bottleneck:
    """First node of a failed term (children first) whose subtree cannot be placed next to the
    complete terms, with the reason."""
    usage = {k: len(v) for k, v in fixed.items()}
    L = arch.n_layers
    for info in nodes:
        sub = [tree.info[i] for i in _subtree(tree, info.index)]
        if any(len(o) == len(sub) and _fits(tree, arch, usage, o) for o in _term_options(tree, sub, L)):
            continue
        node, desc = info.node, tree.describe(info.index)
        q = query_class(info)
        if isinstance(node, Reduction) and node.rank > 1:
            which = "largest" if node.op == "max" else "smallest"
            return Bottleneck(info.index, info.label, desc, info.term, "rank",
                              f"'{desc}' selects the position of the {_ordinal(node.rank)} {which} score: only the "
                              f"top-1 position is cheap to retrieve, the k-th (k >= 2) costs a parameter exponent "
                              f"growing with T (InfoFlow Theorem 2, as summarised)")
        if len(info.free) >= 2:
            fv = ", ".join(sorted(info.free))
            return Bottleneck(info.index, info.label, desc, info.term, "order",
                              f"'{desc}' compares {node.order} positions jointly: its query would be the tuple "
                              f"({fv}), but a token holds one position, so it is not a top-1 retrieval "
                              f"(comparison order {node.order} > 2); covering all T^{len(info.free)} tuples "
                              f"needs global aggregation")
        lo, hi = info.height, L - info.ancestors
        if lo > hi:
            chain = info.height + info.ancestors
            return Bottleneck(info.index, info.label, desc, info.term, "depth",
                              f"'{desc}' lies on a chain of {chain} nested comparisons ({info.height - 1} inside "
                              f"it, {info.ancestors} enclosing it), one layer each, but the architecture has L = {L}")
        who = []
        for layer in range(lo, hi + 1):
            users = sorted({tree.describe(i) for c in _classes(q) for i in fixed.get((layer, c), [])})
            who.append(f"layer {layer} has {arch.heads[layer - 1]} head(s)"
                       + (f", taken by {', '.join(repr(u) for u in users)}" if users else ""))
        where = {CLS: "the CLS token", TOKENS: "every token", ALL: "every token and CLS"}[q]
        span = f"layer {lo}" if lo == hi else f"one of layers {lo}..{hi}"
        return Bottleneck(info.index, info.label, desc, info.term, "capacity",
                          f"'{desc}' must run at {span} with queries at {where}, but " + "; ".join(who))
    raise AssertionError("a failed term has no bottleneck")  # pragma: no cover - by optimality


def _ordinal(k: int) -> str:
    return f"{k}{'tsnrhtdd'[(k // 10 % 10 != 1) * (k % 10 < 4) * k % 10::4]}"
