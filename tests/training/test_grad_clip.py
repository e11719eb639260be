"""A run's ``grad_clip``: each model's gradient norm is bounded on its own, so batched models still follow the same
models trained one at a time and the textbook loop with ``torch.nn.utils.clip_grad_norm_``; the setting is part of a
run's key only when it is set."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from test_batched_training import plain_loop, relative_difference
from tiny_runs import QUIET, tiny_run, restore_threads  # noqa: F401 (autouse fixture)
from transformer_theory.training import Ensemble, RunConfig, Task, TrainOptions, train_task
from transformer_theory.training.data import RunData

#: Small enough that every step of these runs is clipped.
CLIP = 0.05
RUNS = [tiny_run(heads, seed, steps=60, eval_every=1, warmup=10, lr=1e-2, grad_clip=CLIP)
        for heads, seed in (((2, 2), 0), ((1, 2), 1))]


def test_each_models_norm_is_bounded_alone() -> None:
    ensemble = Ensemble(RUNS)
    X, y = zip(*(RunData(run).batch() for run in RUNS))
    total, _ = ensemble.loss(torch.from_numpy(np.stack(X)).float(), torch.from_numpy(np.stack(y)).float())
    total.backward()
    grads = [p.grad.clone() for p in ensemble.module.parameters()]
    before = ensemble.clip_grad_norms(CLIP)
    after = torch.sqrt(sum(p.grad.reshape(len(RUNS), -1).pow(2).sum(dim=1) for p in ensemble.module.parameters()))
    assert (before > CLIP).all() and torch.allclose(after, torch.full_like(after, CLIP), rtol=1e-4)
    for g, p in zip(grads, ensemble.module.parameters()):  # one factor per model: directions unchanged
        for k in range(len(RUNS)):
            assert torch.allclose(p.grad[k], g[k] * CLIP / before[k], rtol=1e-4, atol=1e-12)
    assert ensemble.clip_grad_norms(10.0).allclose(after)  # a norm under the bound is left alone


def test_clipped_models_train_together_as_alone_and_as_the_textbook_loop() -> None:
    options = TrainOptions(**QUIET)
    together = train_task(Task(tuple(RUNS)), options=options)
    alone = [train_task(Task((run,)), options=options)[0] for run in RUNS]
    for a, b in zip(together, alone):  # float32 norms summed in another order: 1e-4, not the unclipped tests' 1e-5
        assert relative_difference(a["history"]["train_loss"], b["history"]["train_loss"]) <= 1e-4
    assert relative_difference(alone[1]["history"]["train_loss"], plain_loop(RUNS[1])) <= 1e-4
    unclipped = train_task(Task((tiny_run((1, 2), 1, steps=60, eval_every=1, warmup=10, lr=1e-2),)), options=options)
    assert relative_difference(unclipped[0]["history"]["train_loss"], alone[1]["history"]["train_loss"]) > 1e-3


def test_the_setting_joins_the_key_only_when_set() -> None:
    plain, clipped = tiny_run(), tiny_run(grad_clip=1.0)
    assert "grad_clip" not in plain.to_dict() and clipped.to_dict()["grad_clip"] == 1.0
    assert clipped.key != plain.key and RunConfig.from_dict(clipped.to_dict()) == clipped
    assert clipped.batch_signature() != plain.batch_signature()
    with pytest.raises(ValueError, match="grad_clip must be a positive finite number"):
        tiny_run(grad_clip=0.0)
