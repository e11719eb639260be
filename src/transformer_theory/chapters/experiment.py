"""What an experiment is: named defaults (a chapter's parameters) that build a list of tagged runs, with the
chapter's predictions, tables and claims on their results (:class:`Experiment`, :class:`RunResult`), and the
InfoFlow/P1 model and run every experiment of the book trains.

Every model is the InfoFlow/P1 model of :mod:`transformer_theory.models` that :func:`infoflow_model` builds: a
two-layer ReLU encoder, a CLS token, no positional encoding (learned positions where a chapter asks for them), no
LayerNorm, residual GeLU FFNs and a linear CLS readout (the last layer computes only the CLS query). The registry
of the book's experiments is :data:`transformer_theory.chapters.registry.EXPERIMENTS`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from transformer_theory.checks import positive_int, seed_value, unknown_name
from transformer_theory.infoflow.efficiency import observed_efficient
from transformer_theory.models.config import TransformerConfig
from transformer_theory.training.config import RunConfig
from transformer_theory.training.record import RunRecord
from transformer_theory.training.store import RunStore

#: Training settings shared by the experiments (InfoFlow §4 with the sizes measured on CPU).
TRAINING_DEFAULTS: dict[str, Any] = {
    "steps": 8000,
    "batch_size": 256,
    "lr": 3e-3,
    "warmup": 200,
    "weight_decay": 1e-2,
    "train_size": 100_000,  # InfoFlow §4 (as summarised): tens to hundreds of thousands of i.i.d. samples
    "val_size": 4096,
    "eval_every": 100,
    "seeds": [0, 1],
    "ffn_width": 64,
    "encoder_width": 32,
}


#: The statistic every training chapter reports and its committed criteria name (InfoFlow's and P1's).
BEST_NMSE_STATISTIC = ("best validation NMSE: the minimum over seeds and checkpoints of mean((y_hat - y)^2) / Var(y) "
                       "on the held-out samples of each run")


@dataclass(frozen=True)
class ExperimentRun:
    """One run of an experiment and the tags a chapter tabulates it by (``layers``, ``heads``, ``T``, ...);
    ``weights``: the chapter reads its trained model (a run without readable weights is trained again)."""

    tags: dict[str, Any]
    config: RunConfig
    weights: bool = False


@dataclass(frozen=True)
class RunResult:
    """One run of an experiment as :func:`~transformer_theory.chapters.registry.run_experiment` returns it: the
    ``tags`` a chapter tabulates it by and its ``record``, a :class:`~transformer_theory.training.record.RunRecord`
    (configuration, history, ``best_nmse``, ...)."""

    tags: dict[str, Any]
    record: RunRecord

    @property
    def best_nmse(self) -> float | None:
        """The run's best validation NMSE (``None``: it diverged)."""
        return self.record.best_nmse


#: A chapter's results: one :class:`RunResult` per run, in the order of its run list.
Results = Sequence[RunResult]


@dataclass(frozen=True)
class Experiment:
    """A chapter's experiment: its ``name`` (the notebook's stem), ``defaults`` (the notebook's parameters) and the
    chapter's protocol, each a function of the complete parameters (the defaults overridden): ``build`` (its runs),
    ``predict`` (what it fixed before its runs: criteria, the calculator's predictions), ``tabulate`` (its main
    tables of the results, by name) and ``judge`` (its claims: the verdicts it asserts, by name, given the run store
    that holds the weights of the runs a claim reads); ``optional``: the list parameters a profile may leave empty,
    leaving out a part whose runs it does not train (the chapter says which).

    The methods :meth:`runs`, :meth:`predictions`, :meth:`tables` and :meth:`claims` take overrides of the
    defaults, as a notebook's ``parameters`` or a profile entry holds them."""

    name: str
    defaults: dict[str, Any]
    build: Callable[[dict[str, Any]], list[ExperimentRun]]
    predict: Callable[[dict[str, Any]], dict[str, Any]]
    tabulate: Callable[[Results, dict[str, Any]], dict[str, list[dict[str, Any]]]]
    judge: Callable[[Results, dict[str, Any], RunStore], dict[str, bool]]
    optional: tuple[str, ...] = ()

    def parameters(self, values: dict[str, Any] | None = None) -> dict[str, Any]:
        """The defaults overridden by ``values``; an unknown name raises ``ValueError``."""
        values = dict(values or {})
        unknown = sorted(set(values) - set(self.defaults))
        if unknown:
            raise unknown_name("parameter", unknown[0], self.defaults, f"experiment {self.name!r}: ")
        return {**self.defaults, **values}

    def runs(self, values: dict[str, Any] | None = None) -> list[ExperimentRun]:
        """The experiment's runs for the defaults overridden by ``values`` (:meth:`parameters`)."""
        return self.build(self.parameters(values))

    def predictions(self, values: dict[str, Any] | None = None) -> dict[str, Any]:
        """What the chapter fixed before its runs (criteria, predictions), for the defaults overridden by
        ``values``."""
        return self.predict(self.parameters(values))

    def tables(self, results: Results, values: dict[str, Any] | None = None) -> dict[str, list[dict[str, Any]]]:
        """The chapter's main tables of ``results`` (the runs for ``values``), by name."""
        return self.tabulate(results, self.parameters(values))

    def claims(self, results: Results, values: dict[str, Any] | None, store: RunStore) -> dict[str, bool]:
        """The claims the chapter asserts, judged on ``results`` (the runs for ``values``).

        Args:
            results: The :class:`RunResult` of every run of :meth:`runs` for ``values``.
            values: Overrides of the defaults (``None``: the defaults).
            store: The run store holding the weights of the runs a claim reads (a notebook's ``context.store``).

        Returns:
            Claim name -> verdict (a claim that does not apply to these parameters is left out).
        """
        verdicts = self.judge(results, self.parameters(values), store)
        bad = {k: v for k, v in verdicts.items() if not isinstance(k, str) or not isinstance(v, bool)}
        if bad:
            raise TypeError(f"experiment {self.name!r}: claims must map names to bools, got {bad!r}")
        return verdicts


