"""Theorem 1.8 (softmax): an explicit softmax transformer interpolating a sequence dataset exactly.

Reconstruction (the paper's text was not available; see the book's page on how it reconstructs the papers)
reusing the hardmax stages of
:mod:`.hardmax` where they carry over unchanged:

1. **separation** (Fig. 9c): one block. The FF maps the cloud into the unit ball; the SA
   (``A = a bᵀ`` rank one, scaled so that ``|score/τ| ≤ 2``, ``ρ = 1 − c``, ``V = c I``) sends each token to
   ``(1 − c) x + c·(softmax average of its own sequence)``; a token shared by sequences with different
   token sets gets different averages, so it splits. Skipped (0 blocks) when every sequence already owns
   ``m_j`` private tokens. The same block with hardmax weights may leave sequences overlapping (Fig. 9b);
2. **leader selection** (Fig. 7): the hardmax stage, M hat FFs (P-slot offset and sphere radius are options);
3. **collapse** (Fig. 8, left): one SA with ``A = I``, ``ρ = 0``, ``V = w wᵀ`` (``w = 𝟙/√d``) at temperature
   τ ≤ τ*: every token goes to the line ``R·w``, the box tokens of sequence j into a small cluster around
   its P-leader's projection (:mod:`.threshold` defines τ*);
4. **exactification** (Fig. 8, right): one width-3 FF per cluster (sequence with ``n_j > m_j``) makes it one
   point (:mod:`.exactification`); where the softmax weights underflowed to hardmax it has nothing to do;
5. **interpolation**: the hardmax stage, M hat FFs onto the targets.

Between stages 1 and 2 one embedding block maps the cloud into the box (:meth:`~.builder.Construction.embed`).
Blocks: ``S + 1 + M + 1 + E + M ≤ 2M + N + 3`` with S ≤ 1 separation block (0 when N = 1) and
``E = #{j : n_j > m_j} ≤ N`` exactification blocks, so at most ``2M + 3N`` (the paper's depth); the depth
does not depend on τ. The model's temperature τ is that of the collapse layer. The separation layer is stored at temperature 1; at temperature τ it would
have ``A`` multiplied by τ, the same function (the theorem lets parameters depend on τ). So stages 1-2 and τ*
do not depend on τ, bit for bit.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterator, Sequence

import numpy as np

from transformer_theory.checks import boolean, positive_real
from transformer_theory.interpolation.arithmetic import FLOAT, project, unique_rows
from transformer_theory.interpolation.attention import SelfAttention
from transformer_theory.interpolation.construction.bounds import paper_num_blocks_softmax
from transformer_theory.interpolation.construction.builder import Construction
from transformer_theory.interpolation.construction.configuration import Configuration
from transformer_theory.interpolation.construction.exactification import ClusterFeedForward, cluster_window
from transformer_theory.interpolation.construction.geometry import BOX_HIGH
from transformer_theory.interpolation.construction.hardmax import (
    MAX_REDRAWS,
    interpolate,
    private_counts,
    select_leaders,
)
from transformer_theory.interpolation.construction.threshold import CollapseBound, collapse_bound
from transformer_theory.interpolation.dataset import SequenceDataset
from transformer_theory.interpolation.feed_forward import FeedForward
from transformer_theory.interpolation.hausdorff import verify
from transformer_theory.interpolation.linear_maps import RankOne, ScaledIdentity
from transformer_theory.interpolation.segments import Segments
from transformer_theory.interpolation.transformer import Block, Transformer

#: ``temperature=None`` builds at ``DEFAULT_FRACTION·τ*`` (the genuinely soft regime: clusters keep a spread).
DEFAULT_FRACTION = 0.5
#: The separation layer's scores lie in ``[−SEPARATION_SCORE, SEPARATION_SCORE]`` (unit-ball tokens, unit a, b).
SEPARATION_SCORE = 2.0
#: The separation layer's own temperature. Softmax attention with ``(A, τ')`` equals that with ``(A·τ/τ', τ)``;
#: storing it at a fixed τ' keeps its rounding, hence every later stage and τ*, independent of the model's τ.
SEPARATION_TEMPERATURE = 1.0


@dataclass(frozen=True)
class CollapseReport:
    """What the softmax collapse did: the bound (τ*, δ_i), ``accuracy = max_i |t_i − c(i)|/δ_i`` (≤ 1 is
    guaranteed for τ ≤ τ*), the largest cluster width before exactification (``spread``), and whether
    every cluster's hull was free of other tokens (``clean``; implied by accuracy ≤ 1)."""

    bound: CollapseBound
    accuracy: float
    spread: float
    clean: bool


