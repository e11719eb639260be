"""The book's pipeline, the top layer: checked papermill runs, sweeps, the report page.

``python -m transformer_theory`` is :mod:`~transformer_theory.pipeline.cli`. Modules: ``profiles``, ``yaml12``
and ``parameters`` (profile files read as YAML 1.2, checked overrides), ``notebooks`` (the chapters, their
``parameters`` cells, where results are keyed), ``runner`` (one papermill run), ``sweep`` (a grid of runs),
``locks`` (one run per results file), ``processes`` and ``kernels`` (workers and kernels that die with
their parent; signals as exceptions), ``report`` (reproducibility page), ``reproduce``, ``rerun``, ``claims``;
``context`` (the one place that reads what the runner tells a kernel: ``kernel_context()``, a notebook's
:class:`~transformer_theory.training.context.Context`). Paths, results files (the ``Recorder`` of a notebook's key
numbers, atomic JSON) and provenance are the storage layer's (:mod:`transformer_theory.storage`), which training
and the chapters use too.
"""
