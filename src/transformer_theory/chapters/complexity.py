"""Chapter 04 (``04_complexity``): the depth and parameter counts of Paper A's constructions (Alcalde, Fantuzzi,
Zuazua 2025, arXiv 2502.02270: O(M) blocks and O(dM) parameters, independent of the input lengths) and its analysis.

:func:`analyse` measures both constructions (:func:`~transformer_theory.interpolation.complexity.measure`) as the input
length grows at fixed ``M``, then as the targets per sequence and the number of sequences grow at fixed input length,
and returns every number, table and check the notebook shows (:class:`ComplexityAnalysis`); :func:`verdicts` the
chapter's claims. The per-block bound ``11d + 7`` and the hat ResNet are this book's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from transformer_theory.chapters.computed import ComplexityParameters
from transformer_theory.chapters.prose import significant, slashed
from transformer_theory.chapters.verdicts import Claim
from transformer_theory.interpolation.attention import ATTENTIONS
from transformer_theory.interpolation.complexity import Measurement, measure
from transformer_theory.interpolation.construction import block_parameter_bound
from transformer_theory.interpolation.examples import uniform_dataset

__all__ = ["ComplexityAnalysis", "analyse", "verdicts"]

CHAPTER = "04_complexity"
SOURCE = "Paper A, complexity"
#: The largest Hausdorff error accepted, relative to the data (tokens in [-1, 1]^d): twice the build's tolerance.
MAX_ERROR = 2e-8
#: The most blocks per unit of M a construction linear in M may add (two per target: a leader and its interpolation).
MAX_BLOCKS_PER_M = 2


@dataclass(frozen=True)
class ComplexityAnalysis:
    """Everything chapter 04 shows: the measurements of the length sweep (``lengths``, fixed ``N`` and ``M``), of
    the target sweep (``m_values`` per sequence) and of the sequence sweep (``N_values``)."""

    params: ComplexityParameters
    length_rows: tuple[Measurement, ...]
    m_rows: tuple[Measurement, ...]
    N_rows: tuple[Measurement, ...]

    @property
    def constant_in_length(self) -> bool:
        """Both constructions keep their blocks and parameters (structured and dense) at every input length."""
        return all(len({getattr(r.counts(a), k) for r in self.length_rows}) == 1
                   for a in ATTENTIONS for k in ("blocks", "params", "dense_params"))

    @property
    def blocks_per_M(self) -> dict[str, float]:
        """The slope of each construction's blocks against M over the target sweep."""
        M = [r.M for r in self.m_rows]
        return {a: float(np.polyfit(M, [r.counts(a).blocks for r in self.m_rows], 1)[0]) for a in ATTENTIONS}

    @property
    def size_rows(self) -> tuple[Measurement, ...]:
        return self.m_rows + self.N_rows

    @property
    def params_per_d_per_block(self) -> float:
        """The most structured parameters per unit of d per block, over both size sweeps."""
        d = self.params.d
        return max(r.counts(a).params / (d * r.counts(a).blocks) for r in self.size_rows for a in ATTENTIONS)

    @property
    def max_error(self) -> float:
        return max(r.counts(a).error for r in self.length_rows + self.size_rows for a in ATTENTIONS)

    def resnet(self, structured: bool) -> list[int]:
        """The hat ResNet's parameters at each input length (structured or dense)."""
        return [r.resnet.structured_params if structured else r.resnet.params for r in self.length_rows]

    def failures(self) -> list[str]:
        """The checks of the chapter's "What was checked" that fail (empty when all hold)."""
        bound, lengths = block_parameter_bound(self.params.d), self.params.lengths
        out = [] if self.constant_in_length else ["the blocks or parameters change with the input length"]
        if any(r.resnet.error > MAX_ERROR for r in self.length_rows):
            out.append(f"the hat ResNet misses a target by more than {MAX_ERROR}")
        for counts in (self.resnet(False), self.resnet(True)):
            if counts != sorted(counts) or counts[-1] / counts[0] <= 0.9 * lengths[-1] / lengths[0]:
                out.append(f"the hat ResNet's parameters {counts} do not grow with the input length")
        for r in self.length_rows + self.size_rows:
            out += [f"{a}, N = {r.N}, M = {r.M}, n = {r.n_max}: error {r.counts(a).error:.1e} above {MAX_ERROR}"
                    for a in ATTENTIONS if r.counts(a).error > MAX_ERROR]
        for r in self.size_rows:
            out += [f"{a}, N = {r.N}, M = {r.M}: {c.blocks} blocks (paper {c.paper_blocks}), {c.params} parameters, "
                    f"{c.max_block_params} in one block (bound {bound} per block, {c.bound} in all)"
                    for a, c in ((a, r.counts(a)) for a in ATTENTIONS)
                    if not (c.blocks <= c.paper_blocks and c.max_block_params <= bound
                            and c.params <= bound * c.blocks <= c.bound)]
        return out

    def length_table(self) -> list[dict[str, Any]]:
        """The rows of the length sweep's table."""
        return [{"n_j": r.n_max, "hardmax blocks (paper)": f"{r.hardmax.blocks} ({r.hardmax.paper_blocks})",
                 "softmax blocks (paper)": f"{r.softmax.blocks} ({r.softmax.paper_blocks})",
                 "hardmax struct. / dense": f"{r.hardmax.params} / {r.hardmax.dense_params}",
                 "softmax struct. / dense": f"{r.softmax.params} / {r.softmax.dense_params}",
                 "ResNet struct. / dense": f"{r.resnet.structured_params} / {r.resnet.params}",
                 "largest weight (hardmax, softmax)": f"{r.hardmax.max_abs_weight:.2g}, {r.softmax.max_abs_weight:.2g}",
                 "softmax τ*": f"{r.tau_star:.3g}"} for r in self.length_rows]

    def values(self) -> dict[str, Any]:
        """The numbers the chapter records (``results/<profile>/04_complexity.json``)."""
        first = self.length_rows[0]
        return {
            "lengths": list(self.params.lengths), "blocks_constant_in_n": self.constant_in_length,
            "hardmax_blocks": first.hardmax.blocks, "softmax_blocks": first.softmax.blocks,
            "paper_blocks": {a: first.counts(a).paper_blocks for a in ATTENTIONS},
            "structured_params": {a: first.counts(a).params for a in ATTENTIONS},
            "dense_params": {a: first.counts(a).dense_params for a in ATTENTIONS},
            "resnet_params_by_length": self.resnet(False), "resnet_structured_params_by_length": self.resnet(True),
            "max_abs_weight_by_length": {a: [r.counts(a).max_abs_weight for r in self.length_rows] for a in ATTENTIONS},
            "tau_star_by_length": [r.tau_star for r in self.length_rows], "blocks_per_M": self.blocks_per_M,
            "max_params_per_d_per_block": self.params_per_d_per_block, "max_error": self.max_error,
        }


