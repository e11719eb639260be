"""The book's pipeline: checked papermill runs, sweeps, results files with provenance, the report page.

``python -m transformer_theory`` is :mod:`~transformer_theory.pipeline.cli`. Modules: ``paths`` (project
root), ``profiles`` and ``parameters`` (profile files, checked overrides), ``notebooks`` (the chapters and
their ``parameters`` cells), ``runner`` (one papermill run), ``sweep`` (a grid of runs), ``results``
(``record`` and atomic JSON), ``provenance`` (versions, commit, config hash), ``report`` (reproducibility page).
"""