def claim_name(*parts: Any) -> str:
    """A claim's name from ``parts`` (``"agrees", "k_hop(2) (1,1)"`` -> ``"agrees_k_hop_2_1_1"``): lower case, every
    run of other characters than letters and digits one underscore."""
    return re.sub(r"[^a-z0-9]+", "_", "_".join(str(p) for p in parts).lower()).strip("_")


def applicable(verdicts: Mapping[str, Any]) -> dict[str, bool]:
    """``verdicts`` as claims: each as a plain ``bool``, those that are ``None`` (not applicable) left out."""
    return {name: bool(v) for name, v in verdicts.items() if v is not None}


def non_empty_list(name: str, values: Any, what: str) -> Sequence[Any]:
    """``values`` if it is a non-empty list (or tuple), else ``ValueError``.

    Args:
        name: The parameter's name, for the message.
        values: The value to check.
        what: What the items are, for the message ("``name`` must be a non-empty list of ``what``").
    """
    if isinstance(values, (str, bytes)) or not isinstance(values, Sequence) or not values:
        raise ValueError(f"{name} must be a non-empty list of {what}, got {values!r}")
    return values


def int_list(name: str, values: Any, low: int = 1) -> list[int]:
    """``values`` as a non-empty list of integers ``>= low`` (a parameter's check; ``ValueError`` naming it)."""
    values = non_empty_list(name, values, "integers")
    out = [positive_int(f"{name}[{i}]", v) for i, v in enumerate(values)]
    if min(out) < low:
        raise ValueError(f"{name} must hold integers >= {low}, got {values!r}")
    return out


def seed_list(name: str, values: Any) -> list[int]:
    """``values`` as a non-empty list of seeds, integers ``>= 0`` (a parameter's check; ``ValueError`` naming it)."""
    return [seed_value(v, f"{name}[{i}]") for i, v in enumerate(non_empty_list(name, values, "seeds"))]


def infoflow_model(p: dict[str, Any], heads: Sequence[int], embed_dim: int, head_dim: int, ffn_width: int, *,
                   d: int = 4, max_len: int | None = None, encoder_width: int | None = None,
                   readout_dim: int = 1, joint_positions: bool = False) -> TransformerConfig:
    """The InfoFlow/P1 model every chapter trains (the one builder of its configuration).

    Args:
        p: The experiment's parameters; ``p["encoder_width"]`` is the encoder width unless ``encoder_width`` is given.
        heads: The head count of each layer (the layer count is its length).
        embed_dim: E, the width of the residual stream.
        head_dim: n, the per-head query/key dimension.
        ffn_width: The hidden width of each FFN.
        d: The token dimension.
        max_len: Learned positions up to this sequence length (``None``: no positional encoding).
        encoder_width: The encoder's hidden width (``None``: ``p["encoder_width"]``).
        readout_dim: The output dimension of the CLS readout.
        joint_positions: Encode (token, position) jointly inside the encoder instead of adding positions after it.

    Returns:
        The model's configuration.
    """
    return TransformerConfig(d=d, heads=tuple(heads), embed_dim=embed_dim, head_dim=head_dim, ffn_width=ffn_width,
                             encoder_width=p["encoder_width"] if encoder_width is None else encoder_width,
                             max_len=max_len, cls_token=True, readout_dim=readout_dim, cls_only_last=True,
                             joint_positions=joint_positions)


