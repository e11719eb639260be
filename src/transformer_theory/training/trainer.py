"""Training one task: its runs' models trained together, evaluated, checkpointed and stored.

AdamW (elementwise; a run's ``grad_clip`` bounds each model's gradient norm alone, so the models do not interact) on
the sum of the per-model mean squared errors of the standardised target, with
:func:`~transformer_theory.training.schedule.learning_rate`;
validation NMSE every ``eval_every`` steps and at the last step; the best validation NMSE is the
reported statistic (InfoFlow §4; the predecessor's Appendix B.1.1). Like minGPT's trainer this module
knows no task: the data come from :class:`~transformer_theory.training.data.RunData`.
"""

from __future__ import annotations

import datetime as dt
import math
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from tqdm import tqdm

from transformer_theory.storage.provenance import environment
from transformer_theory.training.checkpoint import load_checkpoint, save_checkpoint
from transformer_theory.training.config import ENGINE_VERSION
from transformer_theory.training.data import RunData
from transformer_theory.training.ensemble import Ensemble
from transformer_theory.training.schedule import learning_rate
from transformer_theory.training.store import RunStore
from transformer_theory.training.tasks import Task, TrainOptions

#: Validation inputs are evaluated in chunks of this many samples.
EVAL_CHUNK = 1024

#: Called after every validation with ``task`` (the task's key), ``step``, ``steps``, ``nmse`` (one value per
#: model) and ``elapsed_s`` (seconds of this task's steps so far, this validation included; set-up excluded).
Report = Callable[[dict[str, Any]], None]


def _tensor(batches: list[np.ndarray], dtype: torch.dtype, device: torch.device) -> torch.Tensor:
    return torch.from_numpy(np.stack(batches)).to(device=device, dtype=dtype)


@torch.no_grad()
def validation_nmse(ensemble: Ensemble, data: list[RunData], inputs: torch.Tensor) -> list[float | None]:
    """Each model's NMSE on its validation set (``None`` if its predictions are not finite).

    Args:
        ensemble: The task's models.
        data: Each model's data (its validation targets and standardisation).
        inputs: The validation inputs (K, N, T, d), on the ensemble's device.
    """
    chunks = [ensemble(inputs[:, i:i + EVAL_CHUNK]) for i in range(0, inputs.shape[1], EVAL_CHUNK)]
    predictions = torch.cat(chunks, dim=1).double().cpu().numpy()
    values = [d.validation.nmse(d.unstandardise(p)) for d, p in zip(data, predictions)]
    return [v if math.isfinite(v) else None for v in values]


def _fmt(values: list[float | None]) -> str:
    finite = [v for v in values if v is not None]
    if not finite:
        return "nan"
    return f"{min(finite):.2e}" if len(finite) == 1 else f"{min(finite):.2e}..{max(finite):.2e}"


