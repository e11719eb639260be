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

from transformer_theory.lazy import lazy_names

#: name -> module that defines it, loaded on first use (PEP 562, :mod:`transformer_theory.lazy`): the
#: configuration (:mod:`.config`) does not pull in torch.
_NAMES = {
    "attention_weights": "transformer_theory.models.attention",
    "multi_head_attention": "transformer_theory.models.attention", "Block": "transformer_theory.models.block",
    "TransformerConfig": "transformer_theory.models.config", "Trace": "transformer_theory.models.transformer",
    "Transformer": "transformer_theory.models.transformer",
}

__all__ = sorted(_NAMES)
__getattr__, __dir__ = lazy_names(__name__, _NAMES, globals())