def experiment_run(p: dict[str, Any], model: TransformerConfig, target: str, target_args: dict, seq_len: int,
                   seed: int, steps: int | None = None) -> RunConfig:
    """A run of ``model`` on ``target`` with the training settings of ``p``.

    Args:
        p: The experiment's parameters, holding the settings of :data:`TRAINING_DEFAULTS`; without ``train_size``
            (or with ``None``) the run trains on fresh samples at every step.
        model: The model to train (:func:`infoflow_model`).
        target: The name of a registered target (:mod:`~transformer_theory.training.registry`).
        target_args: The target function's arguments.
        seq_len: The sequence length T.
        seed: The seed of the initialisation and of every data draw.
        steps: Replaces ``p["steps"]`` (a chapter with parts of different lengths).

    Returns:
        The run's configuration.
    """
    return RunConfig(model=model, target=target, target_args=target_args, seq_len=seq_len,
                     steps=p["steps"] if steps is None else steps, batch_size=p["batch_size"], lr=p["lr"],
                     warmup=p["warmup"], weight_decay=p["weight_decay"], train_size=p.get("train_size"),
                     val_size=p["val_size"], eval_every=p["eval_every"], seed=seed)


def best_over_seeds(results: Results, ignore: Sequence[str] = ()) -> list[dict[str, Any]]:
    """One row per configuration: the minimum over seeds of the best validation NMSE (the statistic InfoFlow
    and its predecessor report), with the seeds' values beside it.

    Args:
        results: Runs, as :func:`~transformer_theory.chapters.registry.run_experiment` returns them.
        ignore: Tags besides ``seed`` that do not name a configuration (left out of the rows).

    Returns:
        Rows, in order of first appearance: the tags without ``seed`` and ``ignore``, ``seed_nmse`` (seed -> its
        best NMSE, ``None`` if it diverged) and ``nmse`` (the minimum of the finite ones, ``None`` if there is none).
    """
    rows: dict[str, dict[str, Any]] = {}
    for r in results:
        config = {k: v for k, v in r.tags.items() if k != "seed" and k not in ignore}
        row = rows.setdefault(repr(sorted(config.items())), {**config, "seed_nmse": {}})
        row["seed_nmse"][r.tags.get("seed")] = r.best_nmse
    for row in rows.values():
        finite = [v for v in row["seed_nmse"].values() if v is not None]
        row["nmse"] = min(finite) if finite else None
    return list(rows.values())


def validation_curve(result: RunResult, group: str) -> dict[str, Any]:
    """One run's validation curve in the form of
    :func:`~transformer_theory.plotting.intrinsic_dimension.plot_validation_curves`.

    Args:
        result: The run (its tags with ``seed``).
        group: The name of the curve's group in the figure.

    Returns:
        ``label`` (the seed), ``group``, ``steps`` and ``nmse`` (the validation NMSE at each step).
    """
    history = result.record.history
    return {"label": f"seed {result.tags['seed']}", "group": group, "steps": list(history.step),
            "nmse": list(history.val_nmse)}


def curve_summary(record: RunRecord) -> dict[str, Any]:
    """What a learning curve says about the training.

    Args:
        record: A run's record.

    Returns:
        ``best_nmse`` and ``best_step``, ``steps`` (the schedule's length), ``final_nmse``, ``late_gain``, the best
        NMSE of the first three quarters of the schedule over the best of all of it, and ``half_gain``, the same
        for the first half (about 1: it had settled; well above 1: it was still improving when the schedule
        ended; under a cosine schedule that decays to zero the last quarter takes small steps, so ``half_gain``
        is the stronger signal). A gain is ``None`` when no finite NMSE was recorded by then, or without a best NMSE.
    """
    steps, nmse = record.history.step, record.history.val_nmse
    total = record.steps
    best = record.best_nmse

    def gain(fraction: float) -> float | None:
        early = [v for s, v in zip(steps, nmse) if v is not None and s <= fraction * total]
        return min(early) / best if early and best else None

    return {"best_nmse": best, "best_step": record.best_step, "steps": total, "final_nmse": record.final_nmse,
            "late_gain": gain(0.75), "half_gain": gain(0.5)}


