"""Figures of the book: :mod:`~transformer_theory.plotting.style` (the one style) and one module per topic.

Plot functions take computed data (models, arrays, result rows) and return a ``matplotlib`` Figure; they
import the compute packages, which never import this one.
"""
