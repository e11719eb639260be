"""A curriculum over the target's terms (RunConfig.term_stages): the stages' targets, their standardisation and the
run keys."""

from __future__ import annotations

import numpy as np
import pytest

from transformer_theory.training import RunConfig, Task, TrainOptions, train_task
from transformer_theory.training.data import RunData
from tiny_runs import QUIET, restore_threads, tiny_run  # noqa: F401 (fixture)


def test_each_stage_trains_on_the_leading_terms_standardised_on_their_own() -> None:
    run = tiny_run(target_args={"D": 3}, term_stages=(10, 20), steps=30)
    data = RunData(run)
    tree = run.tree()
    for step, k in ((0, 1), (9, 1), (10, 2), (19, 2), (20, 3), (29, 3)):
        state = data.state()
        X, y = data.batch(step)
        expected = tree.leading_terms(k)(X.astype(float))
        mean, std = data.scales[k - 1]
        # standardised with the stage's own reference statistics, which differ from stage to stage
        assert np.allclose(y[:, 0], (expected - mean[0]) / std[0], atol=1e-5)
        data.load_state(state)
    assert len({round(float(s[1][0]), 6) for s in data.scales}) == 3
    # validation always reads the full target
    assert np.allclose(data.validation.y[:, 0], tree(data.validation.X))


def test_a_stage_run_trains_and_validates_on_the_full_target() -> None:
    record = train_task(Task((tiny_run(target_args={"D": 2}, term_stages=(30,), steps=60),)),
                        options=TrainOptions(**QUIET))[0]
    assert record["config"]["term_stages"] == [30] and record["best_nmse"] is not None


@pytest.mark.parametrize("stages, message", [
    ((30, 20), "term_stages must increase strictly"),
    ((60,), "end before steps = 60"),
    ((10, 20), "2 stages before the full target need a target that sums more terms than that; pairwise_max"),
    ("10", "term_stages must be a list of steps"),
    ((0,), "term_stages"),
])
def test_bad_stages_are_refused_naming_the_problem(stages, message) -> None:
    with pytest.raises(ValueError, match=message):
        tiny_run(term_stages=stages)


def test_the_new_settings_leave_the_old_keys_alone() -> None:
    plain = tiny_run()
    assert not {"init", "init_sharpness", "term_stages"} & set(plain.to_dict())
    staged = tiny_run(target_args={"D": 3}, term_stages=(20,))
    assert staged.key != tiny_run(target_args={"D": 3}).key
    assert RunConfig.from_dict(staged.to_dict()) == staged and RunConfig.from_dict(plain.to_dict()) == plain


def test_leading_terms_of_a_tree() -> None:
    from transformer_theory.infoflow.targets import pairwise_max
    tree = pairwise_max(D=3)
    X = tree.sample_inputs(50, 6, 0)
    assert np.allclose(tree.leading_terms(3)(X), tree(X))
    assert np.allclose(tree.leading_terms(2)(X), pairwise_max(D=2)(X))  # the matrices are drawn in order
    with pytest.raises(ValueError, match=r"k must be an integer in 1..3"):
        tree.leading_terms(4)
