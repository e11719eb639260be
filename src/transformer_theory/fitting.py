"""Log-log slopes: the fitted exponents the chapters compare with the papers' rates (Paper A Fig. 1b; the
cost laws of InfoFlow Theorem 3)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def log_log_slope(x: Sequence[float], y: Sequence[float]) -> float:
    """Least-squares slope of ``log y`` against ``log x``: ``ValueError`` unless ``x`` and ``y`` have equal
    length, all values are finite and positive, and ``x`` holds at least two distinct values."""
    xs, ys = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if xs.ndim != 1 or xs.shape != ys.shape:
        raise ValueError(f"log_log_slope needs two equal-length lists, got shapes {xs.shape} and {ys.shape}")
    if not (np.all(np.isfinite(xs) & (xs > 0)) and np.all(np.isfinite(ys) & (ys > 0))) or np.unique(xs).size < 2:
        raise ValueError(f"log_log_slope needs at least two distinct positive x and positive, finite y, "
                         f"got {xs.tolist()} and {ys.tolist()}")
    return float(np.polyfit(np.log(xs), np.log(ys), 1)[0])
