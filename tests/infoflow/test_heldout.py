"""The held-out suite: new configurations, trainable targets, and a criterion fixed before training."""

import json
import re

import numpy as np
import pytest

from transformer_theory.infoflow.efficiency import EFFICIENCY, observed_efficient
from transformer_theory.infoflow.heldout import (CRITERION, PREDICTIONS_FILE, TREES, agreement, configurations,
                                                 exponent_claim_holds, predictions, predictions_document, scoreboard)
from transformer_theory.infoflow import targets
from transformer_theory.infoflow.reference import experiment_configs
from transformer_theory.chapters.predictions import write_predictions
from transformer_theory.storage.paths import project_root

CONFIGS = configurations()


def test_at_least_twenty_configurations_from_every_family():
    assert len(CONFIGS) >= 20 and len({c.name for c in CONFIGS}) == len(CONFIGS)
    assert {c.family for c in CONFIGS} == {"nested and mixed reductions", "unevenly spread reductions",
                                           "pointer chases", "positions plus retrieval", "additive shifts",
                                           "E around T0 d"}
    verdicts = [r["predicted_efficient"] for r in predictions()]
    assert 8 <= sum(verdicts) <= len(verdicts) - 8  # both verdicts well represented
    assert any(c.model_sizes for c in CONFIGS)


def test_none_is_in_the_calibration_table():
    calibration = {(c.target_name, tuple(c.heads), c.embed_dim, c.seq_len, c.positional) for c in experiment_configs()}
    for c in CONFIGS:
        name = c.target().name
        for E in c.model_sizes or (c.embed_dim,):
            for T in c.seq_lens:
                assert (name, c.heads, E, T, c.positional) not in calibration, c.name


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: c.name)
def test_every_target_is_evaluable_and_cpu_trainable(config):
    tree = config.target()
    assert tree.input_dim <= 4 and len(config.heads) <= 3 and len(config.seq_lens) >= 2
    assert max(config.seq_lens) <= 32 and max(config.model_sizes or (config.embed_dim,)) <= 48
    for T in config.seq_lens:
        X, y = tree.sample(512, T, 0)
        assert X.shape == (512, T, 4) and y.shape == (512,)  # a scalar read out at CLS
        assert np.all(np.isfinite(y)) and np.std(y) > 0.05


def test_predictions_are_complete():
    for row in predictions():
        sizes = row["model_sizes"] or [row["E"]]
        assert [(p["E"], p["T"]) for p in row["predictions"]] == [(E, T) for E in sizes for T in row["seq_lens"]]
        for p in row["predictions"]:
            assert p["efficient"] == row["predicted_efficient"] and p["exponent"] >= 1.0
            assert p["regime"] and p["formula"] and (p["bottleneck"] == "") == p["efficient"]


def test_the_pointer_and_rank_predictions_use_doubling():
    by_name = {r["name"]: r for r in predictions()}
    assert by_name["k_hop(2) (1,1)"]["predicted_efficient"] and not by_name["k_hop(3) (1,1)"]["predicted_efficient"]
    assert by_name["kth_largest(3) (1,1)"]["predicted_efficient"]
    assert by_name["kth_largest(2) (2,)"]["predictions"][0]["regime"] == "theorem 2"
    size = by_name["max_retrieval(2) (1,) size"]["predictions"]
    assert [p["exponent"] for p in size if p["T"] == 32] == [7.0, 3.0, 2.0]  # T d/E - 1, floored at 2


def test_the_observation_criterion_is_the_books():
    """Chapter 12's committed criterion and the book's one criterion (chapters 07, 08, 10) are the same numbers."""
    assert {k: CRITERION[k] for k in EFFICIENCY} == EFFICIENCY == {"nmse_threshold": 1e-2, "max_growth": 4.0}
    t, g = CRITERION["nmse_threshold"], CRITERION["max_growth"]
    assert observed_efficient({8: 2e-3, 16: 3e-3})
    assert not observed_efficient({8: 2e-3, 16: 1.5 * t})           # above the threshold at the largest T
    assert not observed_efficient({8: 1e-4, 16: 1.01 * g * 1e-4})   # grows too much
    assert observed_efficient({16: 1e-3, 8: 5e-3})                   # the order of the keys does not matter
    with pytest.raises(ValueError, match="at least two sequence lengths"):
        observed_efficient({8: 1e-3})
    assert not observed_efficient({8: 1e-3, 16: float("inf")})      # every run at T = 16 diverged
    for bad in (float("nan"), 0.0, -1e-3, None):
        with pytest.raises(ValueError, match="best NMSE at T = 16"):
            observed_efficient({8: 1e-3, 16: bad})


def test_the_exponent_criterion():
    rows = [{"T": 32, "E": 16, "exponent": 7.0, "nmse": 0.3}, {"T": 32, "E": 32, "exponent": 3.0, "nmse": 0.1},
            {"T": 32, "E": 48, "exponent": 2.0, "nmse": 0.08}]
    assert exponent_claim_holds(rows) is True
    rows[2]["nmse"] = 0.2  # E = 48 predicted cheaper than E = 32 but observed worse
    assert exponent_claim_holds(rows) is False
    flat = [{"T": 16, "E": E, "exponent": 1.0, "nmse": v} for E, v in ((16, 0.1), (32, 0.01))]
    assert exponent_claim_holds(flat) is None  # no pair differs by exponent_gap: nothing claimed


def test_write_predictions_records_the_commit(tmp_path):
    path = write_predictions(tmp_path / "p.json")
    data = json.loads(path.read_text())
    assert data["configurations"] == json.loads(json.dumps(predictions()))
    assert set(data["git"]) == {"commit", "dirty"} and data["versions"]["numpy"]
    assert list(tmp_path.iterdir()) == [path]  # atomic: no temporary file left behind


