"""Tiny runs for the engine's tests (a few milliseconds a step on one thread)."""

from __future__ import annotations

import pytest
import torch

from transformer_theory.infoflow.targets import pairwise_max
from transformer_theory.models import TransformerConfig
from transformer_theory.training import RunConfig, register_targets

# the engine knows no target: its tests register the one their runs train on (the chapters register theirs)
register_targets({"pairwise_max": pairwise_max})

#: Options for in-process test runs: no progress bar, one thread (as a Dask worker uses).
QUIET = {"progress": False, "threads": 1}


def tiny_run(heads=(2, 2), seed=0, **changes) -> RunConfig:
    """A two-layer InfoFlow model on pairwise_max(D=2), T = 8, batches of 32."""
    model = TransformerConfig(d=4, heads=tuple(heads), embed_dim=16, head_dim=8, ffn_width=16, encoder_width=16,
                              cls_token=True, readout_dim=1, cls_only_last=True)
    base = dict(model=model, target="pairwise_max", target_args={"D": 2}, seq_len=8, steps=60, batch_size=32,
                val_size=64, eval_every=20, seed=seed)
    return RunConfig(**{**base, **changes})


@pytest.fixture(autouse=True)
def restore_threads():
    """Leave torch's thread count as it was (a task sets it); import this fixture into a test module."""
    previous = torch.get_num_threads()
    yield
    torch.set_num_threads(previous)
