"""K models trained as one tensor program follow the loss curves of the same K trained one at a time,
and one of them follows a plain nn.Module + AdamW loop written out here (same init and data)."""

from __future__ import annotations

import numpy as np
import torch

from tiny_runs import QUIET, tiny_run, restore_threads  # noqa: F401 (autouse fixture)
from transformer_theory.training import Ensemble, Task, TrainOptions, init_model, train_task
from transformer_theory.training.data import RunData
from transformer_theory.training.schedule import learning_rate

STEPS = 100
RUNS = [tiny_run(heads, seed, steps=STEPS, eval_every=1, warmup=10, lr=1e-2)
        for heads, seed in (((2, 2), 0), ((1, 2), 1), ((2, 1), 0))]


def relative_difference(a, b) -> float:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return float(np.max(np.abs(a - b) / np.abs(b)))


def plain_loop(run) -> list[float]:
    """The textbook loop: one model, torch's AdamW, the same schedule, weight decay on weight matrices, and the run's
    ``grad_clip`` by ``torch.nn.utils.clip_grad_norm_``."""
    torch.set_num_threads(1)
    model = init_model(run.model, run.seed)
    data = RunData(run)
    params = list(model.parameters())
    groups = [{"params": [p for p in params if p.dim() >= 2], "weight_decay": run.weight_decay},
              {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0}]
    optimizer = torch.optim.AdamW(groups, lr=run.lr, betas=run.betas)
    losses = []
    for step in range(run.steps):
        X, y = data.batch()
        for g in optimizer.param_groups:
            g["lr"] = learning_rate(run, step)
        optimizer.zero_grad()
        loss = ((model(torch.from_numpy(X).float()) - torch.from_numpy(y).float()) ** 2).mean()
        loss.backward()
        if run.grad_clip is not None:
            torch.nn.utils.clip_grad_norm_(params, run.grad_clip)
        optimizer.step()
        losses.append(loss.item())
    return losses


def test_batched_models_follow_the_one_at_a_time_curves() -> None:
    options = TrainOptions(**QUIET)
    together = train_task(Task(tuple(RUNS)), options=options)
    alone = [train_task(Task((run,)), options=options)[0] for run in RUNS]
    for a, b in zip(together, alone):
        assert len(a["history"]["train_loss"]) == STEPS
        assert relative_difference(a["history"]["train_loss"], b["history"]["train_loss"]) <= 1e-5
        assert relative_difference(a["history"]["val_nmse"], b["history"]["val_nmse"]) <= 1e-5
        assert a["history"]["val_nmse"][-1] < 0.85 * a["history"]["val_nmse"][0]  # they learn
    # the models differ (different heads and seeds), so agreement is not a coincidence of identical runs
    assert len({round(r["history"]["train_loss"][-1], 6) for r in together}) == len(RUNS)
    reference = plain_loop(RUNS[1])
    assert relative_difference(alone[1]["history"]["train_loss"], reference) <= 1e-5


def test_masked_head_slots_stay_exactly_zero() -> None:
    torch.set_num_threads(1)
    ensemble = Ensemble(RUNS)
    assert ensemble.config.heads == (2, 2)
    optimizer = torch.optim.AdamW(ensemble.parameter_groups(1e-2), lr=1e-2)
    x = torch.randn(len(RUNS), 16, 8, 4)
    for _ in range(5):
        optimizer.zero_grad()
        ensemble.loss(x, torch.randn(len(RUNS), 16, 1))[0].backward()
        optimizer.step()
    n, params = 8, dict(ensemble.module.named_parameters())
    for k, run in enumerate(RUNS):
        for layer, h in enumerate(run.model.heads):
            for name in ("to_q", "to_k", "to_v"):
                padded = params[f"blocks.{layer}.{name}.weight"][k, h * n:]
                assert padded.numel() == 0 or torch.count_nonzero(padded) == 0
            assert torch.count_nonzero(params[f"blocks.{layer}.out.weight"][k, :, h * n:]) == 0
        own = ensemble.model(k)
        assert own.config.heads == run.model.heads
        torch.testing.assert_close(own(x[k]), ensemble(x)[k], rtol=1e-5, atol=1e-6)


def test_a_task_is_deterministic() -> None:
    runs = (tiny_run((2, 2), 0), tiny_run((1, 2), 1))
    first, second = (train_task(Task(runs), options=TrainOptions(**QUIET)) for _ in range(2))
    assert [r["history"] for r in first] == [r["history"] for r in second]