def test_the_document_holds_the_criterion_before_training():
    doc = predictions_document()
    assert doc["criterion"] is CRITERION and "nmse" not in json.dumps(doc["configurations"])


def test_the_committed_predictions_are_what_the_library_computes():
    """The predictions were committed before training; a calculator change must not alter them silently."""
    data = json.loads((project_root() / PREDICTIONS_FILE).read_text())
    now = json.loads(json.dumps(predictions_document()))
    for key in ("description", "eps", "gamma", "criterion", "configurations"):
        assert data[key] == now[key], (
            f"{PREDICTIONS_FILE} is stale ({key}): the calculator now predicts otherwise. If no training results "
            f"were committed yet, rerun `python -m transformer_theory.chapters.predictions` and commit the file alone")
    assert data["git"]["dirty"] is False and re.fullmatch("[0-9a-f]{40}", data["git"]["commit"])


def test_configurations_name_their_targets():
    """A run names its target (a tree of TREES or a library target with arguments); the names resolve to the
    trees the predictions were made for."""
    for c in CONFIGS:
        assert (c.target_name in TREES) != (c.target_name in targets.__all__)
        assert c.target().name.startswith(c.target_name)
    assert set(TREES) <= {c.target_name for c in CONFIGS}


def _doc_rows(names):
    return [r for r in predictions() if r["name"] in names]


def test_the_scoreboard_applies_the_criterion_per_configuration():
    configs = _doc_rows({"k_hop(2) (1,1)", "k_hop(2) (2,)", "max_retrieval(2) (1,) size"})
    nmse = {("k_hop(2) (1,1)", 32, 8): 2e-3, ("k_hop(2) (1,1)", 32, 16): 4e-3,    # efficient, as predicted
            ("k_hop(2) (2,)", 32, 8): 1e-3, ("k_hop(2) (2,)", 32, 16): 3e-3}      # efficient, predicted not
    size = {16: 0.3, 32: 0.1, 48: 0.05}  # falls with E at both lengths: the exponent claim holds
    nmse.update({("max_retrieval(2) (1,) size", E, T): v * T / 16 for E, v in size.items() for T in (16, 32)})
    rows = scoreboard(configs, nmse)
    assert len(rows) == 2 + 2 + 6
    by = {(r["name"], r["E"], r["T"]): r for r in rows}
    assert by[("k_hop(2) (1,1)", 32, 16)]["agrees"] and by[("k_hop(2) (1,1)", 32, 16)]["observed_efficient"]
    assert not by[("k_hop(2) (2,)", 32, 8)]["agrees"]
    size_row = by[("max_retrieval(2) (1,) size", 16, 32)]
    assert size_row["exponent"] == 7.0 and size_row["exponent_claim"] is True and size_row["verdict_E"] == 32
    assert size_row["observed_efficient"] is False and size_row["agrees"]  # 0.2 at E = 32, T = 32
    assert agreement(rows) == {"n_configurations": 3, "n_agree": 2, "rate": 2 / 3, "disagreements": ["k_hop(2) (2,)"]}
    nmse[("max_retrieval(2) (1,) size", 48, 32)] = 0.5  # E = 48 now worse than E = 32: the claim fails
    rows = scoreboard(configs, nmse)
    assert agreement(rows)["disagreements"] == ["k_hop(2) (2,)", "max_retrieval(2) (1,) size"]
    nmse[("k_hop(2) (1,1)", 32, 16)] = None  # both seeds diverged at T = 16: recorded as such, judged inefficient
    rows = scoreboard(configs, nmse)
    assert {(r["T"], r["nmse"], r["observed_efficient"]) for r in rows if r["name"] == "k_hop(2) (1,1)"} == {
        (8, 2e-3, False), (16, None, False)}
    del nmse[("k_hop(2) (2,)", 32, 16)]
    with pytest.raises(ValueError, match=r"no NMSE for 'k_hop\(2\) \(2,\)' at E = 32, T = 16"):
        scoreboard(configs, nmse)
    with pytest.raises(ValueError, match="no scoreboard rows"):
        agreement([])


def test_the_scoreboard_judges_against_the_siblings_and_keeps_the_committed_verdict():
    """Issue 34: a configuration within the committed criterion but more than SIBLING_GAP above the best of its
    siblings (same target, same E) at the largest T is observed inefficient by the calibrated criterion; the row keeps
    the committed criterion's verdict (``absolute_efficient``, ``absolute_agrees``) beside it."""
    configs = _doc_rows({"shifted_max (2,)", "shifted_max (1,)"})
    nmse = {("shifted_max (2,)", 32, 8): 2e-5, ("shifted_max (2,)", 32, 16): 4e-5,
            ("shifted_max (1,)", 32, 8): 7e-3, ("shifted_max (1,)", 32, 16): 8e-3}
    by = {(r["name"], r["T"]): r for r in scoreboard(configs, nmse)}
    one = by[("shifted_max (1,)", 16)]
    assert one["sibling_nmse"] == 4e-5 and one["absolute_efficient"] and not one["observed_efficient"]
    assert one["agrees"] and not one["absolute_agrees"]  # predicted inefficient
    assert by[("shifted_max (2,)", 16)]["observed_efficient"] and by[("shifted_max (2,)", 16)]["agrees"]
    rows = scoreboard(configs, nmse)
    assert agreement(rows)["n_agree"] == 2 and agreement(rows, absolute=True)["disagreements"] == ["shifted_max (1,)"]
    nmse[("shifted_max (2,)", 32, 16)] = 1e-3  # within 10x: the calibration changes nothing
    assert scoreboard(configs, nmse, max_gap=10.0)[3]["observed_efficient"] is True
