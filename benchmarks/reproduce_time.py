"""How long ``make reproduce`` trains: every training task of a profile timed for a few steps, then scaled.

For each training chapter (or those named) the runs of the profile are planned into tasks as ``make reproduce``
plans them (:data:`~transformer_theory.pipeline.reproduce.MODELS_PER_TASK` models per task). Each task is trained
twice on one thread for a few steps (``--short`` and ``--long`` steps, one validation each, nothing stored); the
difference gives its seconds per step, the rest the cost of one validation pass. A task's full time is then
``steps · s/step + validations · s/validation``. The table lists every task; the last lines give the sum over
tasks (one core) and the wall time of the up-front training on ``--workers`` single-threaded workers, the
costliest tasks first as Dask is asked to run them (a greedy schedule of the estimates).

This is an estimate from measured step times, not a run of the reproduction: the first steps of a task can be
slower or faster than its average, and the machine must be otherwise idle (the load average is printed).

    .venv/bin/python benchmarks/reproduce_time.py [07_depth_separation 10_intrinsic_dimension] [--profile book]
"""

from __future__ import annotations

import argparse
import heapq
import os
import time
from dataclasses import replace

import torch

from transformer_theory.pipeline.reproduce import MODELS_PER_TASK, chapter_runs
from transformer_theory.tables import markdown_table
from transformer_theory.chapters import EXPERIMENTS, experiment
from transformer_theory.training import Task, TrainOptions, plan_tasks, train_task


def timed(task: Task, steps: int) -> float:
    """Seconds of ``steps`` training steps of ``task`` with one validation at the end (set-up excluded)."""
    short = Task(tuple(replace(r, steps=steps, eval_every=steps, warmup=min(r.warmup, steps - 1)) for r in task.runs))
    records = train_task(short, options=TrainOptions(progress=False, save_weights=False))
    return records[0]["wall_time_s"]


def estimate(task: Task, short: int, long: int) -> dict:
    """The task's estimated training time from two short trainings."""
    a, b = timed(task, short), timed(task, long)
    per_step = max((b - a) / (long - short), 0.0)
    per_validation = max(a - short * per_step, 0.0)
    run = task.runs[0]
    validations = -(-run.steps // run.eval_every)
    return {"s/step": per_step, "s/validation": per_validation,
            "seconds": run.steps * per_step + validations * per_validation}


def schedule(seconds: list[float], workers: int) -> float:
    """Wall time of tasks taken longest first by the first free worker."""
    free = [0.0] * workers
    for s in sorted(seconds, reverse=True):
        heapq.heappush(free, heapq.heappop(free) + s)
    return max(free)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("chapters", nargs="*", default=list(EXPERIMENTS), help="training chapters (default: all)")
    parser.add_argument("--profile", default="book")
    parser.add_argument("--short", type=int, default=10)
    parser.add_argument("--long", type=int, default=40)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()
    if not 1 <= args.short < args.long:
        parser.error("need 1 <= --short < --long")
    torch.set_num_threads(1)
    rows, seconds = [], []
    start = time.perf_counter()
    for name in args.chapters:
        experiment(name)  # an unknown name is an error, not an empty chapter
        for task in plan_tasks(chapter_runs(args.profile, [name]), MODELS_PER_TASK):
            e = estimate(task, args.short, args.long)
            run = task.runs[0]
            seconds.append(e["seconds"])
            rows.append({"chapter": name, "models": len(task.runs), "target": run.target,
                         "heads": " ".join(str(list(r.model.heads)) for r in task.runs), "E": run.model.width,
                         "T": run.seq_len, "steps": run.steps, "ms/step": f"{1000 * e['s/step']:.1f}",
                         "estimated min": f"{e['seconds'] / 60:.1f}"})
    print(f"profile {args.profile}, {len(rows)} tasks of at most {MODELS_PER_TASK} models, one thread each; "
          f"load average {os.getloadavg()[0]:.1f}; measured in {time.perf_counter() - start:.0f} s\n")
    print(markdown_table(rows))
    by_chapter = {}
    for row, s in zip(rows, seconds):
        by_chapter[row["chapter"]] = by_chapter.get(row["chapter"], 0.0) + s
    print()
    for name, s in by_chapter.items():
        print(f"{name}: {s / 60:.1f} core-min")
    print(f"sum over tasks: {sum(seconds) / 60:.1f} core-min")
    print(f"up-front training on {args.workers} workers, longest first: {schedule(seconds, args.workers) / 60:.1f} min")


if __name__ == "__main__":
    main()
