"""Benchmark of the hardmax interpolation construction (Theorem 1.6): build + verify time, peak memory,
structured versus dense evaluation, and the cost and result of the checks ``build_interpolator`` makes
on the dense and torch paths.

Data: N sequences with n_j uniform in 1..50 tokens of R^16 (uniform in [−1, 1]^16) and m_j uniform in
{1, 2, 3} targets. Prints one table; the fitted exponent is the slope of log(build + verify time)
against log(total tokens). "build s" is ``build_interpolator(..., check=())``; "check s" the time of the
dense and torch checks that the default build adds (all sequences, for N <= ``--check-max``), with their
largest errors. The dense evaluation (every layer as dense matrices, full n×n attention) is also timed on at
most ``--dense-sequences`` sequences of the same model. A second table gives the errors of every path on the
hard families of the robustness tests (heavy sharing, tokens a tiny gap apart, circle rotations, extreme
scales), relative to the data's unit.

On a machine shared by many processes, run with ``OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1``: threaded BLAS
calls on the small dense products are then about 8 times faster.

    .venv/bin/python benchmarks/interpolation.py [--sizes 10 100 1000] [--seed 0] [--check-max 1000]
"""

from __future__ import annotations

import argparse
import time
import tracemalloc

import numpy as np

from transformer_theory.interpolation import SequenceDataset, build_interpolator, paper_num_blocks, tolerance, verify
from transformer_theory.interpolation.examples import circle_dataset, near_duplicate_dataset, random_dataset, twin_dataset
from transformer_theory.interpolation.hausdorff import PATHS, check_paths


def measure(N: int, seed: int, dense_sequences: int, check_max: int) -> dict:
    ds = random_dataset(N, 16, seed=seed, n_max=50, m_max=3)
    t0 = time.perf_counter()
    model = build_interpolator(ds, seed=seed, check=())
    t1 = time.perf_counter()
    errors = verify(model, ds)
    t2 = time.perf_counter()
    checked = {path: float(verify(model, ds, path).max()) for path in ("dense", "torch")} if N <= check_max else {}
    t_check = time.perf_counter() - t2
    tracemalloc.start()
    verify(build_interpolator(ds, seed=seed, check=()), ds)
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
        "check": t_check if checked else float("nan"),
        "dense_error": checked.get("dense", float("nan")),
        "torch_error": checked.get("torch", float("nan")),
        "dense_n": len(subset),
        "dense_diff": max(float(np.abs(a - b).max()) for a, b in zip(fast, dense)),
        "ratio": (t5 - t4) / (t4 - t3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 100, 1000])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--dense-sequences", type=int, default=100)
    parser.add_argument("--check-max", type=int, default=1000)
    args = parser.parse_args()
    rows = [measure(N, args.seed, args.dense_sequences, args.check_max) for N in args.sizes]
    header = (
        f"{'N':>5} {'tokens':>7} {'M':>5} {'blocks':>6} {'paper':>6} {'params':>7} {'build s':>8} {'verify s':>8} "
        f"{'total s':>8} {'peak MB':>8} {'max d_H':>9} {'check s':>8} {'dense d_H':>9} {'torch d_H':>9} "
        f"{'dense on':>8} {'|dense-struct|':>14} {'dense/struct':>12}"
    )
    print(header)
    print("-" * len(header))
    for r in rows:
        print(
            f"{r['N']:>5} {r['tokens']:>7} {r['M']:>5} {r['blocks']:>6} {r['paper']:>6} {r['params']:>7} "
            f"{r['build']:>8.2f} {r['verify']:>8.2f} {r['build'] + r['verify']:>8.2f} {r['peak_mb']:>8.1f} "
            f"{r['error']:>9.1e} {r['check']:>8.2f} {r['dense_error']:>9.1e} {r['torch_error']:>9.1e} "
            f"{r['dense_n']:>8} {r['dense_diff']:>14.1e} {r['ratio']:>11.0f}x"
        )
    if len(rows) >= 2:
        tokens = np.log([r["tokens"] for r in rows])
        total = np.log([r["build"] + r["verify"] for r in rows])
        print(f"fitted exponent: time ~ tokens^{np.polyfit(tokens, total, 1)[0]:.2f} (build + verify)")
    print("dense/struct: time ratio of the dense evaluation (all layers as dense matrices, full attention)")
    print("to the structured one, on the first 'dense on' sequences of the same model.")
    print()
    families()


def families() -> None:
    """Build time and every path's largest error (relative to the data's unit) on the hard families."""
    base = random_dataset(6, 3, seed=7, shared_pool=8)
    cases = {
        "200 seqs over 8 tokens, d=2": random_dataset(200, 2, seed=0, n_max=8, shared_pool=8),
        "200 seqs over 8 tokens, d=3": random_dataset(200, 3, seed=0, n_max=8, shared_pool=8),
        "50 seqs over 8 tokens, d=2": random_dataset(50, 2, seed=0, shared_pool=8),
        "twins 1e-8 apart, d=2": twin_dataset(4, 2, 1e-8, seed=1),
        "twins 1e-12 apart, d=2": twin_dataset(4, 2, 1e-12, seed=1),
        "pool with 1e-10 near-dups, d=3": near_duplicate_dataset(30, 3, 1e-10, seed=3),
        "circle rotations 100 x 6": circle_dataset(100, 6, seed=1),
        "scale 1e-100": SequenceDataset([x * 1e-100 for x in base.inputs], [y * 1e-100 for y in base.targets]),
        "scale 1e+100": SequenceDataset([x * 1e100 for x in base.inputs], [y * 1e100 for y in base.targets]),
    }
    header = f"{'family':<32} {'blocks':>6} {'build s':>8} {'check s':>8} " + " ".join(f"{p + '/unit':>15}" for p in PATHS)
    print(header)
    print("-" * len(header))
    for name, ds in cases.items():
        t0 = time.perf_counter()
        model = build_interpolator(ds, check=())
        t1 = time.perf_counter()
        check_paths(model, ds, ("dense", "torch"))
        t2 = time.perf_counter()
        errors = " ".join(f"{float(verify(model, ds, p).max()) / ds.unit:>15.1e}" for p in PATHS)
        print(f"{name:<32} {model.num_blocks:>6} {t1 - t0:>8.2f} {t2 - t1:>8.2f} {errors}")
    print(f"tolerance: {tolerance(base) / base.unit:.0e} of the unit on every path")


if __name__ == "__main__":
    main()
