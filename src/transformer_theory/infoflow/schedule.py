"""Scheduling a comparison tree onto an architecture: every job to (layer, head) by top-1 retrieval.

The prediction rule of InfoFlow (Yu et al. 2026, as summarised), **a reconstruction** (see the book's
page on how it reconstructs the papers). The tree is first put in canonical form
(:mod:`~transformer_theory.infoflow.canonical`); then

* a *retrieval* job (a rank-1 reduction with at most one free variable, comparison order <= 2) is one
  **max-position retrieval**: its queries are the tokens of its free variable (``tokens``), or, without
  one, the tokens that need its value (``CLS`` for a term of the root, ``tokens``, or ``all``); its keys
  are the tokens of its bound variable;
* the *specific-position* job is one **specific-position aggregation** (needs positional encoding);
* a *chain* job is a **pointer chase**: a query token that attends to another inherits that token's
  information set, so each layer in which every token follows the pointer from the last position it
  holds doubles the run of positions it holds (``1, 2, 4, ...``: *doubling*); the job's own retrieval
  (the start of the chase) inherits the run its target holds, and each later layer in which its
  queries *follow* the pointer from their last position adds the run held at that layer. A k-th
  largest is the chase of ``k - 1`` "next smaller score" look-ups from the top-1 position. The chase
  is placed in consecutive layers (one run of doubling layers, the start, one run of follow layers);
* a job runs strictly after the jobs it reads;
* capacity: a head gives each query token at most one retrieval per layer, so at most ``h_l`` jobs per
  layer and query class (``all`` counts for both classes).

The search is exact (branch and bound over the jobs) and maximises first the number of terms of the
root placed completely, then the number of jobs placed; it stops after :data:`SEARCH_BUDGET` steps
(``Schedule.exact`` is then False). A term that cannot be placed is computed by **global
aggregation**; its *bottleneck* is the first job (dependencies first) that cannot be placed, with the
reason.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from transformer_theory.checks import positive_int
from transformer_theory.infoflow.architecture import Architecture
from transformer_theory.infoflow.canonical import ALL, CLS, TOKENS, Canonical, Job, canonicalize, doubling_layers
from transformer_theory.infoflow.trees import Positions, Reduction, Tree, ordinal

__all__ = ["CLS", "TOKENS", "ALL", "SEARCH_BUDGET", "Placement", "Bottleneck", "Schedule", "find_schedule",
           "validate"]

#: search steps before the exact search gives up (then ``Schedule.exact`` is False)
SEARCH_BUDGET = 200_000

#: a pointer chase is placed within its minimal number of layers plus this many
CHAIN_SLACK = 2


@dataclass(frozen=True)
class Placement:
    """One head's work at one layer.

    ``index``/``label``/``description`` name the tree node (a chain's pointer steps name the pointer);
    ``query`` is ``CLS``/``tokens``/``all``; ``mode`` is ``"retrieval"`` or ``"specific"``; ``role`` is
    ``"select"`` (the node's own top-1 retrieval), ``"double"`` (every token follows the pointer from
    the last position it holds, ``offset`` look-ups ahead) or ``"follow"`` (the job's queries follow the
    pointer from the last position they hold, ``offset`` look-ups after the selected one).
    """

    index: int
    label: str
    description: str
    layer: int
    head: int
    query: str
    mode: str
    job: int = -1
    role: str = "select"
    pointer: str = ""
    offset: int = 0


@dataclass(frozen=True)
class Bottleneck:
    """The job of a failed term that could not be scheduled, and why."""

    index: int
    label: str
    description: str
    term: int
    kind: str  # "order" | "rank" | "depth" | "capacity"
    reason: str
    job: int = -1


@dataclass
class Schedule:
    """Result of :func:`find_schedule`.

    ``exact`` is True when the search finished, so the schedule is optimal (most terms placed); False
    when it stopped after :data:`SEARCH_BUDGET` steps (``steps``): then a failed term might still be
    schedulable.
    """

    tree: Tree
    arch: Architecture
    seq_len: int
    canonical: Canonical
    placements: tuple[Placement, ...]
    complete_terms: tuple[int, ...]
    failed_terms: tuple[int, ...]
    bottlenecks: tuple[Bottleneck, ...]
    exact: bool
    steps: int = 0

    @property
    def feasible(self) -> bool:
        """Every term is computed by top-1 retrievals / specific positions (no global aggregation)."""
        return not self.failed_terms

    def free_heads(self, layer: int, query: str) -> int:
        """Heads of ``layer`` not used for ``query`` queries."""
        used = sum(1 for p in self.placements if p.layer == layer and p.query in (query, ALL))
        return self.arch.heads[layer - 1] - used


def validate(tree: Tree, arch: Architecture, seq_len: int) -> int:
    """The errors every InfoFlow entry point raises before any work; returns ``seq_len`` as an int."""
    if not isinstance(tree, Tree):
        raise ValueError(f"target must be a comparison Tree, got {type(tree).__name__}")
    if not isinstance(arch, Architecture):
        raise ValueError(f"arch must be an Architecture, got {type(arch).__name__}")
    seq_len = positive_int("seq_len", seq_len)
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
        if isinstance(node, Reduction) and node.rank + len(node.exclude) > seq_len:
            excl = f" after excluding {len(node.exclude)} position(s)" if node.exclude else ""
            raise ValueError(f"{tree.name}: '{node.describe()}' selects rank {node.rank}{excl}, which needs "
                             f"seq_len >= {node.rank + len(node.exclude)}, got seq_len = {seq_len}")
    return seq_len


# ----------------------------------------------------------------------------------------------
# placement options of one job
# ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _Option:
    """Heads a job uses: ``uses`` = ((layer, query class, role, offset), ...); runs in ``first..ready``."""

    uses: tuple[tuple[int, str, str, int], ...]
    first: int
    ready: int


def min_span(job: Job) -> float:
    """Fewest consecutive layers a job occupies, from its first head to its result (inf: blocked).

    A pointer chase of ``m`` look-ups at the tokens takes ``ceil(log2(m + 1))`` doubling layers; one
    whose queries start the chase holds at most ``2^W - 1`` positions after ``W`` layers (start at the
    first, the tokens double and the queries follow in every later one), so ``ceil(log2(m + 2))``.
    """
    if job.kind == "blocked":
        return float("inf")
    if job.kind != "chain":
        return 1
    return doubling_layers(job.hops) if job.doubling_only else math.ceil(math.log2(job.hops + 2))


def _chain_options(job: Job, L: int) -> list[_Option]:
    """Placements of a pointer chase within ``min_span + CHAIN_SLACK`` consecutive layers: one run of
    doubling layers (a head at every token), the start (a head at the job's queries), and follow
    layers (a head at the job's queries) until the queries hold ``hops + 1`` positions."""
    need = job.hops + 1  # positions ptr^0 .. ptr^hops
    width = int(min_span(job)) + CHAIN_SLACK
    out: dict[tuple, _Option] = {}
    if job.doubling_only:
        r = doubling_layers(job.hops)
        for f in range(1, L - r + 2):
            uses = tuple((f + i, TOKENS, "double", 2 ** i) for i in range(r))
            out[uses] = _Option(uses, f, f + r - 1)
        return list(out.values())
    q = job.query
    for f in range(1, L + 1):                                  # first doubling layer
        for a in range(0 if f == 1 else 1, min(width, L - f + 1) + 1):  # doubling layers f .. f+a-1
            run = [1]                                          # run[l]: positions a token holds after layer l
            for layer in range(1, L + 1):
                run.append(run[-1] * (2 if f <= layer < f + a else 1))
            for lc in range(max(1, f - width), min(L, f + width) + 1):  # the start of the chase
                held = run[lc - 1]
                uses = [(layer, TOKENS, "double", run[layer - 1]) for layer in range(f, f + a)]
                uses.append((lc, q, "select", 0))
                last = lc
                while held < need and last < L:
                    last += 1
                    uses.append((last, q, "follow", held))
                    held += run[last - 1]
                first = min(f if a else lc, lc)
                if held < need or (a and f + a - 1 >= last) or last - first + 1 > width:
                    continue                                   # too short, unread doubling, or too spread
                key = tuple(sorted(uses))
                out.setdefault(key, _Option(key, first, last))
    # keep the minimal ones: an option using a sub-multiset of another's heads dominates it
    opts = sorted(out.values(), key=lambda o: (len(o.uses), o.ready, o.first))
    heads = {o: Counter((layer, q) for layer, q, _, _ in o.uses) for o in opts}
    minimal: list[_Option] = []
    for o in opts:
        if not any(all(heads[o][k] >= v for k, v in heads[m].items()) for m in minimal):
            minimal.append(o)
    return minimal


def _options(job: Job, L: int) -> list[_Option]:
    if job.kind == "blocked":
        return []
    if job.kind == "chain":
        opts = _chain_options(job, L)
    else:
        opts = [_Option(((layer, job.query, "select", 0),), layer, layer) for layer in range(1, L + 1)]
    return sorted(opts, key=lambda o: (o.ready, o.first, len(o.uses)))


def _classes(q: str) -> tuple[str, ...]:
    return (CLS, TOKENS) if q == ALL else (q,)


def _fits(arch: Architecture, usage: dict[tuple[int, str], int], opt: _Option) -> bool:
    add: dict[tuple[int, str], int] = {}
    for layer, q, _, _ in opt.uses:
        for c in _classes(q):
            add[(layer, c)] = add.get((layer, c), 0) + 1
    return all(usage.get(k, 0) + v <= arch.heads[k[0] - 1] for k, v in add.items())


def _apply(usage: dict[tuple[int, str], int], opt: _Option, sign: int) -> None:
    for layer, q, _, _ in opt.uses:
        for c in _classes(q):
            usage[(layer, c)] = usage.get((layer, c), 0) + sign


# ----------------------------------------------------------------------------------------------
# the search
# ----------------------------------------------------------------------------------------------
class _Search:
    def __init__(self, can: Canonical, arch: Architecture, jobs: list[int], terms: list[frozenset[int]],
                 after: dict[int, int], usage: dict[tuple[int, str], int] | None = None,
                 ready: dict[int, int] | None = None, budget: int | None = None):
        self.can, self.arch, self.order, self.terms = can, arch, sorted(jobs), terms
        L = arch.n_layers  # a job must leave room for the jobs that read it
        self.options = {j: [o for o in _options(can.jobs[j], L) if o.ready <= L - after[j]] for j in self.order}
        self.usage = dict(usage or {})
        self.ready: dict[int, int | None] = dict(ready or {})
        self.choice: dict[int, _Option] = {}
        self.best: tuple[tuple[int, int], dict[int, _Option]] = ((-1, -1), {})
        self.budget = SEARCH_BUDGET if budget is None else budget
        self.steps, self.exact = 0, True
        self.member = {j: [t for t, ids in enumerate(terms) if j in ids] for j in self.order}
        self.dead = [0] * len(terms)

    def run(self) -> dict[int, _Option]:
        self.rec(0, 0)
        return self.best[1]

    def rec(self, i: int, placed: int) -> None:
        self.steps += 1
        if self.steps > self.budget:
            self.exact = False
            return
        alive = sum(1 for t in self.dead if t == 0)
        if (alive, placed + len(self.order) - i) <= self.best[0]:
            return
        if i == len(self.order):
            self.best = ((alive, placed), dict(self.choice))
            return
        j = self.order[i]
        deps = self.can.jobs[j].deps
        if all(self.ready.get(d) is not None for d in deps):
            lo = 1 + max((self.ready[d] for d in deps), default=0)
            for opt in self.options[j]:
                if opt.first < lo or not _fits(self.arch, self.usage, opt):
                    continue
                _apply(self.usage, opt, +1)
                self.ready[j], self.choice[j] = opt.ready, opt
                self.rec(i + 1, placed + 1)
                _apply(self.usage, opt, -1)
                del self.choice[j]
                if not self.exact:
                    self.ready[j] = None
                    return
        self.ready[j] = None
        for t in self.member[j]:
            self.dead[t] += 1
        self.rec(i + 1, placed)
        for t in self.member[j]:
            self.dead[t] -= 1


def find_schedule(tree: Tree, arch: Architecture, seq_len: int) -> Schedule:
    """The best retrieval schedule of ``tree`` on ``arch`` (exact for small trees), with bottlenecks."""
    seq_len = validate(tree, arch, seq_len)
    can = canonicalize(tree, seq_len)
    n_terms = len(tree.terms)
    term_jobs = [can.term_jobs(t) for t in range(1, n_terms + 1)]
    needed = frozenset().union(*term_jobs)
    after = _after(can, needed)
    search = _Search(can, arch, sorted(needed), term_jobs, after)
    choice = search.run()
    complete = tuple(t for t in range(1, n_terms + 1) if term_jobs[t - 1] <= choice.keys())
    failed = tuple(t for t in range(1, n_terms + 1) if t not in complete)
    fixed = {j: choice[j] for t in complete for j in term_jobs[t - 1]}
    bottlenecks = tuple(_bottleneck(can, arch, t, term_jobs[t - 1], fixed, after) for t in failed)
    return Schedule(tree, arch, seq_len, can, _placements(can, choice), complete, failed, bottlenecks,
                    search.exact, min(search.steps, search.budget))


def _placements(can: Canonical, choice: dict[int, _Option]) -> tuple[Placement, ...]:
    units = sorted(((layer, q, j, role, offset) for j, opt in choice.items() for layer, q, role, offset in opt.uses),
                   key=lambda u: (u[0], u[1] != ALL, u[2], u[4]))
    out = []
    next_head: dict[tuple[int, str], int] = {}
    for layer, q, j, role, offset in units:
        head = max(next_head.get((layer, c), 1) for c in _classes(q))
        for c in _classes(q):
            next_head[(layer, c)] = head + 1
        job = can.jobs[j]
        mode = "specific" if job.kind == "specific" else "retrieval"
        if role == "select":
            out.append(Placement(job.representative, job.label, job.description, layer, head, q, mode, j))
        else:
            index = job.pointer_node if job.pointer_node is not None else job.representative
            out.append(Placement(index, job.pointer, f"pointer of '{job.description}'", layer, head, q, mode, j,
                                 role, job.pointer, offset))
    return tuple(sorted(out, key=lambda p: (p.layer, p.head, p.query)))


# ----------------------------------------------------------------------------------------------
# bottlenecks
# ----------------------------------------------------------------------------------------------
def _earliest(can: Canonical, jobs: frozenset[int]) -> dict[int, float]:
    """Earliest layer at which each job can be ready, ignoring capacity and depth (inf: never)."""
    out: dict[int, float] = {}
    for j in sorted(jobs):
        out[j] = max((out[d] for d in can.jobs[j].deps), default=0) + min_span(can.jobs[j])
    return out


def _after(can: Canonical, jobs: frozenset[int]) -> dict[int, int]:
    """Fewest layers the jobs reading each job (within ``jobs``) need after it is ready."""
    out = {j: 0 for j in jobs}
    for j in sorted(jobs, reverse=True):
        span = min_span(can.jobs[j])
        for d in can.jobs[j].deps:
            if d in jobs and span < float("inf"):
                out[d] = max(out[d], int(span) + out[j])
    return out


def _bottleneck(can: Canonical, arch: Architecture, term: int, jobs: frozenset[int],
                fixed: dict[int, _Option], after: dict[int, int]) -> Bottleneck:
    """First job of a failed term (dependencies first) such that the term's jobs up to it cannot all be
    placed next to the complete terms, with the reason."""
    L = arch.n_layers
    usage: dict[tuple[int, str], int] = {}
    for opt in fixed.values():
        _apply(usage, opt, +1)
    ready = {j: o.ready for j, o in fixed.items()}
    earliest = _earliest(can, jobs)
    placed: dict[int, _Option] = {}
    prefix: set[int] = set()
    for j in sorted(jobs):
        if j in fixed:
            continue
        prefix.add(j)
        sub = sorted(can.closure(prefix) - fixed.keys())
        search = _Search(can, arch, sub, [frozenset(sub)], after, usage, ready, budget=max(1, SEARCH_BUDGET // 10))
        choice = search.run()
        if choice.keys() >= set(sub):
            placed = choice
            continue
        job = can.jobs[j]
        b = dict(index=job.representative, label=job.label, description=job.description, term=term, job=j)
        if job.kind == "blocked":
            return Bottleneck(kind=job.blocked, reason=job.reason, **b)
        if job.kind == "chain" and job.rank >= 2 and L == 1:
            which = "largest" if job.op == "max" else "smallest"
            return Bottleneck(kind="rank", reason=(
                f"'{job.description}' selects the position of the {ordinal(job.rank)} {which} score: in one layer "
                f"only the top-1 position is cheap to retrieve, the k-th (k >= 2) costs a parameter exponent "
                f"growing with T (InfoFlow Theorem 2, as summarised)"), **b)
        if earliest[j] + after[j] > L:
            return Bottleneck(kind="depth", reason=_depth_reason(job, earliest[j], after[j], L), **b)
        return Bottleneck(kind="capacity", reason=_capacity_reason(can, arch, job, earliest[j], L - after[j],
                                                                   {**fixed, **placed}), **b)
    raise AssertionError("a failed term has no bottleneck")  # pragma: no cover - by optimality


def _depth_reason(job: Job, earliest: float, after: int, L: int) -> str:
    if earliest == float("inf"):  # pragma: no cover - every job but a blocked one has a placement
        return f"'{job.description}' cannot be placed in any number of layers"
    if job.kind != "chain":
        inside = int(earliest) - 1
        return (f"'{job.description}' lies on a chain of {inside + 1 + after} nested comparisons ({inside} inside "
                f"it, {after} enclosing it), one layer each, but the architecture has L = {L}")
    what = (f"a chase of {job.hops} 'next score' look-up(s) from the top-1 position" if job.rank >= 2
            else f"a pointer chase of {job.hops} look-up(s)")
    later = f", and {after} more layer(s) are needed after it" if after else ""
    return (f"'{job.description}' is {what}: even with pointer doubling (a token that attends to another "
            f"inherits its information set) it is ready at layer {int(earliest)} at the earliest{later}, but the "
            f"architecture has L = {L}")


def _capacity_reason(can: Canonical, arch: Architecture, job: Job, lo: float, hi: int,
                     fixed: dict[int, _Option]) -> str:
    q = job.query
    classes = set(_classes(q)) | ({TOKENS} if job.kind == "chain" else set())
    who = []
    for layer in range(int(lo) if job.kind != "chain" else 1, hi + 1):
        users = sorted({can.jobs[j].description for j, o in fixed.items()
                        for lay, c, _, _ in o.uses if lay == layer and set(_classes(c)) & classes})
        who.append(f"layer {layer} has {arch.heads[layer - 1]} head(s)"
                   + (f", taken by {', '.join(repr(u) for u in users)}" if users else ""))
    where = {CLS: "the CLS token", TOKENS: "every token", ALL: "every token and CLS"}[q]
    if job.kind == "chain":
        return (f"'{job.description}' needs heads for its pointer steps (at every token) and its queries (at "
                f"{where}) in consecutive layers, but " + "; ".join(who))
    span = f"layer {int(lo)}" if lo == hi else f"one of layers {int(lo)}..{hi}"
    return f"'{job.description}' must run at {span} with queries at {where}, but " + "; ".join(who)

