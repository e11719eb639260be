"""The log-log slope every chapter fits (Paper A Fig. 1b, InfoFlow's cost laws)."""

from __future__ import annotations

import numpy as np
import pytest

from transformer_theory.fitting import log_log_slope


def test_log_log_slope_recovers_power_laws() -> None:
    eps = np.array([1e-1, 1e-2, 1e-3])
    assert log_log_slope(eps, 3.0 * eps) == pytest.approx(1.0)
    assert log_log_slope(eps, 0.2 * eps**0.5) == pytest.approx(0.5)
    assert log_log_slope(eps, [0.2, 0.2, 0.2]) == pytest.approx(0.0, abs=1e-12)
    assert log_log_slope([4, 16, 64], [1.0, 0.25, 0.0625]) == pytest.approx(-1.0)


@pytest.mark.parametrize("x, y", [([0.1, 0.01, 0.001], [1.0, 0.0, 2.0]), ([0.1, 0.01, 0.001], [1.0, 2.0]),
                                  ([1, 1], [0.1, 0.2]), ([1, -2], [0.1, 0.2]), ([1, 2], [np.nan, 0.2])])
def test_log_log_slope_refuses_what_has_no_log_log_fit(x, y) -> None:
    with pytest.raises(ValueError, match="log_log_slope needs"):
        log_log_slope(x, y)
