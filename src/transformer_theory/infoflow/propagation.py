"""Information sets ``I(t, l)`` under the best schedule, and the propagation mode of every step.

InfoFlow (Yu et al. 2026, as summarised) replaces the hidden state of token ``t`` after layer ``l`` by
the set ``I(t, l)`` of input positions whose content is efficiently accessible there. The update
formulas below are **a reconstruction** (see the book's page on how it reconstructs the papers) that
follows the paper's descriptions of its three modes:

* initial condition ``I(t, 0) = {t}``, ``I(CLS, 0) = {}``; the residual stream keeps information;
* **max-position retrieval** (one head): ``I(t, l) ⊇ I(t, l-1) ∪ I(s*(t), l-1)`` with ``s*(t)`` the
  top-1 position of the head's score at query ``t``: the query inherits the whole information set of
  the token it attends to (so a pointer chase doubles its reach every layer, Sanford et al. 2024);
* **global aggregation**: ``I(q, l) ⊇ ∪_s I(s, l-1)`` (coupled information, cost law of Theorem 3);
* **specific-position aggregation** (needs PE): ``I(q, l) ⊇ ∪_{p in P} I(p, l-1)``.

Retrieved positions are symbolic: ``s1*(t)`` is the position selected by the reduction labelled
``s1`` for query ``t``; ``t1*`` one selected for the CLS token; they nest (``s1*(t1*)``), and a pointer
applied ``n`` times is written ``p*^n(t)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Union

import numpy as np

from transformer_theory.checks import is_integer
from transformer_theory.infoflow.architecture import Architecture
from transformer_theory.infoflow.schedule import ALL, CLS, TOKENS, Bottleneck, Schedule, find_schedule
from transformer_theory.infoflow.trees import EvalContext, Reduction, Tree


@dataclass(frozen=True)
class Var:
    """The generic token of a template set (``t``)."""

    name: str = "t"

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class Sym:
    """A retrieved position: the top-1 position of reduction ``label`` for query ``arg``."""

    label: str
    arg: "PosExpr | None" = None

    def __str__(self) -> str:
        n, inner = 1, self.arg
        while isinstance(inner, Sym) and inner.label == self.label:
            n, inner = n + 1, inner.arg
        power = f"^{n}" if n > 1 else ""
        return f"{self.label}*{power}" + ("" if inner is None else f"({inner})")


PosExpr = Union[int, Var, Sym]


def _follow(label: str, times: int, base: "PosExpr | None") -> PosExpr:
    """The pointer ``label`` applied ``times`` times from ``base``."""
    out = base
    for _ in range(times):
        out = Sym(label, out)
    assert out is not None
    return out


def _subst(e: PosExpr, value: PosExpr) -> PosExpr:
    if isinstance(e, Var):
        return value
    if isinstance(e, Sym) and e.arg is not None:
        return Sym(e.label, _subst(e.arg, value))
    return e


def _subst_set(s: frozenset, value: PosExpr) -> frozenset:
    return frozenset(_subst(e, value) for e in s)


@dataclass(frozen=True)
class Step:
    """One propagation step: at ``layer``, ``head`` moves information to the ``query`` tokens.

    A retrieval lands on the top-1 position of node ``label`` (``pointer`` empty), or on the pointer
    applied ``offset`` times from the query token (``base`` empty: pointer doubling) or from the
    position selected by node ``base`` (following the pointer after the start of a chase).
    """

    layer: int
    head: int | None  # None: no free head, the aggregation shares a head (softened attention)
    mode: str         # "retrieval" | "aggregation" | "specific"
    query: str        # "CLS" | "tokens" | "all"
    label: str        # node label ("s1"), or "global"
    description: str
    positions: tuple[int, ...] = ()
    pointer: str = ""
    offset: int = 0
    base: str = ""
    job: int = -1

    def target(self, query_token: "PosExpr | None") -> PosExpr:
        """The retrieved position for a query token (``None``: a position retrieved for CLS)."""
        if not self.pointer:
            return Sym(self.label, query_token)
        start = query_token if not self.base else Sym(self.base, query_token)
        return _follow(self.pointer, self.offset, start)


class Propagation:
    """Information sets of every token (1..T and ``"CLS"``) at every layer 0..L."""

    def __init__(self, schedule: Schedule, steps: list[Step]):
        self.schedule = schedule
        self.tree = schedule.tree
        self.arch = schedule.arch
        self.seq_len = schedule.seq_len
        self.steps = steps
        T, L = self.seq_len, self.arch.n_layers
        t_set: frozenset = frozenset({Var()})
        c_set: frozenset = frozenset()
        self._tmpl = {(TOKENS, 0): t_set, (CLS, 0): c_set}
        for layer in range(1, L + 1):
            new_t, new_c = set(t_set), set(c_set)
            for st in (s for s in steps if s.layer == layer):
                if st.mode == "retrieval":
                    if st.query == TOKENS:
                        new_t |= _subst_set(t_set, st.target(Var()))
                    if st.query in (CLS, ALL):
                        new_c |= _subst_set(t_set, st.target(None))
                    if st.query == ALL:
                        new_t |= _subst_set(t_set, st.target(None))
                else:
                    sources = st.positions if st.mode == "specific" else tuple(range(1, T + 1))
                    gathered = set().union(*(_subst_set(t_set, p) for p in sources))
                    if st.query in (CLS, ALL):
                        new_c |= gathered
                    if st.query in (TOKENS, ALL):
                        new_t |= gathered
            t_set, c_set = frozenset(new_t), frozenset(new_c)
            self._tmpl[(TOKENS, layer)] = t_set
            self._tmpl[(CLS, layer)] = c_set

    # ------------------------------------------------------------------ access
    def _check(self, token: int | str, layer: int) -> None:
        if not is_integer(layer) or not 0 <= layer <= self.arch.n_layers:
            raise ValueError(f"layer = {layer!r}: layers are 0..{self.arch.n_layers}")
        if token != CLS and not (is_integer(token) and 1 <= token <= self.seq_len):
            raise ValueError(f"token = {token!r}: tokens are 1..{self.seq_len} or 'CLS'")

    def info_set(self, token: int | str, layer: int) -> frozenset:
        """``I(token, layer)``: concrete ints and symbolic retrieved positions."""
        self._check(token, layer)
        if token == CLS:
            return self._tmpl[(CLS, layer)]
        return _subst_set(self._tmpl[(TOKENS, int(layer))], int(token))

    def labels(self, token: int | str, layer: int) -> set[str]:
        """``I(token, layer)`` as strings, e.g. ``{'5', 's1*(5)', 's2*(5)'}``."""
        return {str(e) for e in self.info_set(token, layer)}

    def template(self, layer: int) -> set[str]:
        """``I(t, layer)`` for the generic token ``t``, e.g. ``{'t', 's1*(t)', 's2*(t)'}``."""
        self._check(CLS, layer)
        return {str(e) for e in self._tmpl[(TOKENS, layer)]}

    @property
    def sets(self) -> dict[tuple[int | str, int], frozenset]:
        """Every ``(token, layer) -> I(token, layer)``, CLS included."""
        out = {}
        for layer in range(self.arch.n_layers + 1):
            for t in list(range(1, self.seq_len + 1)) + [CLS]:
                out[(t, layer)] = self.info_set(t, layer)
        return out

    def modes(self, token: int | str, layer: int) -> list[str]:
        """Propagation modes that update ``token`` at ``layer`` (empty: residual only)."""
        self._check(token, layer)
        cls_ = CLS if token == CLS else TOKENS
        return [s.mode for s in self.steps if s.layer == layer and (s.query == cls_ or s.query == ALL)]

    @property
    def bottlenecks(self) -> tuple[Bottleneck, ...]:
        return self.schedule.bottlenecks

    def retrieved(self, step: Step, X: np.ndarray) -> np.ndarray:
        """Concrete 1-based positions a retrieval step lands on for one input ``X`` (shape ``(T, d)``):
        one per token for ``tokens`` queries, one (shape ``()``) for ``CLS``/``all`` queries."""
        if step.mode != "retrieval":
            raise ValueError(f"step '{step.description}' is a {step.mode} step, not a retrieval")
        X = np.asarray(X, dtype=np.float64)[None]
        job = self.schedule.canonical.jobs[step.job]
        node = self.tree.info[job.representative].node
        if job.kind == "chain" and job.rank >= 2:  # a k-th largest: top-1 start, next-score pointer
            assert isinstance(node, Reduction)
            scores = node.score.evaluate(EvalContext(X, {}, {}, 0).bind(node.var))[0]
            order = np.argsort(-scores if job.op == "max" else scores, kind="stable")
            pointer = np.empty(len(order), dtype=np.intp)
            pointer[order] = np.append(order[1:], order[-1])  # the next score; the last points to itself
            start = order[0]
        else:
            if step.pointer:
                pointer = self.tree.selected_positions(X, job.pointer_node)[0]
            if not step.pointer or step.base:
                start = self.tree.selected_positions(X, job.representative)[0]
        if not step.pointer:
            return start + 1
        pos = np.arange(X.shape[1]) if not step.base else start
        for _ in range(step.offset):
            pos = pointer[pos]
        return np.asarray(pos) + 1

    def __repr__(self) -> str:
        lines = [f"Propagation({self.tree.name} on {self.arch}, T={self.seq_len})"]
        for layer in range(self.arch.n_layers + 1):
            lines.append(f"  l={layer}: I(t)={sorted(self.template(layer))}  I(CLS)={sorted(self.labels(CLS, layer))}"
                         if len(self._tmpl[(CLS, layer)]) <= 12 else
                         f"  l={layer}: I(t)={sorted(self.template(layer))}  |I(CLS)|={len(self._tmpl[(CLS, layer)])}")
        return "\n".join(lines)


def steps_of(schedule: Schedule) -> list[Step]:
    """Retrieval / specific steps of the placements, plus one global aggregation at the CLS token if
    some term could not be scheduled (at the last layer with a free CLS head, else shared)."""
    steps = []
    jobs = schedule.canonical.jobs
    for p in schedule.placements:
        job = jobs[p.job]
        base = job.label if p.role == "follow" else ""
        steps.append(Step(p.layer, p.head, p.mode, p.query, p.label, p.description, job.positions,
                          p.pointer, p.offset, base, p.job))
    if schedule.failed_terms:
        L = schedule.arch.n_layers
        layer, head = L, None
        for ell in range(L, 0, -1):
            free = schedule.free_heads(ell, CLS)
            if free > 0:
                layer, head = ell, schedule.arch.heads[ell - 1] - free + 1
                break
        terms = ", ".join(str(t) for t in schedule.failed_terms)
        steps.append(Step(layer, head, "aggregation", CLS, "global",
                          f"global aggregation for term(s) {terms}"))
    steps.sort(key=lambda s: (s.layer, s.head if s.head is not None else 10**9, s.query))
    return steps


def propagate(target: Tree, arch: Architecture, seq_len: int) -> Propagation:
    """Information sets ``I(t, l)`` for every token (CLS included) and layer under the best schedule
    found by :func:`~transformer_theory.infoflow.schedule.find_schedule`, with the mode of each step."""
    schedule = find_schedule(target, arch, seq_len)
    return Propagation(schedule, steps_of(schedule))
