"""Values published in Paper A that the chapters compare against (read off the published figures).

Fig. 1a (Tikhonov training loss at ε = 1e-4, §6): the loss at a few epochs and the plotted threshold
ε‖θ*‖²; Fig. 1b: the minimum training loss at ε = 1e-1, 1e-2, 1e-3. These are readings of the
published figures by eye, as text; the chapters print them beside this project's numbers.
"""

from __future__ import annotations

#: Fig. 1a: epoch -> the loss read off the published curve
FIG1A_LOSS_BY_EPOCH: dict[int, str] = {
    100: "≈1.7e3 (flat until 50–100)",
    700: "≈1",
    2500: "≈3e-2",
    15000: "≈1.5e-2",
    20000: "≈ threshold",
    50000: "≈4e-4",
}
#: Fig. 1a: the plotted threshold ε‖θ*‖² at ε = 1e-4, read off the figure
FIG1A_THRESHOLD = "≈ 6.7e-3"
#: Fig. 1b: the ε values and the minimum training losses read off the figure
FIG1B_EPS = (0.1, 0.01, 0.001)
FIG1B_MIN_LOSSES = (3.1e-2, 1.27e-2, 5.0e-4)
