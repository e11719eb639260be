"""The book's pipeline: checked papermill runs, sweeps, results files with provenance, the report page.

``python -m transformer_theory`` is :mod:`~transformer_theory.pipeline.cli`. Modules: ``paths`` (project
root, writable-output checks), ``profiles``, ``yaml12`` and ``parameters`` (profile files read as YAML 1.2,
checked overrides), ``notebooks`` (the chapters, their ``parameters`` cells, where results are keyed),
``runner`` (one papermill run), ``sweep`` (a grid of runs), ``results`` (``record`` and atomic JSON),
``locks`` (one run per results file), ``processes`` and ``kernels`` (workers and kernels that die with
their parent; signals as exceptions), ``provenance`` (versions, commit, config hash), ``report``
(reproducibility page).
"""
