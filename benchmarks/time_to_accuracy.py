"""Time to accuracy, the figure users feel (issue 24): the wall time for the training engine to bring chapter 13's
calibration model below a validation NMSE, beside the plain loop of ``benchmarks/training.py`` on the same model,
initialisation, data and schedule.

The run is chapter 13's one-layer head count (P1 Table 2) at h = ``--heads`` heads, built by the chapter itself
(``experiment("13_training_recipe")``, i.e. :func:`~transformer_theory.chapters.calibration.calibration_runs` with
its defaults): ``max_retrieval`` with D = 4 on tokens in R^4, per-head dimension 8 (E = 8·h), FFN 32, T =
``--T``, fresh samples every step, batch 256, AdamW lr 3e-3 with a 200-step warm-up and a cosine decay over the
chapter's 30 000 steps, weight decay 0.01, validation NMSE on 4096 samples every 100 steps, seed ``--seed``.

Both variants are stopped from their validation report (the engine's ``train_task(report=...)``; the engine has
no early stopping of its own and gets none): at the first validation with NMSE < ``--target``, or at ``--cap``
steps, or at the first validation after ``--max-seconds`` (for a loaded machine; the row then says how far the
variant got). The time is counted from the start of the first step (set-up excluded) and includes the
validation passes, the same for both:

* ``loop``: the model as a plain ``nn.Module`` (every layer computing all queries), torch's AdamW, torch's
  default threads (``plain_loop`` of ``benchmarks/training.py``);
* ``engine``: the run as a one-model task of ``train_task`` (CLS-only last layer); ``--compile`` adds the
  engine with ``torch.compile``, whose compilation then counts in its time.

The table gives for each the first validated step with NMSE < target, the seconds to it, the loop's seconds
divided by the variant's (``> r`` where the loop stopped before the target: a lower bound), the NMSE there and the
milliseconds per step (validation included). The machine may be shared: the load average is printed before and
after each variant, and each row as soon as it is measured.

    .venv/bin/python benchmarks/time_to_accuracy.py [--target 1e-4] [--T 16] [--heads 4] [--cap 30000] [--seed 0]
                                                    [--max-seconds S] [--compile]
    .venv/bin/python benchmarks/time_to_accuracy.py --quick     # target 1e-1, cap 500 (about 200 steps each)
"""

from __future__ import annotations

import argparse
import math
import os
from collections.abc import Callable, Sequence
from typing import Any

import torch

from training import plain_loop  # benchmarks/training.py, beside this script

from transformer_theory.chapters import experiment
from transformer_theory.training import RunConfig, Task, TrainOptions, train_task
from transformer_theory.training.trainer import Report

QUICK = {"target": 1e-1, "cap": 500}


def calibration_run(heads: int, T: int, seed: int) -> RunConfig:
    """Chapter 13's one-layer head-count run with ``heads`` heads at sequence length ``T`` and ``seed``."""
    values = {"heads": [heads], "seq_lens": [T], "seeds": [seed], "double_heads": [], "tl_heads": []}
    [run] = [r.config for r in experiment("13_training_recipe").runs(values) if r.tags["part"] == "head_count"]
    return run


class _Stop(Exception):
    """Raised by the report to end a training at the target or the cap."""


def time_to(train: Callable[[Report], Any], target: float, cap: int, max_seconds: float = math.inf) -> dict[str, Any]:
    """``train(report)`` until the first validation with NMSE < ``target``, or the first at ``cap`` steps or after
    ``max_seconds``: ``step`` (``None`` if not reached), ``last`` (the step it stopped at), ``seconds`` and ``nmse``
    there, and ``stopped`` (``"target"``, ``"cap"``, ``"time limit"`` or ``"end"``: the run's last step)."""
    out: dict[str, Any] = {"step": None, "stopped": "end"}

    def report(message: dict[str, Any]) -> None:
        nmse = message["nmse"][0]
        out.update(seconds=message["elapsed_s"], nmse=nmse, last=message["step"])
        if nmse is not None and nmse < target:
            out.update(step=message["step"], stopped="target")
        elif message["step"] >= cap:
            out["stopped"] = "cap"
        elif message["elapsed_s"] >= max_seconds:
            out["stopped"] = "time limit"
        if out["stopped"] != "end":
            raise _Stop

    try:
        train(report)
    except _Stop:
        pass
    return out


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--target", type=float, default=1e-4, help="validation NMSE to reach (default 1e-4)")
    parser.add_argument("--T", type=int, default=16, help="sequence length (default 16)")
    parser.add_argument("--heads", type=int, default=4, help="heads of the one layer (default 4 = D)")
    parser.add_argument("--cap", type=int, default=30000, help="step cap (default 30000, the chapter's steps)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-seconds", type=float, default=math.inf,
                        help="also stop a variant at its first validation after this many seconds (a loaded machine)")
    parser.add_argument("--compile", action="store_true", help="add the engine with torch.compile")
    parser.add_argument("--quick", action="store_true",
                        help=f"target {QUICK['target']:g}, cap {QUICK['cap']} (a check that it runs)")
    args = parser.parse_args(argv)
    if args.quick:
        vars(args).update(QUICK)
    run = calibration_run(args.heads, args.T, args.seed)
    m = run.model
    print(f"chapter 13 calibration run: {run.target} {run.target_args}, h={args.heads}, n={m.head_dim}, E={m.width}, "
          f"FFN {m.ffn_width}, T={run.seq_len}, batch {run.batch_size}, lr {run.lr:g}, warm-up {run.warmup}, "
          f"cosine over {run.steps} steps, weight decay {run.weight_decay:g}, validation every {run.eval_every} "
          f"steps on {run.val_size}; seed {run.seed}; target NMSE < {args.target:g}, cap {args.cap} steps; "
          f"torch threads {torch.get_num_threads()}, {os.cpu_count()} cores")

    def engine(compile: bool) -> Callable[[Report], Any]:
        return lambda report: train_task(Task((run,)), options=TrainOptions(progress=False, compile=compile),
                                         report=report)

    threads = torch.get_num_threads()
    variants: dict[str, Callable[[Report], Any]] = {
        f"loop: plain nn.Module, all queries ({threads} threads)": lambda report: plain_loop(run, report),
        "engine: train_task, one model": engine(False),
    }
    if args.compile:
        variants["engine, compiled"] = engine(True)
    print(f"\n| variant | steps to NMSE < {args.target:g} | wall time (s) | ratio to the loop (loop s / variant s) "
          f"| NMSE there | ms per step | load average before, after |\n|---|---|---|---|---|---|---|", flush=True)
    loop = None
    for name, train in variants.items():  # a row as soon as it is measured, the loop's first
        before = os.getloadavg()[0]
        r = time_to(train, args.target, args.cap, args.max_seconds)
        loop = loop or r
        reached = r["step"] is not None
        steps = r["step"] if reached else f"not reached in {r['last']} ({r['stopped']})"
        ratio = "n/a" if not reached else f"{'' if loop['step'] else '> '}{loop['seconds'] / r['seconds']:.2f}x"
        nmse = "nan" if r["nmse"] is None else f"{r['nmse']:.2e}"
        print(f"| {name} | {steps} | {r['seconds']:.1f} | {ratio} | {nmse} | {1e3 * r['seconds'] / r['last']:.0f} "
              f"| {before:.1f}, {os.getloadavg()[0]:.1f} |", flush=True)


if __name__ == "__main__":
    main()