@dataclass(eq=False, repr=False)
class SoftmaxTransformer(Transformer):
    """A :class:`Transformer` built by :func:`build_softmax`; ``temperature`` is the collapse layer's τ."""

    temperature: float = 1.0
    collapse: CollapseReport | None = None

    @property
    def guaranteed(self) -> bool:
        """Theorem 1.8 covers the model when its temperature is at most τ*."""
        return self.temperature <= self.temperature_threshold

    @property
    def temperature_threshold(self) -> float:
        """τ* of this dataset and seed (:mod:`.threshold`): the construction is exact for every τ ≤ τ*."""
        return self.collapse.bound.threshold

    def _repr_extra(self) -> str:
        return f", temperature={self.temperature:.3g}"


def build_softmax(
    dataset: SequenceDataset,
    *,
    seed: int = 0,
    match_paper_depth: bool = False,
    exact: bool = False,
    temperature: float | None = None,
    allow_above_threshold: bool = False,
    slot_offset: float = 1.0,
    sphere_radius: float = 1.0,
) -> SoftmaxTransformer:
    """The softmax interpolating transformer of Theorem 1.8 (reconstruction, see module docstring).

    ``temperature``: τ of the collapse layer (the only layer whose effect depends on τ); ``None`` picks τ*/2.
    A τ above τ* raises ``ValueError`` naming τ* (after stages 1 and 2, which τ* needs), unless
    ``allow_above_threshold=True``: then the model is built anyway and not checked (used to show the
    breakdown above τ*; its error may exceed the tolerance).
    ``slot_offset``: distance of the P-slots beyond the box corner (the box tokens' score gaps shrink with
    it); ``sphere_radius``: radius R of the sphere slots (the sphere tokens' gaps grow like R²). The genuinely
    soft regime, where the clusters of the box tokens keep a spread before exactification, needs the box
    tokens to set τ*: e.g. ``slot_offset=0.05`` with ``sphere_radius=10·d`` (10 suffices in d ≤ 3). With the
    defaults in d ≥ 3 the sphere tokens usually set τ* and the box tokens' weights underflow to hardmax.
    In d ≤ 3, where ``slot_offset`` leaves room for it, the slots of :func:`~.geometry.below_box` are used (the
    sphere radius then at least ``below_box``'s), so that the dense and torch evaluations round as little as
    the structured one (:func:`~.hardmax.select_leaders`); with a smaller offset (the soft regime) they may
    miss near-duplicate tokens in the plane, which the build reports.
    ``collapse`` lengths are in the construction's units (the model's ``unit``).
    """
    if exact:
        raise ValueError("softmax attention needs float64 arithmetic: exact=True is only available for hardmax")
    if temperature is not None:
        temperature = positive_real("temperature", temperature)
    boolean("allow_above_threshold", allow_above_threshold)
    geometry = {"slot_start": BOX_HIGH + positive_real("slot_offset", slot_offset),
                "sphere_radius": positive_real("sphere_radius", sphere_radius)}
    c, leaders, arc, bound = _prepare(dataset, seed, geometry)
    if temperature is None:
        temperature = DEFAULT_FRACTION * bound.threshold if math.isfinite(bound.threshold) else 1.0
    temperature = float(temperature)
    above = temperature > bound.threshold
    if above and not allow_above_threshold:
        raise ValueError(
            f"temperature {temperature:.6g} is above the threshold τ* = {bound.threshold:.6g} of this dataset "
            f"(seed {seed}): the softmax collapse is guaranteed δ-accurate only for τ <= τ*; use a smaller "
            "temperature, temperature=None, or allow_above_threshold=True to build without that guarantee"
        )
    w = _line(dataset.d)
    with c.stage("collapse"):
        report = collapse(c, leaders, w, temperature, bound)
    with c.stage("exactification"):
        exactify(c, leaders, w)
    with c.stage("interpolation"):
        interpolate(c, leaders, arc)
    if not above:
        c.check_interpolation()
    depth = paper_num_blocks_softmax(dataset.N, dataset.total_output_length) if match_paper_depth else None
    base = c.transformer(depth)
    return SoftmaxTransformer(base.blocks, base.d, stages=base.stages, unit=base.unit, temperature=temperature,
                              collapse=report)


