"""Theorem 1.6 (hardmax): an explicit transformer interpolating a sequence dataset exactly.

Reconstruction (the paper's text was not available; see the book's page on how it reconstructs the
papers) of the paper's four stages. An embedding block ``x ↦ η x + τ₀`` maps the cloud into the box
B = [1, 2]^d first, and again after a non-empty separation (:meth:`~.builder.Construction.embed`):

1. **separation** (Lemma 4.1, Fig. 6): rank-one attention ``A = v vᵀ``, ``ρ = 1 − c``, ``V = c I``
   contracts each sequence toward its v-leader; a hat FF first makes a token that distinguishes two
   overlapping sequences the leader of one of them, so their shared tokens split. We stop as soon as
   every sequence owns ``m_j`` tokens no other sequence holds (only the leaders must be private), at
   most N − 1 blocks and 0 when that already holds; at most N − 1 more for near-duplicate tokens;
2. **leader selection** (Fig. 7): M hat FFs; one leader per sequence goes to the diagonal region P,
   the others to the negative-orthant sphere;
3. **collapse** (Lemmas 4.2, 4.3): one SA with ``A = I``, ``ρ = 0``, ``V = I`` sends every box token
   onto its sequence's P-leader and fixes the leaders;
4. **interpolation**: M hat FFs move the M remaining points onto the targets.

Blocks: ``S + 2M + 2`` (``+ 1`` when S > 0) with ``S ≤ 2(N − 1)``, never more than the paper's ``2M + 2N + 1``.

Every evaluation path interpolates, not only the structured one whose rounding the construction tracks
bit for bit: the contraction coefficients shrink so that S blocks do not crush the cloud
(:func:`separation_coefficient`), each hat's window and direction are chosen for its dense evaluation
(:mod:`.hat`), and the hats of stages 2 and 4 peel the points (:func:`move_all`) so that the points later
layers need exactly sit where every neuron of the hat is zero.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from transformer_theory.interpolation.arithmetic import DYADIC_BITS, distinct, project, to_float
from transformer_theory.interpolation.attention import SelfAttention
from transformer_theory.interpolation.construction.bounds import paper_num_blocks_hardmax
from transformer_theory.interpolation.construction.builder import Construction
from transformer_theory.interpolation.construction.configuration import Configuration
from transformer_theory.interpolation.construction.hat import FEW_DRAWS, best_direction, hat_along, peel_move, rounding_floor
from transformer_theory.interpolation.construction.peeling import move_all
from transformer_theory.interpolation.construction.geometry import (
    BELOW_MARGIN,
    below_box,
    diagonal_slots,
    side,
    sphere_arc,
    sphere_slots,
)
from transformer_theory.interpolation.dataset import SequenceDataset
from transformer_theory.interpolation.linear_maps import RankOne, ScaledIdentity
from transformer_theory.interpolation.transformer import Transformer

#: Random redraws of a separation coefficient c or of the slots before giving up (never needed in tests).
MAX_REDRAWS = 20
#: Tokens closer than NEAR times the cloud's width count as shared by the separation: a hat isolating one of
#: them would need a window that narrow, and its dense evaluation rounds like ε_mach / NEAR times the width.
NEAR = 1e-6
#: Partners k tried per sequence j when looking for a token that a wide hat window can isolate.
PAIRS_TRIED = 8
#: Angle (radians) between the interpolation's sweep direction and the middle of the sphere slots' arc.
SWEEP_TILT = 0.5


def build_hardmax(
    dataset: SequenceDataset, *, seed: int = 0, match_paper_depth: bool = False, exact: bool = False
) -> Transformer:
    """The hardmax interpolating transformer of Theorem 1.6 (reconstruction, see module docstring)."""
    c = Construction(dataset, exact, np.random.default_rng(seed))
    c.embed()
    with c.stage("separation"):
        separate(c)
    if len(c.stages["separation"]):  # separation pushed tokens out of the box along v
        c.embed("re-embedding")
    with c.stage("leader_selection"):
        leaders, arc = select_leaders(c)
    with c.stage("collapse"):
        collapse(c, leaders)
    with c.stage("interpolation"):
        interpolate(c, leaders, arc)
    c.check_interpolation()
    depth = paper_num_blocks_hardmax(dataset.N, dataset.total_output_length) if match_paper_depth else None
    return c.transformer(depth)


def private_counts(config: Configuration) -> np.ndarray:
    """For every sequence, the number of its positions held by no other sequence."""
    private_points = config.holders() == 1
    counts = np.zeros(len(config.segments.lengths), dtype=int)
    pairs = distinct(config.segments.sequence_of * len(config.points) + config.token_point)
    seq, point = np.divmod(pairs, len(config.points))
    np.add.at(counts, seq[private_points[point]], 1)
    return counts


def _groups(config: Configuration) -> np.ndarray:
    """Group labels 0, 1, ... of the sequences: sequences sharing a position are in one group (connected
    components), so sequences with different labels are disjoint."""
    N = len(config.segments.lengths)
    parent = np.arange(N)

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    point, seq = np.divmod(distinct(config.token_point * N + config.segments.sequence_of), N)
    for a in np.flatnonzero(point[1:] == point[:-1]):  # consecutive holders of one position
        parent[root(int(seq[a]))] = root(int(seq[a + 1]))
    return np.unique([root(i) for i in range(N)], return_inverse=True)[1].reshape(-1)


def separation_coefficient(c: Construction, block: int) -> Any:
    """The contraction coefficient of separation block ``block`` (0, 1, ...): random in
    ``[0.2, 0.4)·2^-⌊log₂(block + 1)⌋``, a dyadic number (exact in both backends).

    Lemma 4.1's block maps each sequence by ``x ↦ (1 − c) x + c ℓ``: distances within a group shrink by
    ``1 − c`` per block. A fixed ``c ≈ 0.3`` makes them ``0.7^S`` after S blocks, below float64 resolution
    for S ≈ 90 (heavy sharing needs up to N − 1 blocks). With ``c`` halving at every power of two the total
    contraction is only about ``S^-0.43`` (0.05 at S = 1000), while the split of a shared token, about ``c``
    times the push, shrinks like ``1/S``."""
    return c.backend.dyadic(c.rng, 0.2, 0.4) / 2 ** ((block + 1).bit_length() - 1)


def separate(c: Construction) -> None:
    """Stage 1 (Fig. 6): blocks ``[hat FF moving z far along v] → [SA: A = v vᵀ, ρ = 1 − c, V = c I]``
    until every sequence j owns ``m_j`` private positions.

    Groups are the connected components of "shares a position" (:func:`_groups`). Each block takes two
    overlapping sequences j, k (same group), a position z in exactly one of them, and makes z the unique
    v-maximiser of the sequences holding it, far above everything; the SA maps each sequence by
    ``x ↦ (1 − c) x + c ℓ`` with ℓ its v-leader (the average of tied maximisers), so a token shared by j
    and k splits and they end in different groups. Hence at most N − 1 such blocks. ``c``
    (:func:`separation_coefficient`) is redrawn in the (non-generic) case of an accidental coincidence.

    Near-duplicates count as shared (:data:`NEAR`): at most N − 1 further blocks separate sequences with
    tokens closer than ``NEAR`` times the cloud's width, so that those tokens end about ``c`` apart instead of
    needing hats of that tiny width later (whose dense evaluation rounds like ``1/width``). A pair that no token
    tells apart at that resolution (equal sets up to ``NEAR``) keeps its near-duplicates. A pair that only
    near-duplicates tell apart takes two blocks (:func:`_lift`: a wide hat lifts the near-duplicates onto the
    hull, then the narrow hat isolating one of them has every other position outside their class on its zero
    side); the blocks for near-duplicates stop where they would exceed S ≤ 2(N − 1) in all.
    """
    backend, rng = c.backend, c.rng
    start = len(c.blocks)
    v = backend.dyadic(rng, 1, 2, size=c.d)  # positive entries: v·x > 0 on the box [1, 2]^d
    labels = _groups(c.config)
    block = near_blocks = 0
    budget = 2 * (len(c.m) - 1)  # blocks: at most N − 1 pairs without private positions, two blocks each
    while True:
        config = c.config
        classes = config.near_classes(NEAR)
        near = near_blocks < len(c.m) - 1 and len(c.blocks) - start < budget
        pair = _overlapping_pair(config, classes, c.m, near=near)
        if pair is None:
            return
        j, k, candidates = pair
        near_blocks += int(private_counts(config)[j] >= c.m[j])
        # a candidate on the hull of all positions is moved with every other one on its hat's zero side
        others = np.setdiff1d(np.arange(len(config.points)), candidates)
        choice = peel_move(config.points, candidates, others, lambda: backend.gaussian_direction(rng, c.d), FEW_DRAWS)
        if (choice is None or not choice[3]) and not (np.bincount(classes)[classes[candidates]] == 1).any():
            choice = _lift(c, candidates, classes) or choice  # only near-duplicates tell j and k apart
            config = c.config
        if choice is not None and choice[3]:
            (z, u, gap), members = choice[:3], None
        else:  # the candidate whose best hat rounds least in a dense evaluation; one with near-duplicates
            tries = []  # moves those the other sequence lacks along (an isolating window would be as narrow)
            for z in candidates[:PAIRS_TRIED]:
                other = config.points_of(k if z in config.points_of(j) else j)
                members = np.setdiff1d(np.flatnonzero(classes == classes[z]), other)
                best = best_direction(config.points, int(z), rng, members)
                if best is None:  # a position of the other sequence lies between them along every direction
                    members, best = np.array([z]), best_direction(config.points, int(z), rng)
                if best is not None:
                    tries.append((int(z), members, *best))
            if not tries:
                raise RuntimeError(f"separation: no direction isolates a position telling sequences {j} and {k} apart")
            z, members, u, gap = max(tries, key=lambda t: t[4])[:4]
        top = project(config.points, v).max()
        z_new = config.points[z] + v * ((top + 1 - project(config.points[z : z + 1], v)[0]) / project(v[None, :], v)[0])
        ff = hat_along(config.points, z, z_new, u, gap, members)
        after_ff = config.after_ff(ff)
        for _ in range(MAX_REDRAWS):
            coef = separation_coefficient(c, block)
            sa = SelfAttention(rho=1 - coef, V=ScaledIdentity(coef), A=RankOne(v, v))
            after = after_ff.after_sa(sa)
            new_labels = _groups(after)
            if new_labels[j] != new_labels[k] and new_labels.max() >= labels.max() + (labels[j] == labels[k]):
                break
        else:
            raise RuntimeError("separation: every coefficient c produced a coincidence")
        c.emit(ff, sa, after)
        labels, block = new_labels, block + 1


def _lift(c: Construction, candidates: np.ndarray, classes: np.ndarray) -> tuple[int, np.ndarray, Any, bool] | None:
    """For candidates that only a window as narrow as their near-duplicates' gap isolates: a block whose hat
    (window as wide as the class's gap to the rest) lifts the near-duplicate class of a candidate z along a
    direction u until z lies 1 above every other position. Returns z's position after that block, u, z's gap
    along u and ``True``: the narrow hat at z along u that follows has every position outside the class on its
    zero side. Returns ``None`` (nothing emitted) if no hat isolates the class of any candidate.

    A hat of window ε moves the points on its active side by about ``ε_mach·|δ|·extent/ε`` in a dense
    evaluation: for ε the near-duplicates' gap and the cloud on the active side, that is more than their gap
    and than the tolerance, and inside the cloud no direction keeps every point on the zero side. After the
    lift only members of z's class can lie on the narrow hat's active side, within the class's diameter of z;
    u maximises z's gap over that extent among random draws (:func:`~.hat.peel_move` on the class alone), so
    the rounding stays near ``ε_mach·|δ|``. z need not be extreme in its class: the contraction of a sequence
    toward a leader with a near-duplicate in it puts the near-duplicate's image on the segment between them,
    where another sequence may hold only the leader. The lifting hat keeps the points with near-duplicates off
    its active side where a direction allows it (:func:`~.hat.best_direction`)."""
    config = c.config
    fragile = np.flatnonzero(np.bincount(classes)[classes] > 1)
    floor = rounding_floor(config.points)
    for z in candidates[:PAIRS_TRIED]:
        members = np.flatnonzero(classes == classes[z])
        lifting = best_direction(config.points, int(z), c.rng, members, fragile)
        narrow = peel_move(config.points[members], np.flatnonzero(members == z), np.empty(0, dtype=np.intp),
                           lambda: c.backend.gaussian_direction(c.rng, c.d), floor=floor)
        if lifting is None or narrow is None:
            continue
        u = narrow[1]
        token = int(np.flatnonzero(config.token_point == z)[0])
        s = project(config.points, u)
        lifted = config.points[z] + u * ((s.max() - s[z] + 1) / project(u[None, :], u)[0])
        c.emit(hat_along(config.points, int(z), lifted, *lifting[:2], members), c.identity_sa())
        z = int(c.config.token_point[token])
        s = project(c.config.points, u)
        return z, u, np.abs(np.delete(s - s[z], z)).min(), True
    return None


def _overlapping_pair(config: Configuration, classes: np.ndarray, m: np.ndarray, near: bool):
    """The next pair to separate: ``(j, k, positions that tell them apart)``, or ``None``.

    First a sequence j with fewer than m_j private positions and a sequence k sharing one of them (so of j's
    group); then, if ``near`` and with the near-duplicate ``classes`` of the positions merged, a sequence j
    with fewer than m_j private classes and a sequence k holding one of them. The positions returned are each
    in exactly one of j and k and preferably in a class of their own (a hat can isolate them with a wide
    window) and not in a class of the other sequence; a near pair is only taken with such a position.
    Among each j's first :data:`PAIRS_TRIED` partners k."""
    coarse = config.coarse(classes)
    isolated = np.bincount(classes)[classes] == 1
    seq_of = config.segments.sequence_of
    for fine, view in ((True, config), (False, coarse))[: 2 if near else 1]:
        fallback = None
        for j in np.flatnonzero(private_counts(view) < m):
            others = np.isin(view.token_point, view.points_of(int(j))) & (seq_of != j)
            for k in np.unique(seq_of[others])[:PAIRS_TRIED]:
                only_j = np.setdiff1d(config.points_of(int(j)), config.points_of(int(k)))
                only_k = np.setdiff1d(config.points_of(int(k)), config.points_of(int(j)))
                apart = np.concatenate([only_j[~np.isin(classes[only_j], coarse.points_of(int(k)))],
                                        only_k[~np.isin(classes[only_k], coarse.points_of(int(j)))]])
                if apart[isolated[apart]].size:
                    return int(j), int(k), apart[isolated[apart]]
                if fine and fallback is None:
                    fallback = int(j), int(k), apart if apart.size else np.concatenate([only_j, only_k])
        if fallback is not None:
            return fallback
    return None


def select_leaders(c: Construction, slot_start: Any = 3,
                   sphere_radius: Any = None) -> tuple[list[np.ndarray], tuple[float, float]]:
    """Stage 2 (Fig. 7): choose ``m_j`` private tokens of each sequence (all in the box ``[1, 2]^d``) and move
    them, one hat each, to the P-slot ``s_j·𝟙`` (first leader) and to sphere slots (the others). The slots
    ``s_j`` lie in ``[slot_start, slot_start + 1)`` and the sphere has radius ``sphere_radius`` (the softmax
    construction of Theorem 1.8 changes both); ``None`` makes it large enough for the interpolation's sweep
    (:func:`interpolation_radius`).

    The hats peel the leaders (:func:`~.peeling.move_all`) along directions that leave every slot below the
    leader moved. In d ≤ 3 the slots are those of :func:`~.geometry.below_box` (all below the box along u₂, the
    sphere radius at least ``below_box``'s), where ``slot_start`` allows it, and the directions are u₂ turned
    freely in {𝟙, u₂}⊥; in d ≥ 4 (or without room for ``below_box``) the directions lie in {𝟙, u₂}⊥, along which
    all slots project to 0 (that plane has only d − 2 dimensions to find good windows in).

    Leaders are private tokens, preferably without a near-duplicate (:data:`NEAR`) anywhere, then without
    one in another sequence. Returns the leader token indices of every sequence, its P-leader first, and the
    arc of angles of the sphere slots."""
    config = c.config
    private_point = config.holders() == 1
    classes = config.near_classes(NEAR)
    near_private = config.coarse(classes).holders()[classes] == 1
    isolated = np.bincount(classes)[classes] == 1
    leaders = []
    for j, m_j in enumerate(c.m):
        tokens = np.arange(config.segments.rows(j).start, config.segments.rows(j).stop)
        points = config.token_point[tokens]
        tokens, points = tokens[private_point[points]], points[private_point[points]]
        order = np.lexsort((~isolated[points], ~near_private[points]))
        leaders.append(tokens[order][:m_j])
    u1, u2 = np.ones(c.d) / np.sqrt(c.d), side(c.d)
    below = below_box(c.d, slot_start) if c.d <= 3 else None
    arc = below[2] if below is not None else sphere_arc(c.d)
    radius = 1 if sphere_radius is None else sphere_radius
    if below is not None:
        radius = max(radius, below[1])
    if sphere_radius is None:
        radius = max(radius, interpolation_radius(c, arc))
    slots = _slots(c, slot_start, radius, arc, offset=None if below is None else -below[0] * u2)

    def direction() -> np.ndarray:
        g = c.rng.standard_normal(c.d)
        free = g - (g @ u1) * u1 - (g @ u2) * u2  # moves no slot: P-slots are in span(𝟙, u₂), sphere slots too
        if below is not None:  # u₂ (below which all slots lie), turned freely in {𝟙, u₂}⊥ and a little toward 𝟙
            u = u2 + c.rng.uniform(0, 2) * free + c.rng.uniform(-0.02, 0.02) * u1
        elif c.d > 2:  # the slots project to 0; tilted a little so that points level along free can be told apart
            u = free + 10 ** -c.rng.uniform(3, 7) * (c.rng.standard_normal() * u1 + c.rng.standard_normal() * u2)
        else:
            u = g
        return c.backend.asarray(np.round(u * 2**DYADIC_BITS) / 2**DYADIC_BITS)

    return move_all(c, leaders, lambda j, k: slots[j][k], direction), arc


def sweep_direction(d: int, arc: tuple[float, float]) -> np.ndarray:
    """``w = cos φ u₁ + sin φ u₂`` with φ :data:`SWEEP_TILT` below the middle of the sphere slots' ``arc``: along
    w the P-slots lie far above every target (``w·s𝟙 ≥ 0.85 s√d``), the sphere slots ``−R(cos θ u₁ + sin θ u₂)``
    project to ``−R cos(θ − φ)``, spread out (unlike along u₁, where the arc is nearly level) and, for R of
    :func:`interpolation_radius`, below every target: the interpolation then needs a single sweep."""
    phi = (arc[0] + arc[1]) / 2 - SWEEP_TILT
    return np.cos(phi) * np.ones(d) / np.sqrt(d) + np.sin(phi) * side(d)


def interpolation_radius(c: Construction, arc: tuple[float, float]) -> float:
    """The smallest radius (a multiple of 1/8) that puts every sphere slot :data:`~.geometry.BELOW_MARGIN` below
    every target along :func:`sweep_direction`, whose angle with the slots is at most ``SWEEP_TILT`` plus half
    the arc."""
    w = sweep_direction(c.d, arc)
    lowest = float(min(project(to_float(y), w).min() for y in c.targets))
    closest = math.cos(SWEEP_TILT + (arc[1] - arc[0]) / 2)
    return math.ceil(8 * (max(0.0, -lowest) + BELOW_MARGIN) / closest) / 8


def _slots(c: Construction, slot_start: Any, sphere_radius: Any, arc: tuple[float, float] | None = None,
           offset: np.ndarray | None = None) -> list[list[np.ndarray]]:
    """Leader destinations: ``slots[j][0]`` on the diagonal (plus ``offset``), ``slots[j][k]`` (k ≥ 1) on the
    sphere (angles in ``arc``), the sphere angles dealt round-robin so that one sequence's sphere slots are far
    apart; redrawn if a slot happens to coincide with a target."""
    N, d, backend = len(c.m), c.d, c.backend
    sphere_pairs = sorted(((k, j) for j, m_j in enumerate(c.m) for k in range(1, m_j)))
    targets = set(map(tuple, np.concatenate(c.targets) + 0))  # + 0: -0.0 and 0.0 are one point
    for _ in range(MAX_REDRAWS):
        diagonal = diagonal_slots(N, d, c.rng, backend, start=slot_start, offset=offset)
        sphere = sphere_slots(len(sphere_pairs), d, c.rng, backend, radius=sphere_radius, arc=arc)
        everything = np.concatenate([diagonal, sphere])
        if targets.isdisjoint(map(tuple, everything + 0)):
            break
    else:
        raise RuntimeError("could not place the leader slots away from the targets")
    slots: list[list[np.ndarray]] = [[diagonal[j]] for j in range(N)]
    for (k, j), q in zip(sphere_pairs, sphere):
        slots[j].append(q)
    return slots


def collapse(c: Construction, leaders: list[np.ndarray]) -> None:
    """Stage 3 (Lemmas 4.2, 4.3, Fig. 5d): SA with ``A = I``, ``ρ = 0``, ``V = I``. Box tokens attend
    only to their sequence's P-leader, leaders attend only to themselves; afterwards sequence j holds
    exactly its m_j leader positions (checked)."""
    one = c.backend.scalar(1)
    c.emit(c.identity_ff(), SelfAttention(rho=one * 0, V=ScaledIdentity(one), A=ScaledIdentity(one)))
    for j, (tokens, held) in enumerate(zip(leaders, c.config.points_by_sequence())):
        if set(held.tolist()) != set(c.config.token_point[tokens].tolist()):
            raise RuntimeError(f"collapse: sequence {j} did not collapse onto its {len(tokens)} leaders")


def interpolate(c: Construction, leaders: list[np.ndarray], arc: tuple[float, float]) -> None:
    """Stage 4: one hat per leader, moving it onto its target (M blocks); placed targets stay fixed. The sweeps
    go along :func:`sweep_direction` (the first exactly, later ones tilted at random), the draws of
    :func:`~.hat.peel_move` are Gaussian."""
    w = sweep_direction(c.d, arc)

    def along(k: int) -> np.ndarray:
        tilt = 0 if k == 0 else 0.2 * c.rng.standard_normal(c.d) / np.sqrt(c.d)
        return c.backend.asarray(np.round((w + tilt) * 2**DYADIC_BITS) / 2**DYADIC_BITS)

    move_all(c, leaders, lambda j, k: c.targets[j][k], lambda: c.backend.gaussian_direction(c.rng, c.d), along)
