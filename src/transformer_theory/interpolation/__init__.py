"""Paper A: *Exact Sequence Interpolation with Transformers* (Alcalde, Fantuzzi, Zuazua).

Transformer layers (hardmax / softmax attention, both block orders), the hardmax interpolation
construction of Theorem 1.6 (a reconstruction of the paper's four stages), exact rational
evaluation and verification by Hausdorff distance (PyTorch export: :func:`transformer_theory.models.export.to_torch`).
"""

from transformer_theory.interpolation.arithmetic import HARDMAX_TIE_TOL
from transformer_theory.interpolation.attention import SelfAttention
from transformer_theory.interpolation.construction import build_interpolator, paper_num_blocks
from transformer_theory.interpolation.dataset import SequenceDataset
from transformer_theory.interpolation.feed_forward import FeedForward, HatFeedForward
from transformer_theory.interpolation.hausdorff import hausdorff, tolerance, verify
from transformer_theory.interpolation.linear_maps import DenseMatrix, RankOne, ScaledIdentity
from transformer_theory.interpolation.transformer import Block, Transformer

__all__ = [
    "HARDMAX_TIE_TOL",
    "Block",
    "DenseMatrix",
    "FeedForward",
    "HatFeedForward",
    "RankOne",
    "ScaledIdentity",
    "SelfAttention",
    "SequenceDataset",
    "Transformer",
    "build_interpolator",
    "hausdorff",
    "paper_num_blocks",
    "tolerance",
    "verify",
]
