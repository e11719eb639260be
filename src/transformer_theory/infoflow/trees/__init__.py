"""Comparison trees: a target written as nested max/min reductions over token positions.

InfoFlow (Yu, Jiang, Bao, Li 2026, arXiv 2605.17930) measures a target by its *comparison tree*; the
names (comparison tree, order beta', dimension beta_1, comparison number) are the paper's as
summarised, **the definitions used here are a reconstruction** (see the book's page on how it
reconstructs the papers):

* the root combines its *terms* (a sum by default, or any smooth ``F0``);
* a :class:`Reduction` is ``max``/``min`` (or the k-th largest / smallest) over one bound position
  variable of a *score*; the score may read the bound variable, variables bound by enclosing
  reductions (its *free* variables) and the values of nested reductions;
* a :class:`Positions` node reads a fixed, content-independent set of positions (needs positional
  encoding in the model).

The same object is **evaluable on data**: :meth:`Tree.__call__` evaluates every reduction generically
(one vectorised evaluator for every tree, hand-written or library-made), so the targets of
:mod:`transformer_theory.infoflow.targets` also generate the training data of the experiment chapters.
A nested node is evaluated once per value of its own free variables (so a chain of ``k`` nested
pointer look-ups costs ``k T^2`` per sample, not ``T^(k+1)``).

Writing a new tree::

    from transformer_theory.infoflow.trees import Tree, Reduction, Linear, Bilinear, Custom
    inner = Reduction("max", "s", Bilinear("s", "t", A), label="s")     # m(t) = max_s x(s)^T A x(t)
    outer = Reduction("min", "t", Custom(lambda xt, m: m - xt[..., 0], ("t", inner)), label="t")
    tree = Tree([outer], input_dim=4, name="my target")                  # min_t [m(t) - x(t)_1]
    y = tree(X)                                                          # X: (batch, T, 4)

Scores combine with ``+``, ``-`` and scalar ``*`` (:class:`Sum`), e.g. ``Linear("t", a) + inner``.
Parameters are checked against the token dimension when the :class:`Tree` is built, and every
:class:`Custom` function is run once on random inputs then (it must return one value per position;
a declared ``symmetric=True`` is verified).

The package: :mod:`.context` (the evaluation layout), :mod:`.expressions` (scores and the node base),
:mod:`.nodes` (reductions and position reads), :mod:`.inputs` (input distributions), :mod:`.tree` (the tree).
"""

from transformer_theory.infoflow.trees.context import EvalContext
from transformer_theory.infoflow.trees.expressions import (PROBE_SAMPLES, Bilinear, Custom, Expr, Linear, Node,
                                                           NormOfSum, Sum, check_variable)
from transformer_theory.infoflow.trees.inputs import GaussianInputs, InputDistribution, PointerCycleInputs
from transformer_theory.infoflow.trees.nodes import Positions, Reduction, ordinal
from transformer_theory.infoflow.trees.tree import EVAL_BUDGET, NodeInfo, Tree

__all__ = [
    "EVAL_BUDGET", "PROBE_SAMPLES", "Bilinear", "Custom", "EvalContext", "Expr", "GaussianInputs", "InputDistribution",
    "Linear", "Node", "NodeInfo", "NormOfSum", "PointerCycleInputs", "Positions", "Reduction", "Sum", "Tree",
    "check_variable", "ordinal",
]
