"""transformer-theory: an executable companion to two transformer-theory papers.

Paper A: Alcalde, Fantuzzi, Zuazua, *Exact Sequence Interpolation with Transformers* (arXiv 2502.02270),
in :mod:`transformer_theory.interpolation`.
Paper B: Yu, Jiang, Bao, Li, *InfoFlow* (arXiv 2605.17930), in :mod:`transformer_theory.infoflow`.

The notebook API is one import line::

    from transformer_theory import kernel_context, seed_everything, use_style

``kernel_context()`` gives the notebook its context (profile, run store, and ``record`` for its key numbers; see
:mod:`transformer_theory.pipeline.context`). The three names are loaded on first use, so importing a compute
package (``interpolation``, ``infoflow``) does not pull in torch, matplotlib or the pipeline.
"""

from __future__ import annotations

from transformer_theory.lazy import lazy_names

__version__ = "0.1.0"

#: name -> module that defines it (loaded lazily, PEP 562)
_NOTEBOOK_API = {
    "kernel_context": "transformer_theory.pipeline.context",
    "seed_everything": "transformer_theory.seeding",
    "use_style": "transformer_theory.plotting.style",
}

__all__ = list(_NOTEBOOK_API)
__getattr__, __dir__ = lazy_names(__name__, _NOTEBOOK_API, globals())
