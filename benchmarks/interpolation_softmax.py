"""Benchmark of the softmax interpolation construction (Theorem 1.8): build + verify time on the data of the
hardmax benchmark (``interpolation.py``: N sequences, n_j uniform in 1..50 tokens of R^16, m_j in {1, 2, 3}).

Two rows per size: the default geometry at the default temperature τ*/2 (most non-maximal weights underflow), and
the soft geometry (P-slots 0.05 beyond the box, sphere radius 10·d = 160) where the clusters keep a spread
that the exactification layers remove. The build includes the extra pass that finds τ* for ``temperature=None``.

    .venv/bin/python benchmarks/interpolation_softmax.py [--sizes 10 100 1000] [--seed 0]
"""

from __future__ import annotations

import argparse
import time

from transformer_theory.interpolation import build_interpolator, paper_num_blocks, verify
from transformer_theory.interpolation.examples import random_dataset

GEOMETRIES = {"default": {}, "soft": {"slot_offset": 0.05, "sphere_radius": 160.0}}


def measure(N: int, seed: int, geometry: str) -> dict:
    ds = random_dataset(N, 16, seed=seed, n_max=50, m_max=3)
    t0 = time.perf_counter()
    model = build_interpolator(ds, attention="softmax", seed=seed, **GEOMETRIES[geometry])
    t1 = time.perf_counter()
    errors = verify(model, ds)
    t2 = time.perf_counter()
    return {
        "N": N,
        "geometry": geometry,
        "tokens": sum(ds.input_lengths),
        "M": ds.total_output_length,
        "blocks": model.num_blocks,
        "paper": paper_num_blocks(ds, "softmax"),
        "tau_star": model.temperature_threshold,
        "spread": model.collapse.spread,
        "build": t1 - t0,
        "verify": t2 - t1,
        "error": float(errors.max()),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 100, 1000])
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    header = (
        f"{'N':>5} {'geometry':>8} {'tokens':>7} {'M':>5} {'blocks':>6} {'paper':>6} {'tau*':>9} {'spread':>9} "
        f"{'build s':>8} {'verify s':>8} {'total s':>8} {'max d_H':>9}"
    )
    print(header)
    print("-" * len(header))
    for N in args.sizes:
        for geometry in GEOMETRIES:
            r = measure(N, args.seed, geometry)
            print(
                f"{r['N']:>5} {r['geometry']:>8} {r['tokens']:>7} {r['M']:>5} {r['blocks']:>6} {r['paper']:>6} "
                f"{r['tau_star']:>9.2e} {r['spread']:>9.1e} {r['build']:>8.2f} {r['verify']:>8.2f} "
                f"{r['build'] + r['verify']:>8.2f} {r['error']:>9.1e}"
            )
    print("spread: largest cluster width after the softmax collapse, before the exactification layers.")


if __name__ == "__main__":
    main()
