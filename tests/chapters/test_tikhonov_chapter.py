"""Chapter 05 as a chapter: its parameters are the notebook's, bad ones are refused, and its analysis recomputed from
the committed runs (read, never trained) gives the committed ``results/book/05_tikhonov.json``, key by key."""

from __future__ import annotations

import json
import math
from dataclasses import replace

import pytest

from conftest import ROOT
from transformer_theory.chapters import tikhonov_runs
from transformer_theory.chapters.tikhonov import DEFAULTS, TikhonovParameters, analyse, verdicts
from transformer_theory.pipeline.notebooks import notebook_parameters
from transformer_theory.storage.results import to_jsonable
from transformer_theory.training.context import Context
from transformer_theory.training.store import RunStore

pytestmark = pytest.mark.usefixtures("one_torch_thread")

COMMITTED = json.loads((ROOT / "results" / "book" / "05_tikhonov.json").read_text())
#: Values computed afresh from the float data rather than read from the runs, with their tolerance (relative,
#: absolute): their last bits depend on the CPU's BLAS kernels (the committed file came from another host).
ROUND_OFF = {"loss_at_theta_star": (0.0, 1e-20), "diagnostic_loss_bound": (1e-6, 0.0)}


def test_the_parameters_are_the_notebooks() -> None:
    assert notebook_parameters(ROOT / "notebooks" / "05_tikhonov.ipynb") == DEFAULTS


@pytest.mark.parametrize("change, match", [
    ({"N": 0}, "N"), ({"eps_list": []}, "eps_list"), ({"eps_list": [0.1, -1.0, 0.01]}, r"eps_list\[1\]"),
    ({"epochs_list": [10, 10]}, "epochs_list"), ({"failed_epochs": [1, 0, 1]}, r"failed_epochs\[1\]"),
    ({"diagnostic_epochs": [1]}, "diagnostic_epochs"), ({"seed": -1}, "seed"), ({"paper_rel_tol": 0}, "paper_rel_tol"),
])
def test_bad_parameters_are_refused(change: dict, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        TikhonovParameters(**{**DEFAULTS, **change})


def _same(name: str, ours, committed) -> bool:
    if name in ROUND_OFF:
        rel, abs_ = ROUND_OFF[name]
        return math.isclose(ours, committed, rel_tol=rel, abs_tol=abs_)
    return ours == committed


def test_the_analysis_of_the_committed_runs_gives_the_committed_results(tmp_path, monkeypatch) -> None:
    def no_training(config):
        pytest.fail(f"run {config} was trained instead of read from the committed store")

    monkeypatch.setattr(tikhonov_runs, "train_run", no_training)
    p = TikhonovParameters(**{name: COMMITTED["parameters"][name] for name in DEFAULTS})
    analysis = analyse(p, Context("book", RunStore(tmp_path / "build", [ROOT / "results" / "book" / "runs"])), n_workers=0)
    ours = to_jsonable(analysis.values())
    committed = {k: v for k, v in COMMITTED["values"].items() if k != "verdicts"}
    assert set(ours) == set(committed)
    assert [name for name in committed if not _same(name, ours[name], committed[name])] == []
    assert analysis.failures() == []
    assert [c.to_dict() for c in verdicts(analysis)] == COMMITTED["values"]["verdicts"]
    strict = replace(analysis, params=replace(p, paper_rel_tol=1e-9))
    assert [c.verdict for c in verdicts(strict)] == ["not observed", "reproduced"]
    assert not (tmp_path / "build").exists()  # nothing trained, nothing written


def test_a_failed_check_is_named(tmp_path, monkeypatch) -> None:
    """The analysis's checks can fail: a slope bound below the η = 0 run's slope (0.26) is reported."""
    monkeypatch.setattr(tikhonov_runs, "train_run", lambda config: pytest.fail("trained"))
    p = replace(TikhonovParameters(), diagnostic_slope_max=0.01)
    analysis = analyse(p, Context("book", RunStore(tmp_path, [ROOT / "results" / "book" / "runs"])), n_workers=0)
    assert analysis.failures() == ["the η = 0 run's slope is at most diagnostic_slope_max"]
