"""K models of the family trained as one tensor program.

Each run's model is created on its own (its seed, its own head counts) and then zero-padded into a
common number of head slots per layer, the extra heads switched off by a head mask. The padded
parameters are stacked along a leading model axis into one :class:`~transformer_theory.models.Transformer`
built with ``models=K`` (the one implementation, every linear map a batched matrix product; the idea
of PyTorch's model-ensembling recipe without ``vmap``). A padded head has zero weights and receives
zero gradient, so AdamW (elementwise) keeps it at zero: each model follows its own trajectory, and the
total loss is the sum of the per-model means.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from transformer_theory.models.block import head_mask
from transformer_theory.models.config import TransformerConfig
from transformer_theory.models.mechanism import set_retrieval_layer
from transformer_theory.models.transformer import Transformer
from transformer_theory.training.config import RunConfig


def init_model(config: TransformerConfig, seed: int) -> Transformer:
    """The model of ``config`` with PyTorch's default initialisation drawn from ``seed`` (global RNG untouched)."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return Transformer(config)


def initial_model(run: RunConfig) -> Transformer:
    """The model ``run`` starts from: :func:`init_model`, with the first layer set at the target's retrieval
    mechanism when ``run.init == "oracle"`` (:func:`~transformer_theory.models.mechanism.set_retrieval_layer`)."""
    model = init_model(run.model, run.seed)
    if run.init == "oracle":
        set_retrieval_layer(model, run.tree().params["A"], run.init_sharpness)
    return model


def common_heads(configs: Sequence[TransformerConfig]) -> tuple[int, ...]:
    """Head slots per layer that hold every model of ``configs``."""
    layers = {c.n_layers for c in configs}
    if len(layers) != 1:
        raise ValueError(f"models to batch must have the same number of layers, got {sorted(layers)}")
    return tuple(max(c.heads[layer] for c in configs) for layer in range(layers.pop()))


def _corner(shape: Sequence[int]) -> tuple[slice, ...]:
    return tuple(slice(0, s) for s in shape)


def pad_state(state: dict[str, torch.Tensor], shapes: dict[str, torch.Size]) -> dict[str, torch.Tensor]:
    """``state`` written into the leading corner of zero tensors of the padded ``shapes``.

    Head i of a layer owns rows ``i·n … (i+1)·n − 1`` of ``to_q``/``to_k``/``to_v`` and the matching
    columns of ``out``, so the first h heads of the padded model are the h heads of the original.

    Args:
        state: One model's parameters by name.
        shapes: The padded shape of each parameter (without the model axis); every name must be in ``state``.

    Returns:
        The padded parameters by name.
    """
    out = {}
    for name, shape in shapes.items():
        source = state[name].detach()
        value = source.new_zeros(shape)
        value[_corner(source.shape)] = source
        out[name] = value
    return out


class Ensemble:
    """The models of ``runs`` (one batch signature) as one module with a model axis, on ``device``."""

    def __init__(self, runs: Sequence[RunConfig], device: str | torch.device = "cpu") -> None:
        if not runs or len({r.batch_signature() for r in runs}) != 1:
            raise ValueError("runs: an ensemble needs one or more runs with the same batch signature")
        self.runs = list(runs)
        heads = common_heads([r.model for r in runs])
        self.config = runs[0].model.padded(heads)
        self.module = Transformer(self.config, models=len(runs))
        padded = {name: p.shape[1:] for name, p in self.module.named_parameters()}
        states, self.shapes = [], []
        for run in runs:
            model = initial_model(run)
            self.shapes.append({name: p.shape for name, p in model.named_parameters()})
            states.append(pad_state(dict(model.named_parameters()), padded))
        with torch.no_grad():
            for name, p in self.module.named_parameters():
                p.copy_(torch.stack([s[name] for s in states]))
            for layer, block in enumerate(self.module.blocks):
                block.head_mask.copy_(torch.stack([head_mask(r.model.padded(heads), layer) for r in runs]))
        self.module.to(device)

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        """Outputs (K, B, m) for inputs (K, B, T, d): model k on ``x[k]``."""
        return self.module(x)

    def loss(self, x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(sum of the per-model mean squared errors, the per-model MSEs) for inputs x and targets y (K, B, m)."""
        per_model = ((self.module(x) - y) ** 2).mean(dim=(1, 2))
        return per_model.sum(), per_model

    def parameter_groups(self, weight_decay: float) -> list[dict]:
        """AdamW groups: weight matrices and the positional encodings decay; biases, ρ, η and CLS do not."""
        params = list(self.module.parameters())
        return [{"params": [p for p in params if p.dim() >= 3], "weight_decay": weight_decay},
                {"params": [p for p in params if p.dim() < 3], "weight_decay": 0.0}]

    def clip_grad_norms(self, max_norm: float) -> torch.Tensor:
        """Scale each model's gradients (the slices of the model axis) so that its norm over all its parameters is at
        most ``max_norm``, as ``torch.nn.utils.clip_grad_norm_`` would on that model alone; the models stay
        independent. Returns the norms before clipping (one per model)."""
        grads = [p.grad for p in self.module.parameters() if p.grad is not None]
        norms = torch.sqrt(sum(g.reshape(len(self.runs), -1).pow(2).sum(dim=1) for g in grads))
        scale = (max_norm / (norms + 1e-6)).clamp(max=1.0)
        for g in grads:
            g.mul_(scale.view(-1, *[1] * (g.dim() - 1)))
        return norms

    def state_dict(self, index: int) -> dict[str, torch.Tensor]:
        """The parameters of model ``index`` in its own (unpadded) shapes, on the CPU."""
        params = dict(self.module.named_parameters())
        return {name: params[name].detach()[index][_corner(shape)].cpu().clone()
                for name, shape in self.shapes[index].items()}

    def model(self, index: int) -> Transformer:
        """Model ``index`` as a plain module with its own head counts."""
        model = init_model(self.runs[index].model, self.runs[index].seed)
        model.load_state_dict(self.state_dict(index))
        return model
