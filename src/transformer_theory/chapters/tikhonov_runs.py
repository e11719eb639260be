"""Chapter 05's training (Paper A §6, Figs. 1a/1b) as stored runs, jobs of the engine's one executor.

Why the experiment works (Paper A §6, statement reconstructed): with L the data term and
J_ε(θ) = L(θ) + ε‖θ‖², any global minimiser θ_ε satisfies L(θ_ε) ≤ J_ε(θ_ε) ≤ J_ε(θ*) = ε‖θ*‖²,
so the optimal training loss scales (at most) linearly in ε. A fitted slope of log(min loss) vs
log ε far from 1 flags training that did not reach a global minimiser, or a model class without an
exact interpolant (e.g. η frozen at 0 through ``frozen`` in :func:`train_tikhonov`; its loss floor
is :func:`~transformer_theory.models.tikhonov.frozen_eta_loss_bound`).

The model, its data and θ* are :mod:`transformer_theory.models.tikhonov`. The training follows the official code:
``torch.optim.Adam(weight_decay=ε)`` adds ε·θ to the gradient, i.e. it minimises L + (ε/2)‖θ‖², whereas the
plotted threshold is ε‖θ*‖² (the inequality still holds, with room to spare).

A run is a :class:`Sweep` (the ε of its successive stages, their epochs, frozen parameters) on the data and
initialisation drawn from ``(N, d, n, seed)``, trained by :func:`epsilon_sweep` in one thread. Each run is a job
(:class:`TikhonovRun`) of the engine's executor (:func:`~transformer_theory.training.jobs.run_jobs`), its record
kept in the one run store (:class:`~transformer_theory.training.store.RunStore`) under a hash of its configuration
and the store's :data:`~transformer_theory.training.config.ENGINE_VERSION`: every stage's per-epoch losses, final
loss and ‖θ‖², the training time and the provenance. A matching record is reused; a corrupt, stale or inconsistent
one counts as missing and is trained again. Each run seeds its own data and model, so its numbers do not depend
on where, or next to which other runs, it was trained. The chapter itself is :mod:`.tikhonov`.
"""

from __future__ import annotations

import datetime as dt
import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import nn
from tqdm import tqdm

from transformer_theory.checks import finite_real, is_real, non_negative_int, positive_int, positive_real, seed_value
from transformer_theory.models.tikhonov import FF_WIDTH, hausdorff_to_singleton_loss, setup_experiment, squared_norm
from transformer_theory.storage.provenance import environment
from transformer_theory.training.config import ENGINE_VERSION, config_key
from transformer_theory.training.jobs import run_jobs
from transformer_theory.training.store import RecordStore

#: Adam's learning rate in the official scripts.
LR = 1e-3
#: The ``kind`` of a Tikhonov record in the run store (the engine's records have none).
KIND = "tikhonov"

# --- training (the official ``train_model`` and ``tikhonovEpsilon.py``) ---------------------------------------