def train_task(task: Task, store: RunStore | None = None, options: TrainOptions = TrainOptions(),
               report: Report | None = None) -> list[dict[str, Any]]:
    """Train the runs of ``task`` together and return one result record per run (also stored in
    ``store``). With a store, the task resumes from its checkpoint there and checkpoints as it goes.

    Args:
        task: The runs to train (one batch signature).
        store: Where the records, weights and checkpoints go (``None``: nothing is stored or resumed).
        options: How the task is executed (device, compile, threads, checkpoints, progress, weights).
        report: Called after every validation (:data:`Report`).

    Returns:
        One record per run, in the task's order: its configuration, metric history, best and final
        validation NMSE, wall time, task, execution and provenance.
    """
    if options.threads is not None:
        torch.set_num_threads(options.threads)
    device = torch.device(options.device)
    runs = task.runs
    first = runs[0]
    data = [RunData(run) for run in runs]
    ensemble = Ensemble(runs, device)
    dtype = getattr(torch, first.model.dtype)
    optimizer = torch.optim.AdamW(ensemble.parameter_groups(first.weight_decay), lr=first.lr, betas=first.betas,
                                  foreach=True)
    loss_function = torch.compile(ensemble.loss) if options.compile else ensemble.loss
    val_inputs = _tensor([d.validation.X for d in data], dtype, device)
    task_key = task.key(options)
    checkpoint = store.checkpoint_path(task_key) if store is not None else None

    K = len(runs)
    step, elapsed = 0, 0.0
    history: list[dict[str, list]] = [{"step": [], "train_loss": [], "val_nmse": []} for _ in runs]
    loss_sum, loss_count = torch.zeros(K, dtype=torch.float64, device=device), 0  # on the device: no sync per step
    resumed: list[int] = []  # steps at which this task continued from a checkpoint
    saved = load_checkpoint(checkpoint, task_key) if checkpoint is not None else None
    if saved is not None:
        ensemble.module.load_state_dict(saved["params"])
        optimizer.load_state_dict(saved["optimizer"])
        for d, state in zip(data, saved["data"]):
            d.load_state(state)
        torch.set_rng_state(saved["torch_rng"])
        step, elapsed, history = saved["step"], saved["elapsed"], saved["history"]
        loss_sum, loss_count = saved["loss_sum"].to(device), saved["loss_count"]
        resumed = saved["resumed"] + [step]

    def save() -> None:
        state = {
            "params": {n: p.detach().cpu() for n, p in ensemble.module.named_parameters()},
            "optimizer": optimizer.state_dict(),
            "data": [d.state() for d in data],
            "torch_rng": torch.get_rng_state(),
            "step": step, "elapsed": elapsed, "history": history,
            "loss_sum": loss_sum.cpu(), "loss_count": loss_count, "resumed": resumed,
        }
        save_checkpoint(checkpoint, task_key, state)

    label = f"{K} model{'s' * (K > 1)}, T={first.seq_len}"
    bar = tqdm(total=first.steps, initial=step, desc=label, disable=not options.progress, mininterval=1.0,
               unit="step", dynamic_ncols=True)
    last_save_step, last_save_time = step, time.monotonic()
    first_step_s = None  # the first step of this process (includes compilation with options.compile)
    while step < first.steps:
        start = time.perf_counter()
        batches = [d.batch(step) for d in data]
        x = _tensor([b[0] for b in batches], dtype, device)
        y = _tensor([b[1] for b in batches], dtype, device)
        for group in optimizer.param_groups:
            group["lr"] = learning_rate(first, step)
        optimizer.zero_grad(set_to_none=True)
        total, per_model = loss_function(x, y)
        total.backward()
        if first.grad_clip is not None:
            ensemble.clip_grad_norms(first.grad_clip)
        optimizer.step()
        loss_sum += per_model.detach().double()
        loss_count += 1
        step += 1
        if step % first.eval_every == 0 or step == first.steps:
            nmse = validation_nmse(ensemble, data, val_inputs)
            train = (loss_sum / loss_count).cpu().tolist()
            for h, v, t in zip(history, nmse, train):
                h["step"].append(step)
                h["val_nmse"].append(v)
                h["train_loss"].append(t if math.isfinite(t) else None)
            loss_sum, loss_count = torch.zeros(K, dtype=torch.float64, device=device), 0
            bar.set_postfix_str(f"nmse {_fmt(nmse)}", refresh=False)
            if report is not None:
                report({"task": task_key, "step": step, "steps": first.steps, "nmse": nmse,
                        "elapsed_s": elapsed + time.perf_counter() - start})
        seconds = time.perf_counter() - start
        elapsed += seconds
        first_step_s = seconds if first_step_s is None else first_step_s
        bar.update(1)
        due = time.monotonic() - last_save_time >= options.checkpoint_every_s or (
            options.checkpoint_every_steps is not None and step - last_save_step >= options.checkpoint_every_steps)
        if checkpoint is not None and due and step < first.steps:
            save()
            last_save_step, last_save_time = step, time.monotonic()
    bar.close()

    provenance = environment()
    finished = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    execution = {"device": options.device, "compiled": options.compile, "threads": torch.get_num_threads(),
                 "first_step_s": first_step_s}
    records = []
    for i, (run, h) in enumerate(zip(runs, history)):
        finite = [(v, s) for v, s in zip(h["val_nmse"], h["step"]) if v is not None]
        best, best_step = min(finite) if finite else (None, None)
        record = {
            "key": run.key, "engine_version": ENGINE_VERSION, "config": run.to_dict(), "seed": run.seed,
            "history": h, "best_nmse": best, "best_step": best_step, "final_nmse": h["val_nmse"][-1],
            "wall_time_s": round(elapsed, 3),
            "task": {"key": task_key, "runs": task.keys, "models": K, "resumed_at_steps": resumed},
            "execution": execution, "finished_at": finished, **provenance,
        }
        if store is not None:
            store.put(run, record, ensemble.state_dict(i) if options.save_weights else None)
        records.append(record)
    if checkpoint is not None:
        checkpoint.unlink(missing_ok=True)
    return records