def _prepare(dataset: SequenceDataset, seed: int,
             geometry: dict) -> tuple[Construction, list[np.ndarray], tuple[float, float], CollapseBound]:
    """Stages 1 and 2 (independent of τ), the sphere slots' arc and the bound τ* of the collapse that follows."""
    c = Construction(dataset, False, np.random.default_rng(seed))
    with c.stage("separation"):
        separate(c)
    c.embed()
    with c.stage("leader_selection"):
        leaders, arc = select_leaders(c, **geometry)
    attracts = np.arange(len(c.config.token_point))  # Lemma 4.3: sphere leaders attend to themselves,
    for j, tokens in enumerate(leaders):  # Lemma 4.2: every other token to its sequence's P-leader
        rows = attracts[c.config.segments.rows(j)]
        attracts[c.config.segments.rows(j)] = np.where(np.isin(rows, tokens[1:]), rows, tokens[0])
    return c, leaders, arc, collapse_bound(c.config.tokens(), c.config.segments, attracts, _line(dataset.d))


def _line(d: int) -> np.ndarray:
    """The unit vector ``w = 𝟙/√d`` spanning the collapse line (Fig. 8)."""
    return np.full(d, 1 / math.sqrt(d))


def _separated(config: Configuration, m: np.ndarray) -> bool:
    """Every sequence owns ``m_j`` private positions and keeps its tokens distinct."""
    distinct = np.array([len(config.points_of(j)) for j in range(len(m))])
    return bool(np.all(private_counts(config) >= m) and np.all(distinct == config.segments.lengths))


def separate(c: Construction) -> None:
    """Stage 1 (Fig. 9c): one block ``[FF: x ↦ (x − centre)/r] → [SA: A = a bᵀ, ρ = 1 − c, V = c I]`` at
    temperature ``SEPARATION_TEMPERATURE``, redrawn (a, b, c) in the non-generic case that some sequence keeps
    too few private tokens."""
    if _separated(c.config, c.m):
        return
    points = c.config.points
    centre = (points.min(axis=0) + points.max(axis=0)) / 2
    radius = float(np.sqrt(((points - centre) ** 2).sum(axis=1)).max())
    eta = 1.0 / radius if radius > 0 else 1.0
    ff = FeedForward.affine(eta, -centre * eta)
    after_ff = c.config.after_ff(ff)
    for _ in range(MAX_REDRAWS):
        a, b = (u / np.linalg.norm(u) for u in (FLOAT.gaussian_direction(c.rng, c.d) for _ in range(2)))
        coef = FLOAT.dyadic(c.rng, 0.2, 0.4)
        sa = SelfAttention(1 - coef, ScaledIdentity(coef), RankOne(a * SEPARATION_SCORE, b), "softmax",
                           temperature=SEPARATION_TEMPERATURE)
        after = after_ff.after_sa(sa)
        if _separated(after, c.m):
            c.emit(ff, sa, after)
            return
    raise RuntimeError("softmax separation: every draw left two sequences overlapping")


def collapse(c: Construction, leaders: list[np.ndarray], w: np.ndarray, temperature: float,
             bound: CollapseBound) -> CollapseReport:
    """Stage 3 (Fig. 8, left): SA with ``A = I``, ``ρ = 0``, ``V = w wᵀ`` at temperature τ; measures how far
    each token landed from its hardmax image (relative to δ_i) and the width of every cluster."""
    c.emit(c.identity_ff(), SelfAttention(0.0, RankOne(w, w), ScaledIdentity(1.0), "softmax", temperature))
    t = project(c.config.points, w)
    spread, clean = 0.0, True
    for mask in _clusters(c.config, leaders):
        spread = max(spread, float(np.ptp(t[mask])))
        clean &= cluster_window(t, mask)[2]
    return CollapseReport(bound, bound.accuracy(t[c.config.token_point]), spread, clean)


