"""Theorem 1.6 (hardmax): an explicit transformer interpolating a sequence dataset exactly.

Reconstruction (spec §4; the paper's text was not available) of the paper's four stages:

1. **separation** (Lemma 4.1, Fig. 6): rank-one attention ``A = v vᵀ``, ``ρ = 1 − c``, ``V = c I``
   contracts each sequence toward its v-leader; a hat FF first makes a token that distinguishes two
   overlapping sequences the leader of one of them, so their shared tokens split. Improvement over
   the spec: we stop as soon as every sequence owns ``m_j`` tokens no other sequence holds (only the
   leaders must be private), at most N − 1 blocks and 0 when that already holds;
2. **leader selection** (Fig. 7): M hat FFs, the first also mapping every token into the box B;
   one leader per sequence goes to the diagonal region P, the others to the negative-orthant sphere;
3. **collapse** (Lemmas 4.2, 4.3): one SA with ``A = I``, ``ρ = 0``, ``V = I`` sends every box token
   onto its sequence's P-leader and fixes the leaders;
4. **interpolation**: M hat FFs move the M remaining points onto the targets.

Blocks: ``S + 2M + 1`` with ``S ≤ N − 1``, never more than the paper's ``2M + 2N + 1``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from transformer_theory.interpolation.arithmetic import project, tie_tolerance
from transformer_theory.interpolation.attention import SelfAttention
from transformer_theory.interpolation.construction.bounds import paper_num_blocks_hardmax
from transformer_theory.interpolation.construction.builder import Construction
from transformer_theory.interpolation.construction.configuration import Configuration
from transformer_theory.interpolation.construction.hat import hat_move
from transformer_theory.interpolation.construction.geometry import box_affine, diagonal_slots, sphere_slots
from transformer_theory.interpolation.dataset import SequenceDataset
from transformer_theory.interpolation.linear_maps import RankOne, ScaledIdentity
from transformer_theory.interpolation.transformer import Transformer

#: Random redraws of a separation coefficient c or of the slots before giving up (never needed in tests).
MAX_REDRAWS = 20


def build_hardmax(
    dataset: SequenceDataset, *, seed: int = 0, match_paper_depth: bool = False, exact: bool = False
) -> Transformer:
    """The hardmax interpolating transformer of Theorem 1.6 (reconstruction, see module docstring)."""
    c = Construction(dataset, exact, np.random.default_rng(seed))
    with c.stage("separation"):
        separate(c)
    with c.stage("leader_selection"):
        leaders = select_leaders(c)
    with c.stage("collapse"):
        collapse(c, leaders)
    with c.stage("interpolation"):
        interpolate(c, leaders)
    c.check_interpolation()
    depth = paper_num_blocks_hardmax(dataset.N, dataset.total_output_length) if match_paper_depth else None
    return c.transformer(depth)


def private_counts(config: Configuration) -> np.ndarray:
    """For every sequence, the number of its positions held by no other sequence."""
    private_points = config.holders() == 1
    counts = np.zeros(len(config.segments.lengths), dtype=int)
    pairs = np.unique(config.segments.sequence_of * len(config.points) + config.token_point)
    seq, point = np.divmod(pairs, len(config.points))
    np.add.at(counts, seq[private_points[point]], 1)
    return counts


def _v_leaders(config: Configuration, v: np.ndarray) -> list[tuple[int, ...]]:
    """For every sequence, its positions with (tolerance-)maximal ``v·x`` (Lemma 4.1, ``v·x > 0``)."""
    proj = project(config.points, v)
    keys = []
    for j in range(len(config.segments.lengths)):
        pts = config.points_of(j)
        top = proj[pts].max()
        keys.append(tuple(pts[proj[pts] >= top - tie_tolerance(top)]))
    return keys


def _groups_disjoint(config: Configuration, labels: np.ndarray) -> bool:
    """True when no position is held by two sequences with different labels."""
    P = len(config.points)
    lo = np.full(P, labels.max() + 1)
    hi = np.full(P, -1)
    seq_label = labels[config.segments.sequence_of]
    np.minimum.at(lo, config.token_point, seq_label)
    np.maximum.at(hi, config.token_point, seq_label)
    return bool(np.all(lo == hi))


def separate(c: Construction) -> None:
    """Stage 1 (Fig. 6): blocks ``[hat FF moving z far along v] → [SA: A = v vᵀ, ρ = 1 − c, V = c I]``
    until every sequence j owns ``m_j`` private positions.

    Invariant: sequences carry group labels and sequences with different labels are disjoint. Each
    block takes two overlapping sequences j, k (same group), a position z in exactly one of them, and
    makes z the unique v-maximiser of the sequences holding it; the SA maps each sequence by
    ``x ↦ (1 − c) x + c ℓ`` with ℓ its v-leader, so j and k end up in different groups. Hence at most
    N − 1 blocks. ``c`` is redrawn in the (non-generic) case of an accidental coincidence.
    """
    backend, rng = c.backend, c.rng
    v = backend.dyadic(rng, 1, 2, size=c.d)  # positive entries: v·x > 0 on the box [1, 2]^d
    labels = np.zeros(len(c.m), dtype=int)
    affine = box_affine(c.config.points, backend)  # the first block also maps everything into the box
    while True:
        config = c.config
        needy = np.flatnonzero(private_counts(config) < c.m)
        if not needy.size:
            return
        j = int(needy[0])
        pts_j = config.points_of(j)
        others = np.isin(config.token_point, pts_j) & (config.segments.sequence_of != j)
        k = int(config.segments.sequence_of[others][0])
        z = int(np.setxor1d(pts_j, config.points_of(k))[0])
        eta, shift = affine if affine is not None else (1, None)
        moved = config.points * eta + shift if affine is not None else config.points
        top = project(moved, v).max()
        z_new = moved[z] + v * ((top + 1 - project(moved[z : z + 1], v)[0]) / project(v[None, :], v)[0])
        ff = hat_move(config.points, z, z_new, rng, eta, shift)
        after_ff = config.after_ff(ff)
        keys = _v_leaders(after_ff, v)
        relabel: dict = {}
        new_labels = np.array([relabel.setdefault((labels[i], keys[i]), len(relabel)) for i in range(len(keys))])
        for _ in range(MAX_REDRAWS):
            coef = backend.dyadic(rng, 0.2, 0.4)
            sa = SelfAttention(rho=1 - coef, V=ScaledIdentity(coef), A=RankOne(v, v))
            after = after_ff.after_sa(sa)
            if _groups_disjoint(after, new_labels):
                break
        else:
            raise RuntimeError("separation: every coefficient c produced a coincidence")
        c.emit(ff, sa, after)
        labels, affine = new_labels, None


def select_leaders(c: Construction, slot_start: Any = 3, sphere_radius: Any = 1) -> list[np.ndarray]:
    """Stage 2 (Fig. 7): choose ``m_j`` private tokens of each sequence and move them, one hat each, to
    the P-slot ``s_j·𝟙`` (first leader) and to sphere slots (the others); the first hat also maps every
    token into the box ``[1, 2]^d``. The slots ``s_j`` lie in ``[slot_start, slot_start + 1)`` and the sphere
    has radius ``sphere_radius`` (the softmax construction of Theorem 1.8 changes both). Returns the leader
    token indices of every sequence."""
    config, backend = c.config, c.backend
    private_point = config.holders() == 1
    leaders = []
    for j, m_j in enumerate(c.m):
        tokens = np.arange(config.segments.rows(j).start, config.segments.rows(j).stop)
        leaders.append(tokens[private_point[config.token_point[tokens]]][:m_j])
    slots = _slots(c, slot_start, sphere_radius)
    affine = box_affine(config.points, backend)
    for j, tokens in enumerate(leaders):
        for k, token in enumerate(tokens):
            c.move(int(c.config.token_point[token]), slots[j][k], affine)
            affine = None
    return leaders


def _slots(c: Construction, slot_start: Any = 3, sphere_radius: Any = 1) -> list[list[np.ndarray]]:
    """Leader destinations: ``slots[j][0]`` on the diagonal, ``slots[j][k]`` (k ≥ 1) on the sphere, the
    sphere angles dealt round-robin so that one sequence's sphere slots are far apart; redrawn if a
    slot happens to coincide with a target."""
    N, d, backend = len(c.m), c.d, c.backend
    sphere_pairs = sorted(((k, j) for j, m_j in enumerate(c.m) for k in range(1, m_j)))
    targets = np.concatenate(c.targets)
    for _ in range(MAX_REDRAWS):
        diagonal = diagonal_slots(N, d, c.rng, backend, start=slot_start)
        sphere = sphere_slots(len(sphere_pairs), d, c.rng, backend, radius=sphere_radius)
        everything = np.concatenate([diagonal, sphere])
        if not any((targets == s).all(axis=1).any() for s in everything):
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
    for j, tokens in enumerate(leaders):
        held = set(c.config.points_of(j).tolist())
        if held != set(c.config.token_point[tokens].tolist()):
            raise RuntimeError(f"collapse: sequence {j} did not collapse onto its {len(tokens)} leaders")


def interpolate(c: Construction, leaders: list[np.ndarray]) -> None:
    """Stage 4: one hat per leader, moving it onto its target (M blocks); placed targets stay fixed."""
    for j, tokens in enumerate(leaders):
        for k, token in enumerate(tokens):
            c.move(int(c.config.token_point[token]), c.targets[j][k])