def train_tikhonov(
    model: nn.Module,
    inputs: torch.Tensor,
    targets: torch.Tensor,
    eps: float,
    epochs: int,
    lr: float = 1e-3,
    frozen: Mapping[str, float] | None = None,
    progress: bool = True,
) -> np.ndarray:
    """Train ``model`` in place as the official ``train_model``; return the per-epoch data-term loss.

    Adam(lr, weight_decay = ε) with CosineAnnealingLR(T_max = epochs), one full-batch step per
    epoch (the official DataLoader has batch size N with shuffling, which only permutes the terms
    of the mean). The loss recorded at epoch k is the data term L(θ_k) before the k-th step.
    ``frozen`` maps parameter names (as in ``model.named_parameters()``) to a constant they are set
    to and kept at, e.g. ``{"eta": 0.0}``: a non-residual FF layer, a model class without an exact
    interpolant whose minimal loss stalls at a floor instead of scaling linearly in ε (the
    diagnostic of Paper A §6, see :func:`~transformer_theory.models.tikhonov.frozen_eta_loss_bound`).

    Args:
        model: The model, trained in place.
        inputs: (N, n, d).
        targets: (N, 1, d) or (N, d).
        eps: The weight decay ε, positive.
        epochs: The number of full-batch steps (and the cosine schedule's length).
        lr: Adam's learning rate.
        frozen: Parameter name -> the constant it is set to and kept at.
        progress: Show a tqdm bar.

    Returns:
        (epochs,): the data term before each step.
    """
    if isinstance(eps, bool) or not isinstance(eps, (int, float, np.floating)) or not (eps > 0 and math.isfinite(eps)):
        raise ValueError(f"regularisation eps must be a positive finite number, got {eps!r}")
    eps = float(eps)
    positive_int("epochs", epochs)
    if not lr > 0:
        raise ValueError(f"learning rate lr must be positive, got {lr!r}")
    frozen = dict(frozen or {})
    names = dict(model.named_parameters())
    unknown = sorted(set(frozen) - set(names))
    if unknown:
        raise ValueError(f"frozen: unknown parameter names {unknown}; the model has {sorted(names)}")
    with torch.no_grad():
        for name, value in frozen.items():
            names[name].fill_(float(value))
    trainable = [p for name, p in names.items() if name not in frozen]
    # fused=True: the same Adam update in one kernel (about 3x cheaper on CPU for these tiny tensors).
    optimizer = torch.optim.Adam(trainable, lr=lr, weight_decay=eps, fused=True)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=epochs)
    losses = np.empty(epochs)
    model.train()
    for epoch in tqdm(range(epochs), desc=f"eps={eps:g}", disable=not progress, mininterval=2.0):
        optimizer.zero_grad()
        loss = hausdorff_to_singleton_loss(model(inputs), targets)
        loss.backward()
        optimizer.step()
        scheduler.step()
        losses[epoch] = loss.item()
    return losses


@dataclass(frozen=True)
class StageResult:
    """One ε of a sweep: the per-epoch data-term losses, and the data term and ‖θ‖² of the parameters the
    stage ended with (after its last step)."""

    eps: float
    losses: np.ndarray
    final_loss: float
    final_sq_norm: float

    @property
    def min_loss(self) -> float:
        """The smallest per-epoch data term of the stage."""
        return float(self.losses.min())

    @property
    def objective(self) -> float:
        """``J(θ) = L(θ) + (ε/2)‖θ‖²`` at the final parameters: the objective ``Adam(weight_decay=ε)`` minimises."""
        return self.final_loss + self.eps / 2 * self.final_sq_norm

    def certifies_not_global(self, theta_star_sq_norm: float) -> bool:
        """``J(θ) > (ε/2)‖θ*‖² = J(θ*)``: then θ is provably not a global minimiser of J (see
        :func:`tikhonov_bound`)."""
        return self.objective > tikhonov_bound(self.eps, theta_star_sq_norm)


def tikhonov_bound(eps: float, theta_star_sq_norm: float) -> float:
    """``(ε/2)‖θ*‖²``: an upper bound on ``L(θ_ε) ≤ J(θ_ε) ≤ J(θ*)`` for every global minimiser θ_ε of
    ``J = L + (ε/2)‖θ‖²`` when ``L(θ*) = 0`` (Paper A §6, statement reconstructed). The official figure's
    threshold line ε‖θ*‖² is twice this bound."""
    return eps / 2 * theta_star_sq_norm


def epsilon_sweep(
    model: nn.Module,
    inputs: torch.Tensor,
    targets: torch.Tensor,
    eps_list: Sequence[float],
    epochs_list: Sequence[int],
    lr: float = 1e-3,
    frozen: Mapping[str, float] | None = None,
    progress: bool = True,
) -> list[StageResult]:
    """Fig. 1b protocol (``tikhonovEpsilon.py``): train the *same* model successively (warm start).

    For each ε (with its number of epochs) run :func:`train_tikhonov`; each stage records its loss curve and
    the data term and squared norm of the parameters it ends with.

    Args:
        eps_list: The ε of the successive stages.
        epochs_list: The epochs of each stage (same length as ``eps_list``).
        lr, frozen, progress: As in :func:`train_tikhonov` (``model``, ``inputs``, ``targets`` too).

    Returns:
        One :class:`StageResult` per stage.
    """
    if len(eps_list) != len(epochs_list) or len(eps_list) == 0:
        raise ValueError(
            f"eps_list and epochs_list must be non-empty and of equal length, got {len(eps_list)} and {len(epochs_list)}"
        )
    stages = []
    for eps, epochs in zip(eps_list, epochs_list):
        losses = train_tikhonov(model, inputs, targets, eps, epochs, lr=lr, frozen=frozen, progress=progress)
        with torch.no_grad():
            final = hausdorff_to_singleton_loss(model(inputs), targets).item()
        stages.append(StageResult(float(eps), losses, final, squared_norm(model)))
    return stages


