"""The checks ``build_interpolator`` makes before returning (Theorems 1.6 and 1.8 hold on every path within its
tolerance): which sequences each path checks, the dense paths' derived tolerance, and that the default build
fits in a small memory cap at a size where checking every sequence on every path took gigabytes."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from transformer_theory.interpolation import FeedForward, HatFeedForward, SelfAttention, build_interpolator, tolerance
from transformer_theory.interpolation.construction import CHECK_SEQUENCES
from transformer_theory.interpolation.examples import random_dataset, twin_dataset
from transformer_theory.interpolation.hausdorff import (MAX_PATH_TOLERANCE, ROUNDING_MARGIN, check_paths, check_sample,
                                                        path_tolerance)
from transformer_theory.interpolation.transformer import Block, Transformer

SRC = Path(__file__).resolve().parents[2] / "src"


def test_check_sample_is_seeded_and_covers_small_datasets() -> None:
    assert check_sample(5, None, 0).tolist() == check_sample(5, 8, 0).tolist() == [0, 1, 2, 3, 4]
    sample = check_sample(1000, 8, 3)
    assert len(set(sample.tolist())) == 8 and np.all(np.diff(sample) > 0) and sample.max() < 1000
    assert np.array_equal(sample, check_sample(1000, 8, 3)) and not np.array_equal(sample, check_sample(1000, 8, 4))


def test_build_reports_what_each_path_checked() -> None:
    ds = random_dataset(CHECK_SEQUENCES + 4, 3, seed=1)
    N = ds.N
    assert build_interpolator(ds).checked == {"structured": N, "dense": CHECK_SEQUENCES, "torch": CHECK_SEQUENCES}
    assert build_interpolator(ds, check_sequences=None).checked == {"structured": N, "dense": N, "torch": N}
    assert build_interpolator(ds, check=("dense",), check_sequences=3).checked == {"structured": N, "dense": 3}
    assert build_interpolator(ds, check=()).checked == {"structured": N}
    assert check_paths(build_interpolator(ds, check=()), ds, ["structured"], 2) == {"structured": N}


@pytest.mark.parametrize("value", [0, -1, 2.5, "8"])
def test_check_sequences_must_be_a_positive_int(value) -> None:
    with pytest.raises(ValueError, match="check_sequences"):
        build_interpolator(random_dataset(3, 2), check_sequences=value)


def test_rounding_scale_of_a_hat() -> None:
    """κ = max_i Σ_k |W_ik|·|b_k| of Tool A's hat, written out:
    |δ_i|·(2/ε)·(|ε − t| + |ε/2 − t| + |ε/2 + t| + |ε + t|)."""
    delta, t, eps = np.array([0.5, -3.0]), 1.25, 0.125
    hat = HatFeedForward(u=np.array([0.6, 0.8]), center=t, eps=eps, displacement=delta)
    identity = Block(FeedForward.identity(2), SelfAttention.identity())
    model = Transformer([Block(hat, SelfAttention.identity()), identity], 2)
    kappa = 3.0 * 2 / eps * (abs(eps - t) + abs(eps / 2 - t) + abs(eps / 2 + t) + abs(eps + t))
    assert model.rounding_scale() == pytest.approx(kappa, rel=1e-15)
    twice = Transformer([Block(hat, SelfAttention.identity())] * 4, 2)
    assert twice.rounding_scale() == pytest.approx(2 * kappa, rel=1e-15)  # root-sum-square over the layers


def test_dense_tolerance_is_derived_between_the_floor_and_the_ceiling() -> None:
    small = random_dataset(6, 3, seed=0)
    model = build_interpolator(small, check=())
    assert path_tolerance(model, small, "structured") == tolerance(small)
    assert path_tolerance(model, small, "dense") == path_tolerance(model, small, "torch") == tolerance(small)
    twins = twin_dataset(3, 2, 1e-14, seed=1, copies=3)  # windows of 1e-14: the estimate is far above the unit
    narrow = build_interpolator(twins, check=())
    assert ROUNDING_MARGIN * np.finfo(float).eps * narrow.rounding_scale() > twins.unit
    assert path_tolerance(narrow, twins, "dense") == MAX_PATH_TOLERANCE * twins.unit


def test_default_build_fits_in_a_small_memory_cap() -> None:
    """N = 1000 sequences of up to 50 tokens in R^16: checking every sequence on the torch path took 4 GB of
    RSS (issue 26); the default build now runs under a 2 GiB address-space limit."""
    script = textwrap.dedent("""
        import resource
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
        from transformer_theory.interpolation import build_interpolator
        from transformer_theory.interpolation.examples import random_dataset
        print(build_interpolator(random_dataset(1000, 16, seed=0, n_max=50, m_max=3), seed=0).checked)
    """)
    env = {**os.environ, "PYTHONPATH": str(SRC), "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == str({"structured": 1000, "dense": CHECK_SEQUENCES, "torch": CHECK_SEQUENCES})
