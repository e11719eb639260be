"""Values published by Paper A that the chapters compare against: the data of Figs. 1a and 1b.

Decoded from the vector figure files of the official repository (github.com/DCN-FAU-AvH/exactInterpTF, commit
``1f633bb249104a4856c0969d5432798791f7ce85``, ``figs/figure1a.pdf`` and ``figs/figure1b.pdf``; the blob hashes
are in :data:`SOURCE`): the PDF content streams were parsed and the device coordinates mapped to data
coordinates by fitting the labelled tick marks, which the fit reproduces to 3e-8 decade. Matplotlib's path
simplification dropped the vertices of Fig. 1a that lie within about 1 % of a straight line, so the curve is
exact at its vertices and interpolated (log-log straight segments) between them. The data file is
``interpolation/data/paper_a_tikhonov_figures.json``.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

_DATA = json.loads((Path(__file__).parent / "data" / "paper_a_tikhonov_figures.json").read_text())

#: Repository, commit, file names and blob hashes of the decoded figures.
SOURCE: dict = _DATA["source"]


@dataclass(frozen=True)
class Fig1a:
    """Fig. 1a (one training run at ε = 1e-4): the loss per epoch and the threshold ε‖θ*‖²."""

    eps: float
    threshold: float
    initial_loss: float  # the first plotted vertex, epoch 2
    final_loss: float
    first_epoch_below_threshold: float  # interpolated along the plotted segment (epoch = list index + 1)
    epochs: np.ndarray  # epochs of the plotted vertices (from epoch 2: epoch 1 is at log-index 0, off the axes)
    losses: np.ndarray  # loss at those epochs

    def loss_at(self, epoch: float) -> float:
        """The published loss at ``epoch``: exact at a vertex, else on the straight log-log segment between the
        nearest vertices in epoch order; ``ValueError`` outside the plotted epochs. (The simplified path keeps
        local extremes and so steps back in epoch in places; sorting by epoch makes it a function again.)"""
        order = np.argsort(self.epochs, kind="stable")
        epochs, losses = self.epochs[order], self.losses[order]
        if not epochs[0] <= epoch <= epochs[-1]:
            raise ValueError(f"epoch {epoch} is outside the published curve (epochs {epochs[0]:g}..{epochs[-1]:g})")
        return float(np.exp(np.interp(np.log(epoch), np.log(epochs), np.log(losses))))


@dataclass(frozen=True)
class Fig1b:
    """Fig. 1b: the minimum training loss at each ε (largest ε first, the order the official script trains them)."""

    eps: tuple[float, ...]
    min_losses: tuple[float, ...]
    fitted_slope: float


def relative_difference(ours: float, published: float) -> float:
    """``|ours − published| / |published|``: how far a recomputed number is from the published one."""
    if not math.isfinite(published) or published == 0:
        raise ValueError(f"relative_difference: the published value must be finite and nonzero, got {published!r}")
    return abs(ours - published) / abs(published)


def _nominal(eps: float) -> float:
    """The decoded ε (a tick position, e.g. 0.010000000000000005) as the power of ten the script uses."""
    return 10.0 ** round(math.log10(eps))


def _fig1a() -> Fig1a:
    a = _DATA["fig1a"]
    curve = np.asarray(a["curve_index_loss"], dtype=float)
    return Fig1a(a["eps"], a["threshold"], a["initial_loss"], a["final_loss"], a["first_index_below_threshold"] + 1,
                 curve[:, 0] + 1, curve[:, 1])


def _fig1b() -> Fig1b:
    b = _DATA["fig1b"]
    order = np.argsort(b["eps"])[::-1]
    return Fig1b(tuple(_nominal(b["eps"][i]) for i in order), tuple(float(b["min_loss"][i]) for i in order),
                 float(b["fitted_slope"]))


#: The published Fig. 1a.
FIG1A: Fig1a = _fig1a()
#: The published Fig. 1b.
FIG1B: Fig1b = _fig1b()
