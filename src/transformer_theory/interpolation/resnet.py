"""A token-blind ResNet that interpolates the same data: **this project's explicit construction**.

The third-party summary of Paper A states the comparison in words: a ResNet needs parameters that grow with
the input length (e.g. O(dNn)), the transformer's grow with the output length (O(d Σ_j m_j)), so for
m_j < n_j transformers are strictly more parameter-efficient. This module makes it concrete with one
explicit ResNet that provably interpolates. Being a construction, its count is an **upper bound** on what a
ResNet needs, not a lower bound.

A ResNet is token-blind: it sees no sequence structure, so it reads each input sequence X^j as one point of
R^D, D = n_max·d (tokens flattened in order, zero-padded to n_max tokens), and must map N such points to
their targets. We build it with one hat-function residual block per point (the same layer as the
construction's hat moves, built by the same code):

    x ← x + W σ(U x + b),  U ∈ R^{4×D} (four copies of a direction uᵀ),  b ∈ R^4,  W ∈ R^{D×4},

a flat-top hat of the projection u·x that sends the current point p to q and fixes every other current point.
The input map (flatten + pad) and the output map (read the first m_max·d coordinates as m_max tokens) are
fixed and parameter-free; the network reads no sequence's target length: each target is padded to m_max
tokens by repeating its last token, which leaves it the same set (Hausdorff distance 0). Counted like the
transformer (:meth:`~transformer_theory.interpolation.transformer.Transformer.num_parameters`):

* dense (η, U, b, W of every block): ``N (8 d n_max + 5)``;
* structured (η, u, 4 biases, the displacement δ, 4 bump coefficients): ``N (2 d n_max + 9)``.

Both grow with the input length n_max; the transformer construction's bound
(:func:`~transformer_theory.interpolation.construction.bounds.construction_parameter_bound`) does not.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from transformer_theory.checks import is_integer
from transformer_theory.interpolation.construction.hat import hat_move
from transformer_theory.interpolation.feed_forward import HatFeedForward

__all__ = [
    "HatResNet",
    "build_hat_resnet",
    "resnet_parameter_count",
]

def _sizes(data: Sequence) -> tuple[list[int], int | None]:
    """Input lengths and d of a list of (X, Y) pairs, or the lengths in a list of ints (d unknown)."""
    if len(data) == 0:
        raise ValueError("the dataset is empty: need at least one sequence")
    if all(is_integer(n) for n in data):
        if min(data) < 1:
            raise ValueError(f"input lengths must be positive, got {list(data)}")
        return [int(n) for n in data], None
    pairs = [(np.asarray(X, dtype=float), np.asarray(Y, dtype=float)) for X, Y in data]
    d = pairs[0][0].shape[-1]
    for j, (X, Y) in enumerate(pairs):
        if X.ndim != 2 or Y.ndim != 2 or X.shape[1] != d or Y.shape[1] != d or X.shape[0] == 0:
            raise ValueError(f"sequence {j}: X must be (n_j, {d}) and Y (m_j, {d}), got {X.shape} and {Y.shape}")
        if Y.shape[0] > X.shape[0]:
            raise ValueError(f"sequence {j}: output length m_j={Y.shape[0]} exceeds input length n_j={X.shape[0]}")
    return [X.shape[0] for X, _ in pairs], d


def resnet_parameter_count(data: Sequence, d: int | None = None, structured: bool = False) -> int:
    """Parameters of the hat ResNet of :func:`build_hat_resnet`: ``N (8 d n_max + 5)`` dense,
    ``N (2 d n_max + 9)`` structured (module docstring); this project's count, not the paper's.

    ``data`` is a list of (X^j, Y^j) pairs (d read from them) or a list of input lengths n_j (then pass ``d``).
    """
    n_lengths, d_data = _sizes(data)
    d = d_data if d_data is not None else d
    if d is None or not is_integer(d) or d < 1:
        raise ValueError(f"token dimension d must be a positive integer (pass d with a list of lengths), got {d!r}")
    D = int(d) * max(n_lengths)
    return len(n_lengths) * ((2 * D + 9) if structured else (8 * D + 5))


@dataclass(frozen=True, repr=False)
class HatResNet:
    """A residual network on R^D, D = n_max·d: one hat block ``x ← x + W σ(U x + b)`` per sequence."""

    blocks: tuple[HatFeedForward, ...]
    n_max: int
    m_max: int
    d: int

    def num_parameters(self, structured: bool = False) -> int:
        """Parameters of all blocks, dense (η, U, b, W) or structured; the input and output maps have none."""
        return sum(block.num_parameters(structured=structured) for block in self.blocks)

    def embed(self, X: np.ndarray) -> np.ndarray:
        """The input map: flatten the (n, d) sequence and zero-pad it to n_max·d."""
        X = np.asarray(X, dtype=float)
        if X.ndim != 2 or X.shape[1] != self.d or not 1 <= X.shape[0] <= self.n_max:
            raise ValueError(f"X must be (n, {self.d}) with 1 <= n <= {self.n_max}, got {X.shape}")
        x = np.zeros(self.n_max * self.d)
        x[: X.size] = X.ravel()
        return x

    def __call__(self, X: np.ndarray) -> np.ndarray:
        """Run the blocks on X and read the first ``m_max`` tokens (the output map)."""
        x = self.embed(X)[None, :]
        for block in self.blocks:
            x = block.apply(x)
        return x[0, : self.m_max * self.d].reshape(self.m_max, self.d)

    def __repr__(self) -> str:
        return (f"HatResNet(d={self.d}, n_max={self.n_max}, m_max={self.m_max}, {len(self.blocks)} blocks, "
                f"{self.num_parameters()} parameters)")


def build_hat_resnet(pairs: Sequence[tuple[np.ndarray, np.ndarray]], seed: int = 0) -> HatResNet:
    """Build the token-blind hat ResNet that maps each padded X^j to its padded, flattened Y^j.

    One block per sequence (in the given order): block j is the construction's hat layer
    (:func:`~transformer_theory.interpolation.construction.hat.hat_move`) moving the current point
    p_j = embed(X^j) to q_j = (flatten of Y^j padded to m_max tokens by repeating its last token, 0, …, 0) and
    fixing every other current point, so the output map (first m_max·d coordinates) returns Y^j as a set.
    Float64 NumPy. Raises
    ``ValueError`` when two padded inputs coincide (a token-blind network cannot tell them apart) or
    a target point coincides with another sequence's input point (the hat would move both).
    """
    n_lengths, d = _sizes(pairs)
    if d is None:
        raise ValueError("build_hat_resnet needs (X, Y) pairs, not lengths")
    m_max = max(len(Y) for _, Y in pairs)
    net = HatResNet(blocks=(), n_max=max(n_lengths), m_max=m_max, d=d)
    current = np.stack([net.embed(X) for X, _ in pairs])
    targets = np.zeros_like(current)
    for j, (_, Y) in enumerate(pairs):
        Y = np.asarray(Y, dtype=float)
        padded = np.concatenate([Y, np.repeat(Y[-1:], m_max - len(Y), axis=0)])
        targets[j, : padded.size] = padded.ravel()
    scale = 1.0 + np.abs(np.concatenate([current, targets])).max()
    tol = 1e-9 * scale
    for j in range(len(pairs)):
        for k in range(j + 1, len(pairs)):
            if np.linalg.norm(current[j] - current[k]) <= tol:
                raise ValueError(f"sequences {j} and {k} are the same point of R^(n_max d) after padding")
            if np.linalg.norm(targets[j] - current[k]) <= tol or np.linalg.norm(targets[k] - current[j]) <= tol:
                raise ValueError(f"the target of one of sequences {j}, {k} equals the other's padded input")
    rng = np.random.default_rng(seed)
    blocks = []
    for j in range(len(pairs)):
        block = hat_move(current, j, targets[j], rng)
        current = block.apply(current)
        blocks.append(block)
    return HatResNet(blocks=tuple(blocks), n_max=net.n_max, m_max=m_max, d=d)
