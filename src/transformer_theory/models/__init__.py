"""The project's one torch transformer family: a config dataclass and a plain ``nn.Module``.

* :class:`TransformerConfig` -- heads per layer, widths, attention kind and temperature, residual
  weights, block order, encoder, positional encoding, CLS token and readout, head masks.
* :class:`Transformer` -- the model (``trace`` returns its internals, a :class:`Trace`); :class:`Block` --
  one block (a one-block model on its own).
* :func:`multi_head_attention` -- the one implementation of attention.
* :func:`~transformer_theory.models.export.to_torch` -- Paper A's constructed transformers as members
  of the family (import it from :mod:`transformer_theory.models.export`).
* :mod:`.tikhonov` -- the one-block model of Paper A §6 (:class:`~.tikhonov.TikhonovTransformer`, a :class:`Block`),
  its synthetic data and its exact interpolant.
"""

from __future__ import annotations

import importlib
from typing import Any

#: name -> module that defines it, loaded on first use (PEP 562): the configuration (:mod:`.config`) does not pull in
#: torch.
_NAMES = {
    "attention_weights": "attention", "multi_head_attention": "attention", "Block": "block",
    "TransformerConfig": "config", "Trace": "transformer", "Transformer": "transformer",
}

__all__ = sorted(_NAMES)


def __getattr__(name: str) -> Any:
    if name in _NAMES:
        return getattr(importlib.import_module(f"{__name__}.{_NAMES[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
