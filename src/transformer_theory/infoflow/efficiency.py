"""The book's one criterion for "observed efficient" (InfoFlow's verdicts, Yu et al. 2026, §3-4): what a trained
network must show before a chapter calls a configuration efficient.

InfoFlow's verdicts are asymptotic: an efficient configuration needs ``M ~ eps^{-k}`` parameters with a small
exponent ``k`` that does not grow with the sequence length T, an inefficient one an exponent that grows with T. A
trained network at one size and one budget shows this as a low error that does not grow with T. The criterion
(:data:`EFFICIENCY`) says so with two numbers, the same in every chapter that judges efficiency (07, 08, 10 and
12): the best validation NMSE at the largest trained T is at most ``nmse_threshold`` (``eps = 0.1``) and at most
``max_growth`` times the best validation NMSE at the smallest trained T. The thresholds are chapter 12's committed
criterion (set from CPU runs of the calibration targets before its runs); the other chapters' own committed
criteria were fixed before this book-wide one, and each chapter shows both. A verdict is a verdict at the budget the
runs were trained with: a run still learning when its schedule ended may be efficient at a larger one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from transformer_theory.checks import is_real

__all__ = ["EFFICIENCY", "observed_efficient"]

#: The book's criterion: best validation NMSE at the largest T at most ``nmse_threshold`` and at most
#: ``max_growth`` times the best validation NMSE at the smallest T.
EFFICIENCY: dict[str, float] = {"nmse_threshold": 1e-2, "max_growth": 4.0}


def observed_efficient(nmse_by_T: Mapping[int, float], criterion: Mapping[str, Any] = EFFICIENCY) -> bool:
    """Whether best NMSEs by sequence length meet the criterion (:data:`EFFICIENCY` unless another is given).

    Args:
        nmse_by_T: The best validation NMSE at each trained sequence length T (at least two); a length whose runs
            all diverged has no finite NMSE: pass ``math.inf`` (it meets no threshold).
        criterion: ``nmse_threshold`` and ``max_growth``.

    Returns:
        True iff the NMSE at the largest T is at most ``nmse_threshold`` and at most ``max_growth`` times the NMSE
        at the smallest T.

    Raises:
        ValueError: fewer than two lengths, or a value that is not a positive number or ``inf``.
    """
    if len(nmse_by_T) < 2:
        raise ValueError(f"the criterion compares at least two sequence lengths, got {sorted(nmse_by_T)}")
    for T, v in nmse_by_T.items():
        if not (is_real(v) and v > 0):  # inf allowed, NaN and non-positive values refused
            raise ValueError(f"best NMSE at T = {T} must be a positive number or inf, got {v!r}")
    lo, hi = nmse_by_T[min(nmse_by_T)], nmse_by_T[max(nmse_by_T)]
    return hi <= criterion["nmse_threshold"] and hi <= criterion["max_growth"] * lo
