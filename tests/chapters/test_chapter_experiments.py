"""The run lists, criteria and measurements of chapters 08 (Theorem 2, the probe of InfoFlow §4.3) and 09 (the
cost law, the CLS attention of §4.4)."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from conftest import ROOT
from transformer_theory.models import Transformer, TransformerConfig
from transformer_theory.chapters import aggregation, experiment, max_position
from transformer_theory.training import plan_tasks


def test_max_position_runs() -> None:
    runs = experiment("08_max_position_retrieval").runs()
    parts = {}
    for r in runs:
        parts.setdefault(r.tags["part"], []).append(r)
    assert {(r.tags["k"], r.config.model.heads) for r in parts["one_layer"]} == {(1, (1,)), (2, (1,)), (3, (1,))}
    assert {(r.tags["k"], r.config.model.heads) for r in parts["two_layer"]} == {(2, (1, 1))}
    assert all(r.config.target == "kth_largest" and r.config.train_size is None for r in parts["one_layer"])
    assert {tuple(r.tags["heads"]) for r in parts["probe"]} == {(2, 2), (1, 2), (2, 1), (1, 1)}
    assert all(r.config.target == "pairwise_max" and r.config.model.width == 32 for r in parts["probe"])
    # per T: the one-layer k's and seeds train together, the two-layer runs in a task of their own
    sizes = sorted(len(t.runs) for t in plan_tasks([r.config for r in runs]))
    assert sizes == [2, 2, 2, 2, 4, 6, 6, 6, 6]


def test_aggregation_runs() -> None:
    runs = experiment("09_aggregation_cost").runs()
    attention = [r for r in runs if r.tags["part"] == "attention"]
    assert len(attention) == 2 and all(r.config.model.max_len == 10 and r.config.model.readout_dim == 2
                                       for r in attention)
    assert all(r.config.target_args == {"P": [1, 2, 3], "d": 2} for r in attention)
    cost = [r for r in runs if r.tags["part"] == "cost_law"]
    assert {(r.tags["T0"], r.tags["width"]) for r in cost} == {(T0, w) for T0 in (1, 2, 4, 8, 16)
                                                                for w in (4, 8, 16, 32, 64)}
    for r in cost:
        m = r.config.model
        assert m.width == 4 and m.ffn_width == m.encoder_width == r.tags["width"] and m.heads == (1,)
    params = [aggregation.decoder_parameters(aggregation.cost_model(aggregation.DEFAULTS, w)) for w in (4, 64)]
    # encoder 2->N->4, FFN 4->N->4, readout 4->1: (2N + N + 4N + 4) + (4N + N + 4N + 4) + 5
    assert params == [16 * 4 + 13, 16 * 64 + 13]


@pytest.mark.parametrize("module", [max_position, aggregation])
def test_committed_predictions_are_what_the_library_computes(module) -> None:
    """The predictions committed before training cannot go stale silently."""
    committed = json.loads((ROOT / module.PREDICTIONS_FILE).read_text())
    expected = json.loads(json.dumps(module.predictions_document(module.DEFAULTS)))
    assert {k: committed[k] for k in expected} == expected
    assert len(committed["git"]["commit"]) == 40


def test_max_position_criterion() -> None:
    good_one = {1: {8: 0.01, 64: 0.02}, 2: {8: 0.2, 64: 0.6}, 3: {8: 0.3, 64: 0.7}}
    judged = max_position.judge(good_one, {8: 0.03, 64: 0.05}, 2)
    assert judged == {"top1_stays_low": True, "kth_degrades": {2: True, 3: True}, "two_layer_observed_efficient": True}
    assert not max_position.judge(good_one, {8: 0.01, 64: 0.05}, 2)["two_layer_observed_efficient"]  # grew 5x
    assert not max_position.judge(good_one, {8: 0.2, 64: 0.2}, 2)["two_layer_observed_efficient"]  # above 0.1
    bad_top = {**good_one, 1: {8: 0.01, 64: 0.06}}
    judged = max_position.judge(bad_top, {8: 0.03, 64: 0.05}, 2)
    assert not judged["top1_stays_low"] and judged["kth_degrades"] == {2: True, 3: True}
    flat = {**good_one, 3: {8: 0.7, 64: 0.7}}
    assert max_position.judge(flat, {8: 0.03, 64: 0.05}, 2)["kth_degrades"] == {2: True, 3: False}
    with pytest.raises(ValueError, match="largest T"):
        max_position.judge(good_one, {8: 0.03, 32: 0.05}, 2)
    with pytest.raises(ValueError, match="k = 1"):
        max_position.judge({2: good_one[2]}, {8: 0.03, 64: 0.05}, 2)


def test_probe_criterion() -> None:
    row = lambda heads, a, s: {"heads": heads, "argmax_ratio": a, "second_ratio": s}  # noqa: E731
    assert max_position.probe_observed([row([2, 2], 0.3, 1.0), row([2, 2], 0.95, 0.99), row([1, 1], 0.8, 0.95)])
    assert not max_position.probe_observed([row([2, 2], 0.3, 1.0), row([1, 1], 0.9, 1.0)])  # no head learned
    assert not max_position.probe_observed([row([2, 2], 0.3, 0.5)])  # the second-largest became readable


def retrieval_model(scale: float) -> Transformer:
    """One head, no encoder, no residual: the state after attention is the softmax average of the tokens with
    scores ``scale * x(t).x(s)``: with a large scale, the token of the largest score."""
    config = TransformerConfig(d=3, heads=(1, 1), head_dim=3, ffn_width=0, rho=0.0, cls_token=True, readout_dim=1,
                               dtype="float64")
    torch.manual_seed(0)  # the CLS token (a key too) and the unused second block
    model = Transformer(config)
    with torch.no_grad():
        block = model.blocks[0]
        block.to_q.weight.copy_(scale * torch.eye(3))
        for layer in (block.to_k, block.to_v, block.out):
            layer.weight.copy_(torch.eye(3))
    return model


def test_probe_reads_the_retrieved_token_only() -> None:
    X = np.random.default_rng(0).normal(size=(400, 6, 3))
    sharp = max_position.retrieval_probe(retrieval_model(200.0), X)
    assert len(sharp) == 1 and sharp[0]["argmax_error"] < 1e-2  # the state is x(s1(t)) but at near ties
    assert sharp[0]["second_error"] > 0.3
    blurred = max_position.retrieval_probe(retrieval_model(0.01), X)  # nearly uniform attention
    assert blurred[0]["argmax_error"] > 0.3
    ratios = max_position.probe_ratios(retrieval_model(200.0), retrieval_model(0.01), X)
    assert ratios[0]["argmax_ratio"] == sharp[0]["argmax_error"] / blurred[0]["argmax_error"]
    with pytest.raises(ValueError, match="shape"):
        max_position.retrieval_probe(retrieval_model(1.0), X[..., :2])
    with pytest.raises(ValueError, match="too few"):
        max_position.retrieval_probe(retrieval_model(1.0), X[:1])


def test_cls_attention_and_its_criterion() -> None:
    torch.manual_seed(0)
    model = Transformer(aggregation.attention_model(aggregation.DEFAULTS)).double()
    X = np.random.default_rng(1).normal(size=(16, 10, 2))
    w = aggregation.cls_attention(model, X)
    assert w.shape == (16, 1, 11)
    np.testing.assert_allclose(w.sum(-1), 1.0, atol=1e-12)
    mean = np.r_[[0.3, 0.33, 0.3], np.full(7, 0.01)]
    assert aggregation.attention_observed(mean, np.full(10, 0.01), [1, 2, 3])
    assert not aggregation.attention_observed(mean, np.r_[np.full(9, 0.01), 0.2], [1, 2, 3])  # content dependent
    assert not aggregation.attention_observed(np.r_[[0.5, 0.2, 0.2], np.full(7, 0.01)], np.full(10, 0.01), [1, 2, 3])


def test_cost_law_criterion() -> None:
    params = {4: 100, 16: 400, 64: 1600}
    exponent = {1: 2.0, 2: 2.0, 8: 3.0}
    nmse = {1: {4: 1e-1, 16: 2.5e-2, 64: 6.25e-3}, 2: {4: 2e-1, 16: 0.1, 64: 0.05}, 8: {4: 0.5, 16: 0.45, 64: 0.4}}
    judged = aggregation.cost_law_observed(nmse, params, exponent)
    assert judged["slopes"][1] == pytest.approx(-1.0) and judged["observed"]
    assert sorted(map(tuple, judged["pairs"])) == [(1, 8), (2, 8)]  # T0 = 1 and 2 share an exponent: not compared
    steep = {**nmse, 8: {4: 0.9, 16: 0.2, 64: 0.1}}
    judged = aggregation.cost_law_observed(steep, params, exponent)
    assert judged["nmse_ordered"] and not judged["slopes_ordered"] and not judged["observed"]