# --- the runs: jobs of the one executor, records of the one run store ----------------------------------------


@dataclass(frozen=True)
class Sweep:
    """One independent training run of the chapter: a fresh model from ``seed``, trained successively
    at each ``eps`` for the matching number of ``epochs`` (one ε: Fig. 1a; several: Fig. 1b)."""

    name: str
    eps: Sequence[float]
    epochs: Sequence[int]
    frozen: Mapping[str, float] | None = None


def run_config(sweep: Sweep, N: int, d: int, n: int, seed: int) -> dict[str, Any]:
    """The full configuration of ``sweep`` on the data of ``(N, d, n, seed)``, as JSON types (its name
    is a label, not part of the run).

    Args:
        sweep: The stages' ε and epochs and the frozen parameters.
        N, d, n, seed: The data and initialisation
            (:func:`~transformer_theory.models.tikhonov.generate_synthetic_data`).

    Raises:
        ValueError: the stages are empty or unequal in length, or a value is out of range.
    """
    if len(sweep.eps) != len(sweep.epochs) or not sweep.eps:
        raise ValueError(f"sweep {sweep.name!r}: eps and epochs must be non-empty and of equal length")
    frozen = {str(k): finite_real(f"{sweep.name}: frozen[{k!r}]", v) for k, v in sorted((sweep.frozen or {}).items())}
    return {
        "eps": [positive_real(f"{sweep.name}: eps", e) for e in sweep.eps],
        "epochs": [positive_int(f"{sweep.name}: epochs", k) for k in sweep.epochs],
        "frozen": frozen or None,
        "N": positive_int("N", N), "d": positive_int("d", d), "n": positive_int("n", n), "seed": seed_value(seed),
        "lr": LR, "ff_width": FF_WIDTH, "dtype": "float32",
    }


def run_key(config: dict[str, Any]) -> str:
    """Hash of the configuration and the store's :data:`~transformer_theory.training.config.ENGINE_VERSION` (the
    run's name in the run store)."""
    return config_key(config, {"engine_version": ENGINE_VERSION})


def _encode(values: Sequence[float], precision: str) -> list[float]:
    """Losses as JSON numbers: in ``"float32"`` by the shortest decimals of their float32 values (``str`` of a
    NumPy float32: half the digits of a double), in ``"float64"`` in full."""
    values = np.asarray(values, dtype=np.float64)
    if precision == "float32":
        return [float(str(v)) for v in values.astype(np.float32)]
    return values.tolist()


def _decode(values: Sequence[float], precision: str) -> np.ndarray:
    array = np.asarray(values, dtype=np.float64)
    return array.astype(np.float32).astype(np.float64) if precision == "float32" else array


def _precision(arrays: Sequence[Sequence[float]], dtype: str) -> str:
    """``"float32"`` if the run is in float32 and every value reads back exactly from its short decimals
    (a float32 model's losses are float32 numbers), else ``"float64"``."""
    if dtype != "float32":
        return "float64"
    for values in arrays:
        values = np.asarray(values, dtype=np.float64)
        if not np.array_equal(_decode(_encode(values, "float32"), "float32"), values, equal_nan=True):
            return "float64"
    return "float32"


def valid_run_record(record: Any, config: dict[str, Any]) -> bool:
    """Whether ``record`` is an intact Tikhonov result of exactly ``config`` under this
    :data:`~transformer_theory.training.config.ENGINE_VERSION`."""
    try:
        if (record["key"], record["kind"], record["engine_version"], record["config"]) != (
                run_key(config), KIND, ENGINE_VERSION, config):
            return False
        stages = record["stages"]
        if record["losses_precision"] not in ("float32", "float64") or len(stages) != len(config["eps"]):
            return False
        for stage, eps, epochs in zip(stages, config["eps"], config["epochs"]):
            losses = stage["losses"]
            if stage["eps"] != eps or len(losses) != epochs or not all(is_real(v) for v in losses):
                return False
            if not (is_real(stage["final_loss"]) and is_real(stage["final_sq_norm"]) and stage["final_sq_norm"] >= 0):
                return False
        return is_real(record["wall_time_s"]) and record["wall_time_s"] >= 0
    except (KeyError, TypeError):
        return False


