"""What defines one training run, and the key it is stored under.

A run is a model of the family, a registered target (:mod:`~transformer_theory.training.registry`) at a
sequence length, the optimiser settings and a seed. Defaults follow the common training of InfoFlow (Yu et al.
2026, §4: AdamW, weight decay 1e-2, cosine annealing) with the sizes this project measured on CPU
(batch 256, lr 3e-3 with a 200-step warm-up).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from transformer_theory.checks import (finite_real, is_integer, non_negative_int, non_negative_real, one_of,
                                       positive_int, positive_real, seed_value)
from transformer_theory.infoflow.trees import Tree
from transformer_theory.models.config import TransformerConfig
from transformer_theory.models.mechanism import retrieval_layer_problems
from transformer_theory.training.registry import target_function

#: Bumped whenever the meaning of a stored run changes (data, loss, optimiser, schedule, metric):
#: results of another version are recomputed, never reused.
ENGINE_VERSION = 1

#: How a run's model starts: PyTorch's default initialisation, or with its first layer at the mechanism.
INITS = ("random", "oracle")


@dataclass(frozen=True)
class RunConfig:
    """One run: ``model`` trained on ``target(**target_args)`` with sequences of ``seq_len`` tokens (``target``
    names a function of :mod:`~transformer_theory.training.registry`).

    ``steps`` AdamW steps on batches of ``batch_size``; the learning rate rises linearly over ``warmup``
    steps to ``lr`` and decays by a half cosine to ``lr·min_lr_ratio`` at the last step. Weight decay
    applies to weight matrices (not to biases, residual scalars, CLS token). ``train_size=None`` draws a
    fresh batch every step; an integer fixes a training set of that size (shuffled every epoch).
    Validation: NMSE = MSE / Var(y) on ``val_size`` held-out samples every ``eval_every`` steps and at
    the end (InfoFlow §4; the predecessor's Appendix B.1.1). Targets are standardised for training.
    ``seed`` fixes the initialisation and every data draw. ``term_stages`` trains on the target's leading terms
    before the full target (a curriculum); ``grad_clip`` bounds each model's gradient norm (``None``: no clipping).
    """

    model: TransformerConfig
    target: str
    seq_len: int
    steps: int
    target_args: dict[str, Any] = field(default_factory=dict)
    batch_size: int = 256
    lr: float = 3e-3
    warmup: int = 200
    min_lr_ratio: float = 0.0
    weight_decay: float = 1e-2
    betas: tuple[float, float] = (0.9, 0.999)
    train_size: int | None = None
    val_size: int = 4096
    eval_every: int = 100
    seed: int = 0
    init: str = "random"
    init_sharpness: float = 20.0
    term_stages: tuple[int, ...] = ()
    grad_clip: float | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.model, TransformerConfig):
            raise ValueError(f"model must be a TransformerConfig, got {type(self.model).__name__}")
        target_function(self.target)
        if not isinstance(self.target_args, dict):
            raise ValueError(f"target_args must be a dict, got {self.target_args!r}")
        positive_int("seq_len", self.seq_len)
        positive_int("steps", self.steps)
        positive_int("batch_size", self.batch_size)
        positive_real("lr", self.lr)
        non_negative_int("warmup", self.warmup)
        if not 0 <= non_negative_real("min_lr_ratio", self.min_lr_ratio) <= 1:
            raise ValueError(f"min_lr_ratio must lie in [0, 1], got {self.min_lr_ratio!r}")
        non_negative_real("weight_decay", self.weight_decay)
        betas = tuple(self.betas)
        if len(betas) != 2 or not all(0 <= finite_real("betas", b) < 1 for b in betas):
            raise ValueError(f"betas must be two numbers in [0, 1), got {self.betas!r}")
        object.__setattr__(self, "betas", tuple(float(b) for b in betas))
        if self.train_size is not None and positive_int("train_size", self.train_size) < self.batch_size:
            raise ValueError(f"train_size = {self.train_size} is smaller than batch_size = {self.batch_size}")
        positive_int("val_size", self.val_size)
        positive_int("eval_every", self.eval_every)
        seed_value(self.seed)
        if self.model.cls_token and self.model.readout_dim is None:
            raise ValueError("model: a trained model needs a CLS readout (readout_dim)")
        if self.model.max_len is not None and self.model.max_len < self.seq_len:
            raise ValueError(f"model.max_len = {self.model.max_len} is shorter than seq_len = {self.seq_len}")
        one_of("init", self.init, INITS)
        positive_real("init_sharpness", self.init_sharpness)
        if isinstance(self.term_stages, (str, bytes)) or not hasattr(self.term_stages, "__iter__"):
            raise ValueError(f"term_stages must be a list of steps, got {self.term_stages!r}")
        stages = tuple(positive_int(f"term_stages[{i}]", s) for i, s in enumerate(self.term_stages))
        object.__setattr__(self, "term_stages", stages)
        if any(b <= a for a, b in zip(stages, stages[1:])) or (stages and stages[-1] >= self.steps):
            raise ValueError(f"term_stages must increase strictly and end before steps = {self.steps}, got "
                             f"{list(stages)}")
        if self.grad_clip is not None:
            object.__setattr__(self, "grad_clip", positive_real("grad_clip", self.grad_clip))
        if self.init == "oracle" or stages:
            self._check_target_structure()

    def _check_target_structure(self) -> None:
        tree = self.tree()
        if self.term_stages and (tree.combine != "sum" or len(self.term_stages) >= len(tree.terms)):
            raise ValueError(f"term_stages: {len(self.term_stages)} stages before the full target need a target that "
                             f"sums more terms than that; {tree.name} has {len(tree.terms)}"
                             + ("" if tree.combine == "sum" else " and does not sum them"))
        if self.init == "oracle":
            A = np.asarray(tree.params.get("A", ()))
            if A.ndim != 3:
                raise ValueError(f"init='oracle' needs a target with matrices A_i (params['A'] of shape (D, d, d)); "
                                 f"{tree.name} has none")
            problems = retrieval_layer_problems(self.model, A.shape[1], len(A))
            if problems:
                raise ValueError("init='oracle': the model cannot hold the retrieval mechanism: it needs "
                                 + "; ".join(problems))

    def stage_tree(self, step: int) -> Tree:
        """The target the model trains on at update ``step`` (0-based): the full target, or the leading terms of
        the curriculum's stage (``term_stages``)."""
        tree = self.tree()
        k = sum(step >= s for s in self.term_stages) + 1
        return tree if k > len(self.term_stages) else tree.leading_terms(k)

    def tree(self) -> Tree:
        """The target: the registered function of that name called with ``target_args``."""
        return target_function(self.target)(**self.target_args)

    def to_dict(self) -> dict[str, Any]:
        """The full configuration as JSON types."""
        data = asdict(self)
        data["model"] = self.model.to_dict()
        data["betas"] = list(self.betas)
        if self.init == "random":
            del data["init"], data["init_sharpness"]
        if not self.term_stages:
            del data["term_stages"]
        if self.grad_clip is None:
            del data["grad_clip"]
        return _plain(data)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "RunConfig":
        """The run of a :meth:`to_dict` (a stored record's ``config``)."""
        data = dict(data)
        data["model"] = TransformerConfig.from_dict(data["model"])
        data["betas"] = tuple(data["betas"])
        data["term_stages"] = tuple(data.get("term_stages", ()))
        return cls(**data)

    @property
    def key(self) -> str:
        """Hash of the full configuration and :data:`ENGINE_VERSION` (the run's name in a store)."""
        return config_key(self.to_dict(), {"engine_version": ENGINE_VERSION})

    def batch_signature(self) -> str:
        """Runs with the same signature can train in one tensor program: everything but the seed, the
        target's parameters and the head counts (which become head masks) must agree."""
        data = self.to_dict()
        for name in ("seed", "target_args"):
            data.pop(name)
        data["target"] = None
        for name in ("heads", "active_heads"):
            data["model"].pop(name)
        data["n_layers"] = self.model.n_layers
        return json.dumps(data, sort_keys=True)


def config_key(config: dict[str, Any], versions: dict[str, int]) -> str:
    """The name of a stored run; a run of another version gets another name.

    Args:
        config: The run's full configuration, as JSON types.
        versions: The versions of the code that give the run its meaning (``{"engine_version": 1}``).

    Returns:
        A 20-character hex digest of both.
    """
    blob = json.dumps({**versions, "run": config}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:20]


def _plain(value: Any) -> Any:
    """Tuples as lists and NumPy/integral scalars as Python numbers, recursively (stable JSON)."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if is_integer(value):
        return int(value)
    if hasattr(value, "item"):
        return value.item()
    return value
