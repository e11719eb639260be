"""Paper A's published figure data (decoded from the official figure files) as the library exposes it."""

from __future__ import annotations

import numpy as np
import pytest

from transformer_theory.interpolation.reference import FIG1A, FIG1B, SOURCE


def test_source_names_the_official_repository_and_commit() -> None:
    assert SOURCE["repo"].endswith("DCN-FAU-AvH/exactInterpTF") and len(SOURCE["commit"]) == 40
    assert set(SOURCE["blob_sha"]) == {"figs/figure1a.pdf", "figs/figure1b.pdf"}


def test_fig1a_is_consistent_with_itself() -> None:
    assert FIG1A.eps == 1e-4 and FIG1A.threshold == pytest.approx(6.2532e-3, rel=1e-4)
    # the first vertex is list index 1 (epoch 2): index 0 sits at log(0), outside the axes
    assert FIG1A.epochs[0] == 2 and FIG1A.epochs.max() == 50000
    assert FIG1A.losses[0] == FIG1A.initial_loss and FIG1A.losses[-1] == FIG1A.final_loss
    # along the drawn path, the crossing lies between the first vertex below the threshold and the one before
    k = int(np.flatnonzero(FIG1A.losses < FIG1A.threshold)[0])
    assert FIG1A.epochs[k - 1] <= FIG1A.first_epoch_below_threshold <= FIG1A.epochs[k]


def test_loss_at_interpolates_log_linearly_between_vertices() -> None:
    i = 100
    assert FIG1A.epochs[i - 1] < FIG1A.epochs[i] < FIG1A.epochs[i + 1] < FIG1A.epochs[i + 2]
    e0, e1, l0, l1 = FIG1A.epochs[i], FIG1A.epochs[i + 1], FIG1A.losses[i], FIG1A.losses[i + 1]
    assert FIG1A.loss_at(e0) == pytest.approx(l0, rel=1e-12)
    mid = float(np.sqrt(e0 * e1))  # the midpoint in log scale
    assert FIG1A.loss_at(mid) == pytest.approx(np.sqrt(l0 * l1), rel=1e-9)
    with pytest.raises(ValueError, match="outside the published curve"):
        FIG1A.loss_at(60000)


def test_fig1b_points_and_slope() -> None:
    assert FIG1B.eps == (0.1, 0.01, 0.001)
    slope = np.polyfit(np.log(FIG1B.eps), np.log(FIG1B.min_losses), 1)[0]
    assert slope == pytest.approx(FIG1B.fitted_slope, rel=1e-9)
    assert FIG1B.min_losses[0] == pytest.approx(3.2604e-2, rel=1e-4)
