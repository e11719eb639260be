"""Paper B: InfoFlow (Yu, Jiang, Bao, Li 2026, arXiv 2605.17930) as a library.

The paper's full text was not available to this project: the framework is implemented from two
secondary summaries, the seed summary and the predecessor paper P1 (Yu et al. 2026, head count).
Definitions marked **[INF]** in the docstrings are reconstructions (``shared/papers/infoflow-spec.md``).

* :class:`Architecture` -- heads per layer, embedding and token dimension, positional encoding.
* :mod:`~transformer_theory.infoflow.targets` -- the papers' targets as comparison trees that are
  also evaluable on data (:mod:`~transformer_theory.infoflow.trees` to write new ones).
* :func:`comparison_stats` -- comparison order, dimension per level, depth, comparison number.
* :func:`propagate` -- information sets ``I(t, l)`` under the best schedule, with propagation modes.
* :func:`predict` -- efficient or not, cost exponent (Theorem 3's cost law), bottleneck.
"""

from transformer_theory.infoflow import targets
from transformer_theory.infoflow.architecture import Architecture
from transformer_theory.infoflow.prediction import Prediction, cost_law_exponent, p1_single_layer_exponent, predict
from transformer_theory.infoflow.propagation import Propagation, Step, Sym, propagate
from transformer_theory.infoflow.schedule import Bottleneck, Placement, Schedule, find_schedule
from transformer_theory.infoflow.stats import ComparisonStats, comparison_capacity, comparison_stats
from transformer_theory.infoflow.targets import (kth_largest, max_retrieval, min_pairwise_dot, pairwise_max,
                                                 specific_positions, triangle_center)
from transformer_theory.infoflow.trees import (Bilinear, Custom, GaussianInputs, Linear, NormOfSum, Positions,
                                               Reduction, Tree)

__all__ = [
    "Architecture", "targets", "Tree", "Reduction", "Positions", "Linear", "Bilinear", "NormOfSum", "Custom",
    "GaussianInputs", "max_retrieval", "pairwise_max", "min_pairwise_dot", "kth_largest", "specific_positions",
    "triangle_center", "comparison_stats", "ComparisonStats", "comparison_capacity", "propagate", "Propagation",
    "Step", "Sym", "predict", "Prediction", "cost_law_exponent", "p1_single_layer_exponent", "find_schedule",
    "Schedule", "Placement", "Bottleneck",
]
