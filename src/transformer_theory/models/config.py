"""The configuration of the project's one transformer family (in the spirit of nanoGPT's ``GPTConfig``).

One dataclass describes every torch transformer of the book:

* the InfoFlow / P1 models (Yu et al. 2026, arXiv 2605.17930 §4; the predecessor's eq. 4): a ReLU MLP
  encoder d→E, a trainable CLS token, L blocks of residual multi-head self-attention (per-head dimension
  n, scores q·k/√n) and a residual GeLU FFN, no LayerNorm, a linear readout of the CLS token;
* Paper A's constructed transformer (Alcalde, Fantuzzi, Zuazua 2025, §2, Fig. 3): blocks
  ``SA(X) = ρ X + π(X) V X`` after ``FF(x) = η x + W σ(U x + b)``, hardmax or softmax attention, one head
  whose query/key maps realise the score matrix A, no output projection;
* the Tikhonov model of Paper A §6 (the official ``TF`` class): one block, SA then FF, learned ρ and η.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any

from transformer_theory.checks import (finite_real, non_negative_int, non_negative_real, one_of, positive_int,
                                       positive_real)

ATTENTIONS = ("softmax", "hardmax")
ACTIVATIONS = ("gelu", "relu")
FFN_KINDS = ("mlp", "gated")
RESIDUALS = ("fixed", "learned")
ORDERS = ("sa_ff", "ff_sa")
DTYPES = ("float32", "float64")


def _int_tuple(name: str, value: Any, check=positive_int) -> tuple[int, ...]:
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
        raise ValueError(f"{name} must be a sequence of integers, got {value!r}")
    values = tuple(check(f"{name}[{i}]", v) for i, v in enumerate(value))
    if not values:
        raise ValueError(f"{name} must not be empty")
    return values


@dataclass(frozen=True)
class TransformerConfig:
    """Architecture of one model; the block count is ``len(heads)``.

    ``embed_dim`` E is the width of the residual stream (``None``: the token dimension ``d``, which
    needs no encoder). ``head_dim`` is the per-head query/key dimension n, ``value_dim`` the per-head
    value dimension (``None``: n); ``attention_bias`` adds biases to the query, key, value and output maps
    (the predecessor's eq. 4 and Paper A have none). Scores are ``q·k / (temperature·√n)`` with
    ``scale_scores``, else ``q·k / temperature``; ``hardmax`` attention averages uniformly over the keys whose raw score lies
    within ``hardmax_tie_tol·(1 + |max|)`` of the maximum (Paper A, Fig. 2). Residual weights ρ (attention)
    and η (feed-forward) are constants (``residual="fixed"``) or learned scalars initialised at
    ``rho``/``eta``. ``ffn_width=0`` drops the FF map (the FF layer is then ``η x``).

    ``active_heads`` (``None``: all) keeps the first ``active_heads[l]`` heads of layer l and masks the
    others, so models with different head counts share one tensor program. ``cls_only_last`` computes
    only the CLS query in the last block (the output is the same: only the CLS token is read out).

    ``joint_positions`` encodes each token with its position, as the token map of InfoFlow's predecessor
    (Yu et al., ICLR 2026) does: a learned (max_len, encoder_width) table P enters the encoder's hidden
    pre-activation, ``Pφ(x(t), t) = W₂ relu(W₁ x(t) + b₁ + P[t]) + b₂``, instead of (not besides) the residual
    stream's positional encoding, so position can route content through the ReLU. It needs ``max_len`` and
    an encoder; when False (the default) it is left out of :meth:`to_dict`, so existing run keys stay as
    they were.
    """

    d: int
    heads: tuple[int, ...]
    embed_dim: int | None = None
    head_dim: int = 16
    value_dim: int | None = None
    out_proj: bool = True
    attention_bias: bool = False
    ffn_width: int = 64
    activation: str = "gelu"
    ffn_kind: str = "mlp"
    ffn_out_bias: bool = True
    attention: str = "softmax"
    temperature: float = 1.0
    scale_scores: bool = True
    hardmax_tie_tol: float = 0.0
    residual: str = "fixed"
    rho: float = 1.0
    eta: float = 1.0
    order: str = "sa_ff"
    encoder_width: int | None = None
    max_len: int | None = None
    cls_token: bool = False
    readout_dim: int | None = None
    cls_only_last: bool = False
    active_heads: tuple[int, ...] | None = None
    dtype: str = "float32"
    joint_positions: bool = False

    def __post_init__(self) -> None:
        positive_int("d", self.d)
        object.__setattr__(self, "heads", _int_tuple("heads", self.heads))
        if self.embed_dim is not None:
            positive_int("embed_dim", self.embed_dim)
        positive_int("head_dim", self.head_dim)
        if self.value_dim is not None:
            positive_int("value_dim", self.value_dim)
        non_negative_int("ffn_width", self.ffn_width)
        one_of("activation", self.activation, ACTIVATIONS)
        one_of("ffn_kind", self.ffn_kind, FFN_KINDS)
        one_of("attention", self.attention, ATTENTIONS)
        positive_real("temperature", self.temperature)
        non_negative_real("hardmax_tie_tol", self.hardmax_tie_tol)
        one_of("residual", self.residual, RESIDUALS)
        for name in ("rho", "eta"):
            object.__setattr__(self, name, finite_real(name, getattr(self, name)))
        one_of("order", self.order, ORDERS)
        one_of("dtype", self.dtype, DTYPES)
        if self.encoder_width is not None:
            positive_int("encoder_width", self.encoder_width)
        elif self.embed_dim not in (None, self.d):
            raise ValueError(f"embed_dim = {self.embed_dim} differs from d = {self.d}: that needs an encoder "
                             "(encoder_width)")
        if self.max_len is not None:
            positive_int("max_len", self.max_len)
        if not isinstance(self.joint_positions, bool):
            raise ValueError(f"joint_positions must be a bool, got {self.joint_positions!r}")
        if self.joint_positions and (self.max_len is None or self.encoder_width is None):
            raise ValueError("joint_positions needs max_len and an encoder (encoder_width): the positions enter "
                             "the encoder's hidden layer")
        if self.readout_dim is not None:
            positive_int("readout_dim", self.readout_dim)
            if not self.cls_token:
                raise ValueError("readout_dim needs cls_token=True (the readout reads the CLS token)")
        if self.cls_only_last and self.readout_dim is None:
            raise ValueError("cls_only_last needs a CLS readout (readout_dim)")
        if self.active_heads is not None:
            active = _int_tuple("active_heads", self.active_heads)
            if len(active) != len(self.heads) or any(a > h for a, h in zip(active, self.heads)):
                raise ValueError(f"active_heads {active} must give at most heads {self.heads} per layer")
            object.__setattr__(self, "active_heads", active)

    @property
    def n_layers(self) -> int:
        return len(self.heads)

    @property
    def width(self) -> int:
        """E, the width of the residual stream."""
        return self.embed_dim if self.embed_dim is not None else self.d

    @property
    def v_dim(self) -> int:
        return self.value_dim if self.value_dim is not None else self.head_dim

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able values (tuples as lists); ``joint_positions`` and ``ffn_kind`` only when not their defaults
        (the keys of runs that predate them stay as they were)."""
        data = {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(self).items()}
        if not self.joint_positions:
            del data["joint_positions"]
        if self.ffn_kind == "mlp":
            del data["ffn_kind"]
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "TransformerConfig":
        return cls(**{k: tuple(v) if isinstance(v, list) else v for k, v in data.items()})

    def padded(self, heads: tuple[int, ...]) -> "TransformerConfig":
        """This model inside ``heads`` head slots per layer, the extra heads masked (see ``active_heads``)."""
        active = self.active_heads or self.heads
        return replace(self, heads=tuple(heads), active_heads=active)
