"""Paper B: InfoFlow (Yu, Jiang, Bao, Li 2026, arXiv 2605.17930) as a library.

The paper's full text was not available to this project: the framework is implemented from secondary
summaries of it and from the predecessor paper P1 (Yu et al. 2026, head count, arXiv 2510.06662).
Definitions marked **reconstruction** in the docstrings are ours (see the book's page on how it
reconstructs the papers).

* :class:`Architecture` -- heads per layer, embedding and token dimension, positional encoding.
* :mod:`~transformer_theory.infoflow.targets` -- the papers' targets as comparison trees that are
  also evaluable on data (:mod:`~transformer_theory.infoflow.trees` to write new ones).
* :func:`parse_target` -- a target from text: a named target (``"pairwise_max(D=2)"``) or an expression
  (``"max_t a^T x(t) + max_s b^T x(s)"``, :mod:`~transformer_theory.infoflow.expression`).
* :func:`comparison_stats` -- comparison order, dimension per level, depth, comparison number.
* :func:`canonicalize` -- the jobs a schedule places (the same for every plain rewrite of a tree).
* :func:`propagate` -- information sets ``I(t, l)`` under the best schedule, with propagation modes.
* :func:`predict` -- efficient or not, cost exponent (Theorem 3's cost law), bottleneck (of a tree or a text);
  :func:`minimal_depth` -- the fewest layers for which a target is predicted efficient.
* :mod:`~transformer_theory.infoflow.heldout` -- the held-out suite (predictions committed before training).
"""

from transformer_theory.infoflow import targets
from transformer_theory.infoflow.architecture import Architecture
from transformer_theory.infoflow.canonical import Canonical, Job, canonicalize
from transformer_theory.infoflow.expression import ExpressionError, parse_target
from transformer_theory.infoflow.prediction import (Prediction, cost_law_exponent, minimal_depth,
                                                    p1_single_layer_exponent, predict, theorem2_exponent)
from transformer_theory.infoflow.propagation import Propagation, Step, Sym, propagate
from transformer_theory.infoflow.schedule import Bottleneck, Placement, Schedule, find_schedule
from transformer_theory.infoflow.stats import ComparisonStats, comparison_capacity, comparison_stats
from transformer_theory.infoflow.targets import (coupled_positions, k_hop, kth_largest, masked_kth_largest,
                                                 max_retrieval, min_pairwise_dot, pairwise_max, specific_positions,
                                                 triangle_center)
from transformer_theory.infoflow.trees import (Bilinear, Custom, GaussianInputs, Linear, NormOfSum,
                                               PointerCycleInputs, Positions, Reduction, Sum, Tree)

__all__ = [
    "Architecture", "targets", "parse_target", "ExpressionError", "Tree", "Reduction", "Positions", "Linear", "Bilinear", "NormOfSum", "Custom", "Sum",
    "GaussianInputs", "PointerCycleInputs", "max_retrieval", "pairwise_max", "min_pairwise_dot", "kth_largest",
    "masked_kth_largest", "specific_positions", "coupled_positions", "triangle_center", "k_hop", "comparison_stats",
    "ComparisonStats", "comparison_capacity", "canonicalize", "Canonical", "Job", "propagate", "Propagation", "Step",
    "Sym", "predict", "Prediction",
    "cost_law_exponent", "p1_single_layer_exponent", "theorem2_exponent", "minimal_depth", "find_schedule",
    "Schedule", "Placement", "Bottleneck",
]