def train_run(config: dict[str, Any]) -> dict[str, Any]:
    """Train the run of ``config`` in one thread (tiny tensors: one thread per run, one run per core);
    its record. Runs on a Dask worker or in this process (whose thread count is restored)."""
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        data, model = setup_experiment(N=config["N"], d=config["d"], n=config["n"], seed=config["seed"],
                                       dtype=getattr(torch, config["dtype"]), ff_width=config["ff_width"])
        start = time.perf_counter()
        stages = epsilon_sweep(model, data.inputs, data.targets, config["eps"], config["epochs"], lr=config["lr"],
                               frozen=config["frozen"], progress=False)
        seconds = time.perf_counter() - start
    finally:
        torch.set_num_threads(previous)
    finals = [st.final_loss for st in stages]
    precision = _precision([*(st.losses for st in stages), finals], config["dtype"])
    return {
        "key": run_key(config), "kind": KIND, "engine_version": ENGINE_VERSION, "config": config,
        "losses_precision": precision,
        "stages": [{"eps": st.eps, "losses": _encode(st.losses, precision), "final_loss": final,
                    "final_sq_norm": st.final_sq_norm} for st, final in zip(stages, _encode(finals, precision))],
        "wall_time_s": round(seconds, 3), "threads": 1,
        "finished_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"), **environment(),
    }


@dataclass(frozen=True)
class TikhonovRun:
    """The run of ``config`` as a :class:`~transformer_theory.training.jobs.StoredJob`: named by its
    :func:`run_key`, costing its epochs, trained by :func:`train_run`, checked by :func:`valid_run_record`."""

    config: dict[str, Any]

    @property
    def key(self) -> str:
        return run_key(self.config)

    @property
    def cost(self) -> int:
        return sum(self.config["epochs"])

    def run(self) -> dict[str, Any]:
        return train_run(self.config)

    def valid(self, record: dict[str, Any]) -> bool:
        return valid_run_record(record, self.config)


def stages_of(record: dict[str, Any]) -> list[StageResult]:
    """The stages of a stored run, with the numbers the training produced (bit for bit)."""
    precision = record["losses_precision"]
    return [StageResult(float(stage["eps"]), _decode(stage["losses"], precision),
                        float(_decode([stage["final_loss"]], precision)[0]), float(stage["final_sq_norm"]))
            for stage in record["stages"]]


def run_sweeps(sweeps: Sequence[Sweep], N: int, d: int, n: int, seed: int, *, store: RecordStore,
               n_workers: int | None = None, scheduler: str | None = None) -> dict[str, tuple[list[StageResult], float]]:
    """name -> (stages, training seconds) of every sweep on the data of ``(N, d, n, seed)``.

    Records come from ``store`` (the profile's run store) where a valid one exists; the missing runs are trained,
    longest first, on ``n_workers`` single-threaded local Dask workers (default one per core, at most one per run)
    or on the cluster at ``scheduler``, and stored; ``n_workers=0`` trains them in this process, one after another.
    The numbers are the same either way.

    Args:
        sweeps: The runs, with distinct names.
        N, d, n, seed: The data and initialisation every run shares
            (:func:`~transformer_theory.models.tikhonov.generate_synthetic_data`).
        store: The run store (a :class:`~transformer_theory.training.store.RunStore`, or any
            :class:`~transformer_theory.training.store.RecordStore`).
        n_workers: Local single-threaded workers; ``0``: this process.
        scheduler: The address of a running Dask scheduler.

    Returns:
        Sweep name -> (its stages, its training seconds).
    """
    names = [s.name for s in sweeps]
    if len(set(names)) != len(names):
        raise ValueError(f"sweep names must be distinct, got {names}")
    if n_workers is not None:
        non_negative_int("n_workers", n_workers)
    configs = {s.name: run_config(s, N, d, n, seed) for s in sweeps}
    records = run_jobs([TikhonovRun(config) for config in configs.values()], store, scheduler=scheduler,
                       workers=n_workers)
    return {name: (stages_of(record), float(record["wall_time_s"])) for name, record in zip(configs, records)}


