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

from transformer_theory.models.attention import attention_weights, multi_head_attention
from transformer_theory.models.block import Block
from transformer_theory.models.config import TransformerConfig
from transformer_theory.models.transformer import Trace, Transformer

__all__ = ["Block", "Trace", "Transformer", "TransformerConfig", "attention_weights", "multi_head_attention"]