def book_efficiency(rows: Sequence[Mapping[str, Any]], by: Sequence[str],
                    siblings: Sequence[str] = ()) -> list[dict[str, Any]]:
    """The book's criterion for "observed efficient" (:func:`~transformer_theory.infoflow.efficiency.observed_efficient`,
    calibrated on P1's known answers) on a chapter's table.

    Args:
        rows: Table rows with ``T``, ``nmse`` (best validation NMSE; ``None``: every run diverged) and optionally
            ``predicted_efficient``.
        by: The keys that name a configuration (its rows at the different T are judged together).
        siblings: The keys that name a configuration's target: the configurations with the same values of these
            keys are its siblings (trained on the same target at the same budget), and a configuration must come
            within :data:`~transformer_theory.infoflow.efficiency.SIBLING_GAP` of the best of them at its largest
            T; ``()``: every configuration of the table is a sibling.

    Returns:
        One row per configuration trained at two or more T, in the order of first appearance: the ``by`` values,
        ``nmse_by_T``, ``observed_efficient`` (the calibrated criterion), ``absolute_efficient`` (the absolute rule
        alone, :data:`~transformer_theory.infoflow.efficiency.EFFICIENCY`, the book's criterion before the
        calibration: where the two differ, the calibration changed the verdict), ``predicted_efficient`` (``None``
        where the rows lack it or disagree), and ``agrees`` (``None`` without a prediction).
    """
    groups: dict[str, list[Mapping[str, Any]]] = {}
    for r in rows:
        groups.setdefault(repr([r[k] for k in by]), []).append(r)
    best: dict[tuple[str, Any], float] = {}  # (target, T) -> the best NMSE of the siblings there
    for r in rows:
        key = (repr([r[k] for k in siblings]), r["T"])
        best[key] = min(best.get(key, math.inf), math.inf if r["nmse"] is None else r["nmse"])
    out = []
    for members in groups.values():
        nmse = {m["T"]: math.inf if m["nmse"] is None else m["nmse"] for m in members}
        if len(nmse) < 2:
            continue
        target = repr([members[0][k] for k in siblings])
        reference = {T: best[(target, T)] for T in nmse}
        predicted = {m.get("predicted_efficient") for m in members}
        pred = predicted.pop() if len(predicted) == 1 else None
        observed = observed_efficient(nmse, reference_by_T=reference)
        out.append({**{k: members[0][k] for k in by}, "nmse_by_T": dict(sorted(nmse.items())),
                    "observed_efficient": observed, "absolute_efficient": observed_efficient(nmse),
                    "predicted_efficient": pred, "agrees": None if pred is None else observed == pred})
    return out


def criterion_changes(rows: Sequence[Mapping[str, Any]], by: Sequence[str]) -> list[str]:
    """The configurations of :func:`book_efficiency`'s ``rows`` whose verdict the calibration changed (the calibrated
    criterion against the absolute rule alone), each named by its ``by`` values."""
    return [", ".join(f"{k} = {r[k]}" for k in by) for r in rows if r["observed_efficient"] != r["absolute_efficient"]]


def efficiency_reason(rows: Sequence[Mapping[str, Any]], by: Sequence[str]) -> str:
    """A claim's reason on :func:`book_efficiency`'s ``rows``: how many configurations the book's calibrated criterion
    observes as predicted, and which verdicts the calibration changed."""
    agree = sum(bool(r["agrees"]) for r in rows)
    changed = criterion_changes(rows, by)
    return (f"by the book's criterion (calibrated on P1) {agree} of {len(rows)} configurations are observed as "
            f"predicted; the calibration " + (f"changed the verdict of {'; '.join(changed)}" if changed
                                              else "changed no verdict"))


def training_seconds(results: Results) -> float:
    """Training wall time of ``results``: the sum over the distinct tasks they were trained in (the runs of one
    task share its time), each counted once."""
    tasks = {r.record.task["key"]: r.record.wall_time_s for r in results}
    return float(sum(tasks.values()))


def half_gains(results: Results, by: Sequence[str]) -> list[dict[str, Any]]:
    """Whether each configuration was still learning when its schedule ended: the ``half_gain`` of
    :func:`curve_summary` per seed, and that of the best seed (the run the best-over-seeds statistic reads).

    Args:
        results: Runs, as :func:`~transformer_theory.chapters.registry.run_experiment` returns them.
        by: The tags that name a configuration.

    Returns:
        One row per configuration, in order of first appearance: the ``by`` values, ``seed_half_gain`` (seed ->
        its ``half_gain``) and ``half_gain`` (the best seed's; ``None`` if every seed diverged).
    """
    rows: dict[tuple, dict[str, Any]] = {}
    best: dict[tuple, tuple[float, Any]] = {}
    for r in results:
        key = tuple(repr(r.tags[name]) for name in by)
        row = rows.setdefault(key, {**{name: r.tags[name] for name in by}, "seed_half_gain": {}, "half_gain": None})
        row["seed_half_gain"][r.tags["seed"]] = curve_summary(r.record)["half_gain"]
        if r.best_nmse is not None and (key not in best or r.best_nmse < best[key][0]):
            best[key] = (r.best_nmse, r.tags["seed"])
            row["half_gain"] = row["seed_half_gain"][r.tags["seed"]]
    return list(rows.values())
