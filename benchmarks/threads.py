"""Benchmark of torch's thread count when processes run side by side, as ``make test`` runs them (two smoke
notebooks at a time, two pytest-xdist workers): the wall time of training chapters' smoke runs (a fresh store, in
the process, as their notebooks train them) in processes started together, with torch's default threads (one per
core each) and with one thread each (``OMP_NUM_THREADS=1``, what the Makefile sets when ``JOBS`` > 1).

Prints one row per setting: the wall time of each chapter and of the pair, and the pair's time with default
threads over its time with one thread. The machine should be otherwise quiet (its load average is printed).

    .venv/bin/python benchmarks/threads.py [--chapters 14_mechanism_ablation 11_triangle_center] [--repeats 2]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"

#: One chapter's smoke runs trained into a fresh store in this process; prints its wall seconds as JSON.
TRAIN = """
import json, sys, tempfile, time
from transformer_theory.chapters.registry import run_experiment
from transformer_theory.pipeline.profiles import load_profile
name = sys.argv[1]
start = time.perf_counter()
with tempfile.TemporaryDirectory() as store:
    run_experiment(name, load_profile("smoke")[name], store=store, n_workers=0)
print(json.dumps(time.perf_counter() - start))
"""


def side_by_side(chapters: list[str], threads: str | None) -> tuple[list[float], float]:
    """Each chapter's wall seconds, and the pair's, with the chapters trained in processes started together."""
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "MKL_NUM_THREADS",
                                                            "OPENBLAS_NUM_THREADS")}
    env["PYTHONPATH"] = str(SRC)
    if threads is not None:
        env.update(OMP_NUM_THREADS=threads, MKL_NUM_THREADS=threads, OPENBLAS_NUM_THREADS=threads)
    start = time.perf_counter()
    processes = [subprocess.Popen([sys.executable, "-c", TRAIN, name], env=env, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, text=True) for name in chapters]
    outputs = [p.communicate()[0] for p in processes]
    for name, p in zip(chapters, processes):
        if p.returncode:
            raise SystemExit(f"{name}: the smoke training failed (exit {p.returncode})")
    return [json.loads(out.strip().splitlines()[-1]) for out in outputs], time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chapters", nargs="+", default=["14_mechanism_ablation", "11_triangle_center"])
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    print(f"{len(args.chapters)} smoke trainings side by side, {os.cpu_count()} cores, load average "
          f"{os.getloadavg()[0]:.1f}")
    settings = {"default threads (one per core each)": None, "one thread each": "1"}
    best: dict[str, tuple[list[float], float]] = {}
    for _ in range(args.repeats):  # rounds over both settings, so that each meets the machine's quieter moments
        for label, threads in settings.items():
            each, pair = side_by_side(args.chapters, threads)
            if label not in best or pair < best[label][1]:
                best[label] = (each, pair)
    print("\n| setting | " + " | ".join(args.chapters) + " | side by side (s) |")
    print("|---" * (len(args.chapters) + 2) + "|")
    for label, (each, pair) in best.items():
        print(f"| {label} | " + " | ".join(f"{s:.1f}" for s in each) + f" | {pair:.1f} |")
    default, one = (best[label][1] for label in settings)
    print(f"\none thread each: {default / one:.1f}x faster side by side; load average now {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