def analyse(p: ComplexityParameters) -> ComplexityAnalysis:
    """Measure both constructions on the chapter's three sweeps (datasets uniform in [-1, 1]^d, seeded)."""
    return ComplexityAnalysis(
        p, tuple(measure(uniform_dataset(p.N, n, p.m, p.d, seed=p.seed), seed=p.seed) for n in p.lengths),
        tuple(measure(uniform_dataset(p.N, p.n_fixed, k, p.d, seed=p.seed), seed=p.seed, resnet=False)
              for k in p.m_values),
        tuple(measure(uniform_dataset(k, p.n_fixed, p.m, p.d, seed=p.seed), seed=p.seed, resnet=False)
              for k in p.N_values))


def verdicts(a: ComplexityAnalysis) -> list[Claim]:
    """The chapter's two claims: depth independent of the input lengths, and O(d Σm_j) parameters."""
    lengths, slopes = a.params.lengths, a.blocks_per_M
    linear = all(x <= MAX_BLOCKS_PER_M + 1e-9 for x in slopes.values())
    return [
        Claim(CHAPTER, SOURCE, "depth independent of the input lengths", "paper",
              "depth independent of the input lengths", f"{a.length_rows[0].hardmax.blocks} blocks at n = "
              f"{lengths[0]} … {lengths[-1]}", "reproduced" if a.constant_in_length else "not observed",
              "same block count at every input length; the weights' size grows instead"),
        Claim(CHAPTER, SOURCE, "O(d Σm_j) parameters", "paper", "O(d Σm_j) parameters",
              f"{slashed(slopes.values())} blocks per unit of Σm_j, at most {significant(a.params_per_d_per_block)} "
              "parameters per d per block", "reproduced" if linear else "not observed",
              "blocks grow linearly in Σm_j with a bounded count per block: the structured count (dense storage is not)"),
    ]
