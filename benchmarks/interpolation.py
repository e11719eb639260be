"""Benchmark of the hardmax interpolation construction (Theorem 1.6): build + verify time, peak memory,
and structured versus dense evaluation.

Data: N sequences with n_j uniform in 1..50 tokens of R^16 (uniform in [−1, 1]^16) and m_j uniform in
{1, 2, 3} targets. Prints one table; the fitted exponent is the slope of log(build + verify time)
against log(total tokens). The dense evaluation (every layer as dense matrices, full n×n attention)
runs on at most ``--dense-sequences`` sequences of the same model.

    .venv/bin/python benchmarks/interpolation.py [--sizes 10 100 1000] [--seed 0]
"""

from __future__ import annotations

import argparse
import time
import tracemalloc

import numpy as np

from transformer_theory.interpolation import build_interpolator, paper_num_blocks, verify
from transformer_theory.interpolation.examples import random_dataset


def measure(N: int, seed: int, dense_sequences: int) -> dict:
    ds = random_dataset(N, 16, seed=seed, n_max=50, m_max=3)
    t0 = time.perf_counter()
    model = build_interpolator(ds, seed=seed)
    t1 = time.perf_counter()
    errors = verify(model, ds)
    t2 = time.perf_counter()
    tracemalloc.start()
    verify(build_interpolator(ds, seed=seed), ds)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    subset = ds.inputs[:dense_sequences]
    t3 = time.perf_counter()
    fast = model.apply(subset)
    t4 = time.perf_counter()
    dense = model.apply(subset, structured=False)
    t5 = time.perf_counter()
    return {
        "N": N,
        "tokens": sum(ds.input_lengths),
        "M": ds.total_output_length,
        "blocks": model.num_blocks,
        "paper": paper_num_blocks(ds),
        "params": model.num_parameters(),
        "build": t1 - t0,
        "verify": t2 - t1,
        "peak_mb": peak / 2**20,
        "error": float(errors.max()),
        "dense_n": len(subset),
        "dense_diff": max(float(np.abs(a - b).max()) for a, b in zip(fast, dense)),
        "ratio": (t5 - t4) / (t4 - t3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 100, 1000])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--dense-sequences", type=int, default=100)
    args = parser.parse_args()
    rows = [measure(N, args.seed, args.dense_sequences) for N in args.sizes]
    header = (
        f"{'N':>5} {'tokens':>7} {'M':>5} {'blocks':>6} {'paper':>6} {'params':>7} {'build s':>8} {'verify s':>8} "
        f"{'total s':>8} {'peak MB':>8} {'max d_H':>9} {'dense on':>8} {'|dense-struct|':>14} {'dense/struct':>12}"
    )
    print(header)
    print("-" * len(header))
    for r in rows:
        print(
            f"{r['N']:>5} {r['tokens']:>7} {r['M']:>5} {r['blocks']:>6} {r['paper']:>6} {r['params']:>7} "
            f"{r['build']:>8.2f} {r['verify']:>8.2f} {r['build'] + r['verify']:>8.2f} {r['peak_mb']:>8.1f} "
            f"{r['error']:>9.1e} {r['dense_n']:>8} {r['dense_diff']:>14.1e} {r['ratio']:>11.0f}x"
        )
    if len(rows) >= 2:
        tokens = np.log([r["tokens"] for r in rows])
        total = np.log([r["build"] + r["verify"] for r in rows])
        print(f"fitted exponent: time ~ tokens^{np.polyfit(tokens, total, 1)[0]:.2f} (build + verify)")
    print("dense/struct: time ratio of the dense evaluation (all layers as dense matrices, full attention)")
    print("to the structured one, on the first 'dense on' sequences of the same model.")


if __name__ == "__main__":
    main()
