"""A linear map that may carry a leading model axis: K independent maps applied to K inputs at once.

Without a model axis it is ``torch.nn.Linear`` (same parameters, same default initialisation, drawn in
the same order, same ``F.linear`` evaluation). With ``models=K`` the weight is (K, out, in) and the
bias (K, out); the input (K, ..., in) is mapped by one batched matrix product (bias fused), so K
models of the family run as one tensor program (PyTorch's model-ensembling idea, without ``vmap``).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn


class Linear(nn.Module):
    """``y = x Wᵀ + b``, optionally for K models at once (``models=K``: parameters left uninitialised,
    to be loaded from K separately initialised models)."""

    def __init__(self, in_features: int, out_features: int, bias: bool = True, *, models: int | None = None,
                 dtype: torch.dtype | None = None) -> None:
        super().__init__()
        self.in_features, self.out_features, self.models = in_features, out_features, models
        lead = () if models is None else (models,)
        self.weight = nn.Parameter(torch.empty(*lead, out_features, in_features, dtype=dtype))
        self.bias = nn.Parameter(torch.empty(*lead, out_features, dtype=dtype)) if bias else None
        if models is None:
            self.reset_parameters()

    def reset_parameters(self) -> None:
        """``nn.Linear``'s default initialisation (Kaiming-uniform weight, uniform bias), same draws."""
        nn.init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            bound = 1 / math.sqrt(self.in_features) if self.in_features > 0 else 0
            nn.init.uniform_(self.bias, -bound, bound)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.models is None:
            return F.linear(x, self.weight, self.bias)
        flat = x.reshape(self.models, -1, self.in_features)
        if self.bias is None:
            y = torch.bmm(flat, self.weight.transpose(1, 2))
        else:
            y = torch.baddbmm(self.bias.unsqueeze(1), flat, self.weight.transpose(1, 2))
        return y.view(*x.shape[:-1], self.out_features)

    def extra_repr(self) -> str:
        axis = f", models={self.models}" if self.models is not None else ""
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}{axis}"
