"""The Tikhonov chapter's trainings (Paper A, §6, Figs. 1a/1b) as stored runs, trained on the engine's Dask executor.

A run is an :class:`Experiment` (the ε of its successive stages, their epochs, frozen parameters) on the data
and initialisation drawn from ``(N, d, n, seed)`` (:func:`~transformer_theory.training.tikhonov.setup_experiment`),
trained by :func:`~transformer_theory.training.tikhonov.epsilon_sweep` in one thread. Its record is keyed by a
hash of the full configuration and :data:`TIKHONOV_VERSION` and holds every stage's per-epoch losses, final
loss and ‖θ‖², the training time and the provenance (versions, commit, platform); it is written atomically
into a :class:`~transformer_theory.training.store.RecordStore`: by default the subfolder ``tikhonov/`` of the
profile's run store, which reads the committed ``results/<profile>/runs/tikhonov/`` first. A matching record
is reused; a corrupt, stale or inconsistent one counts as missing and is trained again.

Each run is a job (:class:`TikhonovRun`) of the engine's executor (:func:`~transformer_theory.training.jobs.run_jobs`):
missing runs are trained in this process, on a local cluster of single-threaded workers or on an existing
cluster, longest first. Each run seeds its own data and model, so its numbers do not depend on where, or next
to which other runs, it was trained.
"""

from __future__ import annotations

import datetime as dt
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from transformer_theory.checks import finite_real, is_real, non_negative_int, positive_int, positive_real, seed_value
from transformer_theory.storage.provenance import environment
from transformer_theory.storage.results import current_profile
from transformer_theory.training.config import config_key
from transformer_theory.training.jobs import run_jobs
from transformer_theory.training.store import RecordStore, default_store
from transformer_theory.training.tikhonov import FF_WIDTH, StageResult, epsilon_sweep, setup_experiment

#: Bumped whenever the meaning of a stored Tikhonov run changes (data, model, loss, optimiser, schedule):
#: records of another version are trained again, never reused.
TIKHONOV_VERSION = 1
#: Adam's learning rate in the official scripts.
LR = 1e-3
#: Subfolder of a profile's run store that holds the Tikhonov records.
SUBFOLDER = "tikhonov"


@dataclass
class Experiment:
    """One independent training run of the chapter: a fresh model from ``seed``, trained successively
    at each ``eps`` for the matching number of ``epochs`` (one ε: Fig. 1a; several: Fig. 1b)."""

    name: str
    eps: Sequence[float]
    epochs: Sequence[int]
    frozen: Mapping[str, float] | None = None


def run_config(experiment: Experiment, N: int, d: int, n: int, seed: int) -> dict[str, Any]:
    """The full configuration of ``experiment`` on the data of ``(N, d, n, seed)``, as JSON types (its name
    is a label, not part of the run).

    Args:
        experiment: The stages' ε and epochs and the frozen parameters.
        N, d, n, seed: The data and initialisation
            (:func:`~transformer_theory.training.tikhonov.generate_synthetic_data`).

    Raises:
        ValueError: the stages are empty or unequal in length, or a value is out of range.
    """
    if len(experiment.eps) != len(experiment.epochs) or not experiment.eps:
        raise ValueError(f"experiment {experiment.name!r}: eps and epochs must be non-empty and of equal length")
    frozen = {str(k): finite_real(f"{experiment.name}: frozen[{k!r}]", v)
              for k, v in sorted((experiment.frozen or {}).items())}
    return {
        "eps": [positive_real(f"{experiment.name}: eps", e) for e in experiment.eps],
        "epochs": [positive_int(f"{experiment.name}: epochs", k) for k in experiment.epochs],
        "frozen": frozen or None,
        "N": positive_int("N", N), "d": positive_int("d", d), "n": positive_int("n", n), "seed": seed_value(seed),
        "lr": LR, "ff_width": FF_WIDTH, "dtype": "float32",
    }


def run_key(config: dict[str, Any]) -> str:
    """Hash of the configuration and :data:`TIKHONOV_VERSION` (the run's name in a store)."""
    return config_key(config, {"tikhonov_version": TIKHONOV_VERSION})


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
    """Whether ``record`` is an intact result of exactly ``config`` under this :data:`TIKHONOV_VERSION`."""
    try:
        if (record["key"], record["tikhonov_version"], record["config"]) != (run_key(config), TIKHONOV_VERSION, config):
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
        "key": run_key(config), "tikhonov_version": TIKHONOV_VERSION, "config": config,
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


def default_tikhonov_store(profile: str) -> RecordStore:
    """The subfolder ``tikhonov/`` of the run store of ``profile`` (see
    :func:`~transformer_theory.training.store.default_store`)."""
    runs = default_store(profile)
    return RecordStore(runs.root / SUBFOLDER, [folder / SUBFOLDER for folder in runs.read_also])


def run_experiments(
    experiments: Sequence[Experiment], N: int = 10, d: int = 16, n: int = 100, seed: int = 0, *,
    store: RecordStore | str | os.PathLike | None = None, n_workers: int | None = None, scheduler: str | None = None,
) -> dict[str, tuple[list[StageResult], float]]:
    """name -> (stages, training seconds) of every experiment on the data of ``(N, d, n, seed)``.

    Records come from ``store`` (a folder or :class:`~transformer_theory.training.store.RecordStore`; default
    :func:`default_tikhonov_store` of the profile the notebook runs under) where a valid one exists; the
    missing runs are trained, longest first, on ``n_workers`` single-threaded local Dask workers (default
    one per core, at most one per run) or on the cluster at ``scheduler``, and stored; ``n_workers=0``
    trains them in this process, one after another. The numbers are the same either way.

    Args:
        experiments: The runs, with distinct names.
        N, d, n, seed: The data and initialisation every run shares
            (:func:`~transformer_theory.training.tikhonov.generate_synthetic_data`).
        store: A folder or :class:`~transformer_theory.training.store.RecordStore`.
        n_workers: Local single-threaded workers; ``0``: this process.
        scheduler: The address of a running Dask scheduler.

    Returns:
        Experiment name -> (its stages, its training seconds).
    """
    names = [e.name for e in experiments]
    if len(set(names)) != len(names):
        raise ValueError(f"experiment names must be distinct, got {names}")
    if n_workers is not None:
        non_negative_int("n_workers", n_workers)
    configs = {e.name: run_config(e, N, d, n, seed) for e in experiments}
    if store is None:
        store = default_tikhonov_store(current_profile())
    elif not isinstance(store, RecordStore):
        store = RecordStore(store)
    records = run_jobs([TikhonovRun(config) for config in configs.values()], store, scheduler=scheduler,
                       workers=n_workers)
    return {name: (stages_of(record), float(record["wall_time_s"])) for name, record in zip(configs, records)}
