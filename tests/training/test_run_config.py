"""Run configurations, their keys and batch signatures, the learning-rate schedule, and the data of a run."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from tiny_runs import tiny_run
from transformer_theory.infoflow.trees import Linear, Reduction, Tree
from transformer_theory.training import RunConfig, register_targets
from transformer_theory.training import config as config_module
from transformer_theory.training import registry
from transformer_theory.training.data import RunData
from transformer_theory.training.schedule import learning_rate


@pytest.mark.parametrize("changes, match", [
    ({"target": "max_of_everything"}, "target must be one of"),
    ({"seq_len": 0}, "seq_len"),
    ({"steps": 2.5}, "steps"),
    ({"lr": -1.0}, "lr"),
    ({"warmup": -1}, "warmup"),
    ({"min_lr_ratio": 1.5}, "min_lr_ratio"),
    ({"betas": (0.9,)}, "betas"),
    ({"train_size": 16}, "train_size"),
    ({"seed": -1}, "seed"),
    ({"target_args": [("D", 2)]}, "target_args"),
])
def test_bad_values_are_rejected(changes, match) -> None:
    with pytest.raises(ValueError, match=match):
        tiny_run(**changes)


def test_key_covers_every_field_and_the_engine_version(monkeypatch) -> None:
    run = tiny_run()
    assert run.key == tiny_run().key and RunConfig.from_dict(run.to_dict()) == run
    variants = [tiny_run(seed=1), tiny_run(lr=1e-3), tiny_run(steps=61), tiny_run(target_args={"D": 3}),
                tiny_run(heads=(1, 2)), tiny_run(train_size=64), replace(run, model=replace(run.model, ffn_width=8))]
    assert len({v.key for v in variants} | {run.key}) == len(variants) + 1
    before = run.key
    monkeypatch.setattr(config_module, "ENGINE_VERSION", config_module.ENGINE_VERSION + 1)
    assert run.key != before


def test_batch_signature_ignores_seed_target_parameters_and_heads() -> None:
    run = tiny_run()
    same = [tiny_run(seed=3), tiny_run(heads=(1, 2)), tiny_run(target_args={"D": 3})]
    assert all(s.batch_signature() == run.batch_signature() for s in same)
    assert tiny_run(steps=61).batch_signature() != run.batch_signature()
    assert tiny_run(heads=(2,)).batch_signature() != run.batch_signature()  # another depth


def test_schedule_warms_up_then_follows_a_half_cosine() -> None:
    run = tiny_run(steps=1000, warmup=100, lr=1e-2, min_lr_ratio=0.1)
    rates = [learning_rate(run, s) for s in range(1000)]
    assert rates[0] == pytest.approx(1e-4) and rates[99] == pytest.approx(1e-2)
    assert np.all(np.diff(rates[:100]) > 0) and np.all(np.diff(rates[100:]) < 0)
    assert rates[-1] == pytest.approx(1e-3)
    assert learning_rate(run, 550) == pytest.approx(1e-3 + 9e-3 * 0.5 * (1 + math.cos(math.pi * 450 / 899)))


def test_data_are_standardised_and_nmse_is_relative_to_the_variance() -> None:
    data = RunData(tiny_run(val_size=2048, batch_size=2048))
    _, y = data.batch()
    assert abs(y.mean()) < 0.1 and abs(y.std() - 1) < 0.1
    v = data.validation
    assert v.nmse(v.y) == 0.0
    assert v.nmse(np.full_like(v.y, v.y.mean())) == pytest.approx(1.0)
    assert v.nmse(data.unstandardise((v.y - data.mean) / data.std)) == pytest.approx(0.0, abs=1e-20)


def test_fixed_training_set_is_shuffled_per_epoch_and_its_stream_restorable() -> None:
    data = RunData(tiny_run(train_size=96, batch_size=32))
    first_epoch = np.concatenate([data.batch()[0] for _ in range(3)])
    second_epoch = np.concatenate([data.batch()[0] for _ in range(3)])
    key = lambda X: sorted(map(tuple, X.reshape(len(X), -1).round(6)))  # noqa: E731
    assert key(first_epoch) == key(second_epoch) and not np.array_equal(first_epoch, second_epoch)
    state = data.state()
    ahead = [data.batch()[1] for _ in range(4)]
    data.load_state(state)
    assert all(np.array_equal(a, data.batch()[1]) for a in ahead)


def test_data_do_not_depend_on_other_runs_and_check_the_model() -> None:
    a, b = RunData(tiny_run(seed=5)), RunData(tiny_run(seed=5, heads=(1, 1)))
    assert np.array_equal(a.batch()[0], b.batch()[0]) and np.array_equal(a.validation.X, b.validation.X)
    assert not np.array_equal(a.validation.X, RunData(tiny_run(seed=6)).validation.X)
    with pytest.raises(ValueError, match="token dimension"):
        RunData(tiny_run(target_args={"D": 2, "d": 3}))


def test_a_run_names_a_registered_target(monkeypatch) -> None:
    monkeypatch.setattr(registry, "_TARGETS", dict(registry._TARGETS))  # leave the registry as it was
    with pytest.raises(ValueError, match="target must be one of .* got 'doubled_max'"):
        tiny_run(target="doubled_max", target_args={})

    def doubled_max() -> Tree:
        return Tree([Reduction("max", "t", 2.0 * Linear("t", np.ones(4)))], input_dim=4, name="doubled_max")

    register_targets({"doubled_max": doubled_max})
    register_targets({"doubled_max": doubled_max})  # the same function again: harmless
    assert tiny_run(target="doubled_max", target_args={}).tree().name == "doubled_max"
    with pytest.raises(ValueError, match="'doubled_max' is already registered"):
        register_targets({"doubled_max": lambda: doubled_max()})
    with pytest.raises(ValueError, match="identifier"):
        register_targets({"doubled max": doubled_max})
