"""Hypothesis strategies shared by the test packages (``from strategies.interpolation import datasets``)."""