def _clusters(config: Configuration, leaders: list[np.ndarray]) -> Iterator[np.ndarray]:
    """For every sequence, the mask of the positions of its cluster: all its positions but its sphere leaders'."""
    for j, tokens in enumerate(leaders):
        rows = np.arange(config.segments.rows(j).start, config.segments.rows(j).stop)
        mask = np.zeros(len(config.points), dtype=bool)
        mask[config.token_point[rows[~np.isin(rows, tokens[1:])]]] = True
        yield mask


def exactify(c: Construction, leaders: list[np.ndarray], w: np.ndarray) -> None:
    """Stage 4 (Fig. 8, right): one block ``[ClusterFeedForward collapsing its window] → [identity SA]`` for
    every sequence with ``n_j > m_j`` (a cluster of at least two tokens), whatever its spread, so that the
    depth does not depend on τ; positions are merged at the end of the stage."""
    config = c.config
    points = config.points
    for j, mask in enumerate(_clusters(config, leaders)):
        if config.segments.lengths[j] == c.m[j]:
            continue
        lo, hi, _ = cluster_window(project(points, w), mask)
        ff = ClusterFeedForward(w, lo, hi)
        points = ff.apply(points)
        c.blocks.append(Block(ff, c.identity_sa()))
    merged, inverse = unique_rows(points)
    c.config = Configuration(merged, inverse[config.token_point], config.segments)



def separation_block_states(model: SoftmaxTransformer, sequences: Sequence[np.ndarray]) -> dict[str, list[np.ndarray]]:
    """Fig. 9: the input, the separation block with the same parameters but hardmax weights, and the softmax
    separation block, each applied to every sequence (``ValueError`` if the model has no separation block)."""
    if not len(model.stages["separation"]):
        raise ValueError("the model has no separation block: no two sequences share a token that must split")
    block = model.blocks[model.stages["separation"].start]
    hard = Block(block.ff, SelfAttention(block.sa.rho, block.sa.V, block.sa.A, "hardmax"))
    inputs = list(sequences)
    return {
        "input": inputs,
        "hardmax block": [hard.apply(x, Segments.of([x])) for x in inputs],
        "softmax block": [block.apply(x, Segments.of([x])) for x in inputs],
    }


@dataclass(frozen=True)
class TemperatureSweep:
    """Interpolation error and collapse accuracy against τ/τ* (models built above τ* without the guarantee)."""

    ratios: np.ndarray
    errors: np.ndarray  # max Hausdorff error over the sequences
    accuracy: np.ndarray  # measured max |t − c|/δ of the collapse
    accuracy_bound: np.ndarray  # its bound max S exp(−Δ/τ)/δ (= 1 at τ*)
    spread: np.ndarray  # largest cluster width before exactification
    threshold: float  # τ*


def temperature_sweep(dataset: SequenceDataset, ratios: Sequence[float], seed: int = 0) -> TemperatureSweep:
    """Build the softmax construction at τ = r·τ* for every ratio r (``allow_above_threshold`` for r > 1)."""
    ratios = np.asarray(ratios, dtype=np.float64)
    if ratios.ndim != 1 or ratios.size == 0 or not np.all(np.isfinite(ratios) & (ratios > 0)):
        raise ValueError(f"ratios must be a non-empty list of positive finite numbers, got {ratios.tolist()}")
    tau_star = build_softmax(dataset, seed=seed).temperature_threshold
    rows = []
    for r in ratios:
        m = build_softmax(dataset, seed=seed, temperature=r * tau_star, allow_above_threshold=True)
        rows.append((verify(m, dataset).max(), m.collapse.accuracy, m.collapse.bound.accuracy_bound(r * tau_star),
                     m.collapse.spread))
    errors, accuracy, bound, spread = map(np.array, zip(*rows))
    return TemperatureSweep(ratios, errors, accuracy, bound, spread, tau_star)
