"""Benchmark of the hardmax interpolation construction (Theorem 1.6): build + verify time, peak memory,
structured versus dense evaluation, and the cost and result of the checks ``build_interpolator`` makes
on the dense and torch paths.

Data: N sequences with n_j uniform in 1..50 tokens of R^16 (uniform in [−1, 1]^16) and m_j uniform in
{1, 2, 3} targets. Prints one table; the fitted exponents are the slopes of log(build + verify time) and of
log(peak memory) against log(total tokens), over the sizes N >= 1000 (all sizes if fewer than two). "build s"
is ``build_interpolator(..., check=())``; "cpu s" the process's CPU time of build + verify (steadier than the
wall times on a loaded machine); "ns/tok/blk" that CPU time per token per block (an evaluation of every layer on
every token would keep it constant); "peak MB" the peak of
Python's traced allocations (``tracemalloc``) over a second build + verify, "B/token" that per token.
"check s" is the time of the dense and torch checks that the default build adds (all sequences, for
N <= ``--check-max``), with their largest errors. The dense evaluation (every layer as dense matrices, full
n×n attention) is also timed on at most ``--dense-sequences`` sequences of the same model, for
N <= ``--dense-max``. A second table gives the errors of every path on the hard families of the robustness
tests (heavy sharing, tokens a tiny gap apart, circle rotations, extreme scales), relative to the data's unit.
A third gives ``build_interpolator`` as users call it, on the same data: hardmax (Theorem 1.6) for the sizes
``--call-sizes`` and softmax (Theorem 1.8, at its default τ = τ*/2) for ``--softmax-sizes``, each size in a
fresh process (so that its peak RSS, ``ru_maxrss``, is its own), once with ``check=()`` and once with the
default checks (every sequence on the structured path, ``check_sequences`` of them on the dense and torch
paths): wall and CPU time of build + verify, peak RSS, the sequences each path checked, the dense paths'
derived tolerance relative to the unit, and the exponents of time and peak RSS fitted against the tokens.

On a machine shared by many processes, run with ``OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1``: threaded BLAS
calls on the small dense products are then about 8 times faster.

    .venv/bin/python benchmarks/interpolation.py [--sizes 10 100 1000 2000 4000 8000] [--seed 0]
        [--check-max 100] [--dense-max 1000] [--call-sizes 1000 2000 4000 8000]
        [--softmax-sizes 250 500 1000 2000 4000]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
import tracemalloc

import numpy as np

from transformer_theory.fitting import log_log_slope
from transformer_theory.interpolation import SequenceDataset, build_interpolator, paper_num_blocks, tolerance, verify
from transformer_theory.interpolation.examples import circle_dataset, near_duplicate_dataset, random_dataset, twin_dataset
from transformer_theory.interpolation.hausdorff import PATHS, check_paths, path_tolerance


#: The fitted exponents use the sizes from this N on.
FIT_FROM = 1000


def measure(N: int, seed: int, dense_sequences: int, check_max: int, dense_max: int) -> dict:
    ds = random_dataset(N, 16, seed=seed, n_max=50, m_max=3)
    c0, t0 = time.process_time(), time.perf_counter()
    model = build_interpolator(ds, seed=seed, check=())
    t1 = time.perf_counter()
    errors = verify(model, ds)
    t2, c2 = time.perf_counter(), time.process_time()
    checked = {path: float(verify(model, ds, path).max()) for path in ("dense", "torch")} if N <= check_max else {}
    t_check = time.perf_counter() - t2
    tracemalloc.start()
    verify(build_interpolator(ds, seed=seed, check=()), ds)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    subset = ds.inputs[:dense_sequences] if N <= dense_max else []
    t3 = time.perf_counter()
    fast = model.apply(subset) if subset else []
    t4 = time.perf_counter()
    dense = model.apply(subset, structured=False) if subset else []
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
        "cpu": c2 - c0,
        "peak_mb": peak / 2**20,
        "error": float(errors.max()),
        "check": t_check if checked else float("nan"),
        "dense_error": checked.get("dense", float("nan")),
        "torch_error": checked.get("torch", float("nan")),
        "dense_n": len(subset),
        "dense_diff": max((float(np.abs(a - b).max()) for a, b in zip(fast, dense)), default=float("nan")),
        "ratio": (t5 - t4) / (t4 - t3) if subset else float("nan"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 100, 1000, 2000, 4000, 8000])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--dense-sequences", type=int, default=100)
    parser.add_argument("--check-max", type=int, default=100)
    parser.add_argument("--dense-max", type=int, default=1000)
    parser.add_argument("--call-sizes", type=int, nargs="*", default=[1000, 2000, 4000, 8000])
    parser.add_argument("--softmax-sizes", type=int, nargs="*", default=[250, 500, 1000, 2000, 4000])
    parser.add_argument("--call", nargs=3, metavar=("ATTENTION", "N", "CHECK"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.call:
        return call(args.call[0], int(args.call[1]), args.seed, args.call[2] == "default")
    header = (
        f"{'N':>5} {'tokens':>7} {'M':>5} {'blocks':>6} {'paper':>6} {'params':>7} {'build s':>8} {'verify s':>8} "
        f"{'total s':>8} {'cpu s':>8} {'ns/tok/blk':>10} {'peak MB':>8} {'B/token':>8} {'max d_H':>9} {'check s':>8} {'dense d_H':>9} "
        f"{'torch d_H':>9} "
        f"{'dense on':>8} {'|dense-struct|':>14} {'dense/struct':>12}"
    )
    print(header)
    print("-" * len(header), flush=True)
    rows = []
    for N in args.sizes:
        rows.append(r := measure(N, args.seed, args.dense_sequences, args.check_max, args.dense_max))
        print(
            f"{r['N']:>5} {r['tokens']:>7} {r['M']:>5} {r['blocks']:>6} {r['paper']:>6} {r['params']:>7} "
            f"{r['build']:>8.2f} {r['verify']:>8.2f} {r['build'] + r['verify']:>8.2f} {r['cpu']:>8.2f} "
            f"{r['cpu'] / (r['tokens'] * r['blocks']) * 1e9:>10.2f} {r['peak_mb']:>8.1f} "
            f"{r['peak_mb'] * 2**20 / r['tokens']:>8.0f} "
            f"{r['error']:>9.1e} {r['check']:>8.2f} {r['dense_error']:>9.1e} {r['torch_error']:>9.1e} "
            f"{r['dense_n']:>8} {r['dense_diff']:>14.1e} {r['ratio']:>11.0f}x", flush=True
        )
    fitted = [r for r in rows if r["N"] >= FIT_FROM]
    fitted = fitted if len(fitted) >= 2 else rows
    if len(fitted) >= 2:
        tokens = [r["tokens"] for r in fitted]
        span = f"N = {fitted[0]['N']}..{fitted[-1]['N']}"
        print(f"fitted exponents over {span}: build + verify time ~ tokens^"
              f"{log_log_slope(tokens, [r['build'] + r['verify'] for r in fitted]):.2f} (wall), "
              f"~ tokens^{log_log_slope(tokens, [r['cpu'] for r in fitted]):.2f} (CPU); "
              f"peak memory ~ tokens^{log_log_slope(tokens, [r['peak_mb'] for r in fitted]):.2f}")
    print("dense/struct: time ratio of the dense evaluation (all layers as dense matrices, full attention)")
    print("to the structured one, on the first 'dense on' sequences of the same model (0: not measured).")
    print()
    families()
    for attention, sizes in (("hardmax", args.call_sizes), ("softmax", args.softmax_sizes)):
        if sizes:
            print()
            calls(attention, sizes, args.seed)


def call(attention: str, N: int, seed: int, default: bool) -> None:
    """In this (fresh) process: ``build_interpolator`` with the default checks or ``check=()``, then
    ``verify``; prints one JSON line (times, peak RSS, checked sequences, the dense paths' tolerance)."""
    ds = random_dataset(N, 16, seed=seed, n_max=50, m_max=3)
    c0, t0 = time.process_time(), time.perf_counter()
    model = build_interpolator(ds, attention, seed=seed, **({} if default else {"check": ()}))
    error = float(verify(model, ds).max())
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    print(json.dumps({"tokens": sum(ds.input_lengths), "blocks": model.num_blocks, "wall": wall, "cpu": cpu,
                      "rss_gb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20, "error": error / ds.unit,
                      "checked": model.checked, "tol": path_tolerance(model, ds, "dense") / ds.unit}))


def calls(attention: str, sizes: list[int], seed: int) -> None:
    """The table of :func:`call` in a subprocess per size and setting, with the fitted exponents."""
    print(f"build_interpolator(dataset, {attention!r}, seed={seed}) + verify, one process per cell")
    header = (f"{'N':>5} {'tokens':>7} {'blocks':>6} | {'check=() s':>10} {'cpu s':>7} {'RSS GB':>7} | {'default s':>9} "
              f"{'cpu s':>7} {'RSS GB':>7} {'checked s/d/t':>16} {'dense tol':>9} {'max d_H':>8}")
    print(header)
    print("-" * len(header), flush=True)
    rows = []
    for N in sizes:
        cells = [json.loads(subprocess.run([sys.executable, __file__, "--seed", str(seed), "--call", attention, str(N), check],
                                           capture_output=True, text=True, check=True).stdout.splitlines()[-1])
                 for check in ("none", "default")]
        rows.append(cells)
        bare, full = cells
        checked = "/".join(str(full["checked"].get(p, 0)) for p in PATHS)
        print(f"{N:>5} {full['tokens']:>7} {full['blocks']:>6} | {bare['wall']:>10.2f} {bare['cpu']:>7.2f} "
              f"{bare['rss_gb']:>7.2f} | {full['wall']:>9.2f} {full['cpu']:>7.2f} {full['rss_gb']:>7.2f} {checked:>16} "
              f"{full['tol']:>9.1e} {full['error']:>8.1e}", flush=True)
    if len(rows) >= 2:
        tokens = [full["tokens"] for _, full in rows]
        slopes = {name: [log_log_slope(tokens, [cells[k][key] for cells in rows]) for k in (0, 1)]
                  for name, key in (("wall time", "wall"), ("CPU time", "cpu"), ("peak RSS", "rss_gb"))}
        print(f"fitted exponents over N = {sizes[0]}..{sizes[-1]} (against tokens), check=() / default: "
              + "; ".join(f"{name} {a:.2f} / {b:.2f}" for name, (a, b) in slopes.items()))


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
        print(f"{name:<32} {model.num_blocks:>6} {t1 - t0:>8.2f} {t2 - t1:>8.2f} {errors}", flush=True)
    print(f"tolerance: {tolerance(base) / base.unit:.0e} of the unit on the structured path, at least that on the others "
          "(path_tolerance)")


if __name__ == "__main__":
    main()
