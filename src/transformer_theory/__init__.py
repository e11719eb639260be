"""transformer-theory: an executable companion to two transformer-theory papers.

Paper A: Alcalde, Fantuzzi, Zuazua, *Exact Sequence Interpolation with Transformers* (arXiv 2502.02270),
in :mod:`transformer_theory.interpolation`.
Paper B: Yu, Jiang, Bao, Li, *InfoFlow* (arXiv 2605.17930), in :mod:`transformer_theory.infoflow`.
"""

__version__ = "0.1.0"
